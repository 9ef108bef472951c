// The three CRDs on a real kube-apiserver, installed from the committed crds/ files: they reach
// Established, the stored schema is the generated one, every example and every upstream-shaped
// object is stored as written (plus the documented defaults), and every invalid object in the
// table is refused with the message a user can act on.
import * as fs from 'fs';
import * as path from 'path';
import { parse } from 'yaml';
import {
  API_GROUP,
  API_VERSION,
  applyDefaults,
  crdFileName,
  kindDefinition,
  KIND_DEFINITIONS,
  rootSchema,
} from '../../src/api';
import type { JsonSchema, KindDefinition } from '../../src/api';
import { applyObject, createNamespace, deleteObject, getObject, installCRDs, rest, testFieldManager } from '../support/cluster';
import { repoRoot } from '../support/tools';
import { ACCEPTED_HOSTNAMES, INVALID_CASES, OBJECTS_AT_BOUNDS, passthroughModel, UPSTREAM_OBJECTS, UPSTREAM_STATUS } from './crds-cases';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const namespace = `crds-${Date.now().toString(36)}`;

/** `kubectl get` as a Table: the column names the API server prints for a collection. */
async function printedColumns(urlPath: string): Promise<string[]> {
  const table = await rest().request<Obj>('GET', urlPath, { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
  return (table.columnDefinitions as Array<{ name: string }>).map((c) => c.name);
}

function resourcePath(kind: string, name?: string): string {
  const def = kindDefinition(kind)!;
  return `/apis/${API_GROUP}/${API_VERSION}/namespaces/${namespace}/${def.plural}${name ? `/${name}` : ''}`;
}

/** The committed CRD file of a kind, parsed (the staleness test keeps it equal to the source). */
function committedCrd(def: KindDefinition): Obj {
  return parse(fs.readFileSync(path.join(repoRoot, 'crds', crdFileName(def)), 'utf8')) as Obj;
}

function inNamespace(obj: Obj): Obj {
  return { ...obj, metadata: { ...obj.metadata, namespace } };
}

/** The message of a refused request, from the client's error body. */
function refusal(err: unknown): string {
  const body = (err as { body?: unknown }).body;
  if (typeof body === 'string') {
    try {
      return String((JSON.parse(body) as Obj).message);
    } catch {
      return body;
    }
  }
  return String((body as Obj | undefined)?.message ?? (err as Error).message);
}

async function refusedWith(obj: Obj, dryRun: boolean): Promise<string> {
  try {
    await applyObject(inNamespace(obj), { dryRun });
  } catch (err) {
    return refusal(err);
  }
  return '<accepted>';
}

/** Paths (a.b[0].c) and values present in `after` but not in `before`: what defaulting added. */
function addedPaths(before: unknown, after: unknown, at = ''): Record<string, unknown> {
  if (before === undefined) return { [at]: after };
  if (typeof after !== 'object' || after === null) return {};
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(after as Obj)) {
    const child = Array.isArray(after) ? `${at}[${key}]` : at ? `${at}.${key}` : key;
    Object.assign(out, addedPaths((before as Obj)[key], value, child));
  }
  return out;
}

/** `dir` under examples/, or `v1alpha1/<kind>` for docs/v1alpha1-examples/<kind>. */
function exampleFiles(dir: string): Array<{ file: string; object: Obj }> {
  const relative = dir.startsWith('v1alpha1/') ? path.join('docs', 'v1alpha1-examples', dir.slice('v1alpha1/'.length)) : path.join('examples', dir);
  const base = path.join(repoRoot, relative);
  return fs
    .readdirSync(base)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => ({ file: `${relative}/${f}`, object: parse(fs.readFileSync(path.join(base, f), 'utf8')) as Obj }));
}

beforeAll(async () => {
  await installCRDs(KIND_DEFINITIONS.map((def) => path.join(repoRoot, 'crds', crdFileName(def))));
  await createNamespace(namespace);
});

afterAll(async () => {
  await deleteObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
});

