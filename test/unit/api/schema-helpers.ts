// Helpers shared by the API unit tests: walk a CRD schema by field path, read the examples.
import * as fs from 'fs';
import * as path from 'path';
import { parse } from 'yaml';
import type { JsonSchema } from '../../../src/api';

export const repoRoot = path.resolve(__dirname, '..', '..', '..');

/** The schema node at a dotted path (`spec.model.name`, `spec.advanced.vllm.tolerations[].key`). */
export function schemaAt(root: JsonSchema, fieldPath: string): JsonSchema | undefined {
  let node: JsonSchema | undefined = root;
  for (const part of fieldPath.split('.')) {
    const isList = part.endsWith('[]');
    const name = isList ? part.slice(0, -2) : part;
    node = (node?.properties as Record<string, JsonSchema> | undefined)?.[name];
    if (isList) node = node?.items as JsonSchema | undefined;
  }
  return node;
}

/** Every node of a schema with its path, depth first. */
export function walk(schema: JsonSchema, visit: (node: JsonSchema, at: string) => void, at = ''): void {
  visit(schema, at);
  for (const [name, child] of Object.entries((schema.properties as Record<string, JsonSchema>) ?? {})) walk(child, visit, at ? `${at}.${name}` : name);
  if (typeof schema.items === 'object' && schema.items) walk(schema.items as JsonSchema, visit, `${at}[]`);
  if (typeof schema.additionalProperties === 'object' && schema.additionalProperties) walk(schema.additionalProperties as JsonSchema, visit, `${at}{}`);
}

export interface Example {
  file: string;
  object: { apiVersion: string; kind: string; metadata: { name: string }; spec: Record<string, unknown> };
}

/** The sample objects under examples/<dir>/ (v1beta1), or docs/v1alpha1-examples/<dir>/ (kept for reference). */
export function examples(dir: 'llmmodel' | 'passthroughmodel' | 'agentdeployment', version: 'v1beta1' | 'v1alpha1' = 'v1beta1'): Example[] {
  const relative = version === 'v1beta1' ? path.join('examples', dir) : path.join('docs', 'v1alpha1-examples', dir);
  const base = path.join(repoRoot, relative);
  return fs
    .readdirSync(base)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => ({ file: `${relative}/${f}`, object: parse(fs.readFileSync(path.join(base, f), 'utf8')) }));
}