describe('the CRDs', () => {
  it.each(KIND_DEFINITIONS.map((d) => [d.kind, d] as const))('%s is Established and stores the generated schema unchanged', async (_kind, def) => {
    const crd = committedCrd(def);
    const stored = await rest().request<Obj>('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name as string}`);
    expect(stored.status.conditions).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'Established', status: 'True' })]));
    // Read as raw JSON: a schema that lost enum, default or CEL rules on the way would show here.
    expect(stored.spec.versions[0].schema).toEqual(crd.spec.versions[0].schema);
    expect(stored.spec.names).toEqual(crd.spec.names);
  });

  it('are each under 256 KiB (sizes printed)', () => {
    const sizes = KIND_DEFINITIONS.map((def) => {
      const file = path.join('crds', crdFileName(def));
      return { file, bytes: fs.statSync(path.join(repoRoot, file)).size };
    });
    console.log(`CRD sizes: ${sizes.map((s) => `${s.file} ${s.bytes} B (${(s.bytes / 1024).toFixed(1)} KiB)`).join(', ')}`);
    for (const s of sizes) expect(s.bytes).toBeLessThan(256 * 1024);
  });

  it('print Phase, Programmed (whether the gateway serves the model) and Age (and Model or Provider) in kubectl get', async () => {
    await applyObject(inNamespace(passthroughModel('columns')));
    expect(await printedColumns(resourcePath('PassthroughModel'))).toEqual(['Name', 'Phase', 'Backend', 'Provider', 'Programmed', 'Age']);
    expect(await printedColumns(resourcePath('LLMModel'))).toEqual(['Name', 'Phase', 'Model', 'Provider', 'Programmed', 'Replicas', 'Age']);
  });
});

/** The v1alpha1 examples carry the names of the v1beta1 ones: keep them apart. */
function ownObject(dir: string, object: Obj): Obj {
  return dir.startsWith('v1alpha1/') ? { ...object, metadata: { ...object.metadata, name: `${object.metadata.name as string}-v1alpha1` } } : object;
}

describe.each(['llmmodel', 'passthroughmodel', 'agentdeployment', 'v1alpha1/llmmodel', 'v1alpha1/passthroughmodel', 'v1alpha1/agentdeployment'])('examples/%s', (dir) => {
  it.each(exampleFiles(dir).map((e) => [e.file, e] as const))('%s is stored as written plus the schema defaults', async (_file, example) => {
    const def = kindDefinition(example.object.kind as string)!;
    const object = ownObject(dir, example.object);
    const stored = await applyObject<Obj>(inNamespace(object));
    // Each version's own schema defaults (v1beta1 for examples/<kind>/, v1alpha1 for docs/v1alpha1-examples/).
    const schema = String(example.object.apiVersion).endsWith('/v1beta1') ? def.v1beta1Schema! : def.schema;
    const expected = applyDefaults(rootSchema(schema), object);
    expect(stored.spec).toEqual(expected.spec);
    const read = await getObject<Obj>({ apiVersion: stored.apiVersion, kind: stored.kind, metadata: { name: stored.metadata.name, namespace } });
    expect(read?.spec).toEqual(stored.spec);
    console.log(`${example.file}: defaults added by the API server: ${JSON.stringify(addedPaths(example.object.spec, read?.spec, 'spec'))}`);
  });
});

describe('defaults the API server applies', () => {
  it.each<[string, string, Record<string, unknown>]>([
    ['examples/llmmodel/vllm-huggingface.yaml', 'llmmodel', {
      'spec.model.storage.type': 'pvc',
      'spec.resources.gpu.type': 'nvidia',
      'spec.serving.replicas': 1,
      'spec.serving.dataParallelism': 1,
      'spec.serving.updateStrategy': 'Recreate',
    }],
    ['examples/llmmodel/kaito.yaml', 'llmmodel', { 'spec.resources.gpu.type': 'nvidia' }],
    // v1beta1 has no path-prefix default (P3 in docs/api-versions.md).
    ['examples/passthroughmodel/openai.yaml', 'passthroughmodel', { 'spec.provider.port': 443 }],
    ['examples/passthroughmodel/bedrock.yaml', 'passthroughmodel', { 'spec.provider.port': 443 }],
    ['examples/agentdeployment/external-api.yaml', 'agentdeployment', { 'spec.lifecycle': 'deployment', 'spec.port': 8080, 'spec.model.externalAPI.credentialsRef.key': 'apiKey' }],
    // v1alpha1, as its clients still write it.
    ['docs/v1alpha1-examples/llmmodel/vllm-huggingface.yaml', 'v1alpha1/llmmodel', {
      'spec.model.storage.type': 'pvc',
      'spec.resources.gpu.type': 'nvidia',
      'spec.serving.replicas': 1,
      'spec.serving.dataParallelism': 1,
      'spec.serving.updateStrategy': 'Recreate',
    }],
    ['docs/v1alpha1-examples/llmmodel/kaito.yaml', 'v1alpha1/llmmodel', { 'spec.resources.gpu.type': 'nvidia' }],
    ['docs/v1alpha1-examples/passthroughmodel/openai.yaml', 'v1alpha1/passthroughmodel', { 'spec.provider.port': 443, 'spec.provider.schemaVersion': 'v1' }],
    ['docs/v1alpha1-examples/passthroughmodel/bedrock.yaml', 'v1alpha1/passthroughmodel', { 'spec.provider.port': 443, 'spec.provider.schemaVersion': 'v1' }],
    ['docs/v1alpha1-examples/agentdeployment/model-ref.yaml', 'v1alpha1/agentdeployment', { 'spec.lifecycle': 'deployment', 'spec.observability.otlp.protocol': 'grpc' }],
    ['docs/v1alpha1-examples/agentdeployment/external-api.yaml', 'v1alpha1/agentdeployment', { 'spec.lifecycle': 'deployment', 'spec.port': 8080, 'spec.model.externalAPI.credentialsRef.key': 'apiKey' }],
  ])('%s gets exactly the documented defaults', async (file, dir, defaults) => {
    const example = exampleFiles(dir).find((e) => e.file === file)!;
    const stored = await applyObject<Obj>(inNamespace(ownObject(dir, example.object)));
    expect(addedPaths(example.object.spec, stored.spec, 'spec')).toEqual(defaults);
  });
});

describe('invalid objects', () => {
  it('the table has at least 40 cases', () => {
    expect(INVALID_CASES.length).toBeGreaterThanOrEqual(40);
  });

  it.each(INVALID_CASES.filter((c) => !c.by).map((c) => [c.name, c] as const))('refuses %s', async (_name, c) => {
    if (c.before) await applyObject(inNamespace(c.before));
    const message = await refusedWith(c.object, !c.before);
    for (const expected of c.expect) expect(message).toContain(expected);
  });

  // The admission differential test refuses these through the real webhook, with the same message.
  it.each(INVALID_CASES.filter((c) => c.by === 'webhook').map((c) => [c.name, c] as const))('leaves %s to the webhook (the CRD alone admits it)', async (_name, c) => {
    if (c.before) await applyObject(inNamespace(c.before));
    expect(await refusedWith(c.object, !c.before)).toBe('<accepted>');
  });

  it.each(OBJECTS_AT_BOUNDS.map((o) => [o.name, o.object] as const))('accepts %s (CEL stays within its cost budget)', async (_name, object) => {
    expect(await refusedWith(object, true)).toBe('<accepted>');
  });

  it.each(ACCEPTED_HOSTNAMES)('accepts hostname %j, which the operator normalises', async (hostname) => {
    expect(await refusedWith(passthroughModel('normalised', { provider: { hostname } }), true)).toBe('<accepted>');
  });
});

describe('compatibility with the upstream Nebari pack (llm.nebari.dev/v1alpha1)', () => {
  it.each(UPSTREAM_OBJECTS.map((u) => [u.name, u.object] as const))('stores %s without pruning any field', async (_name, object) => {
    const stored = await applyObject<Obj>(inNamespace(object));
    const def = kindDefinition(object.kind as string)!;
    expect(stored.spec).toEqual(applyDefaults(rootSchema(def.schema) as JsonSchema, object).spec);
  });

  it.each(Object.entries(UPSTREAM_STATUS))('stores the upstream %s status through the status subresource', async (kind, status) => {
    const name = kind === 'LLMModel' ? 'up-full' : 'up-openrouter';
    const source = UPSTREAM_OBJECTS.find((u) => (u.object.metadata as Obj).name === name)!.object;
    await applyObject(inNamespace(source));
    const statusPatch = { apiVersion: source.apiVersion as string, kind, metadata: { name, namespace }, status };
    const written = await rest().apply(statusPatch, { fieldManager: testFieldManager, subresource: 'status' });
    expect(written.status).toEqual(status);
  });

  it('lets upstream objects change the fields upstream lets change', async () => {
    const source = UPSTREAM_OBJECTS.find((u) => (u.object.metadata as Obj).name === 'up-full')!.object as Obj;
    await applyObject(inNamespace(source));
    const changed = {
      ...source,
      spec: {
        ...source.spec,
        access: { public: true },
        serving: { ...source.spec.serving, replicas: 2, vllmArgs: ['--max-model-len=8192'] },
        endpoints: { ...source.spec.endpoints, internal: { enabled: true }, requestTimeout: '600s' },
        model: { ...source.spec.model, revision: 'main', storage: { ...source.spec.model.storage, size: '300Gi' } },
      },
    };
    const stored = await applyObject<Obj>(inNamespace(changed));
    expect(stored.spec.serving.replicas).toBe(2);
    expect(stored.spec.model.storage.size).toBe('300Gi');
    expect(stored.spec.access).toEqual({ public: true });
  });
});
