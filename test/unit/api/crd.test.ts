// The CRD builder: the sanitiser, the structural checks and the generated CRD objects and files.
import { Type } from '@sinclair/typebox';
import { parse } from 'yaml';
import {
  API_CATEGORY,
  API_GROUP,
  conversionSpec,
  crdFiles,
  crdObject,
  crdObjects,
  KIND_DEFINITIONS,
  rootSchema,
  structuralProblems,
  toStructural,
} from '../../../src/api';
import type { CelRule, JsonSchema } from '../../../src/api';
import { walk } from './schema-helpers';

describe('toStructural', () => {
  it('turns const into a one-value enum and drops ids and additionalProperties: false', () => {
    const schema = Type.Object(
      { mode: Type.Literal('fixed', { description: 'a literal' }) },
      { $id: 'X', additionalProperties: false, description: 'root' },
    );
    expect(toStructural(schema)).toEqual({
      type: 'object',
      description: 'root',
      required: ['mode'],
      properties: { mode: { type: 'string', enum: ['fixed'], description: 'a literal' } },
    });
  });

  it('refuses a union of literals (anyOf without int-or-string), naming the field', () => {
    const schema = Type.Object({ mode: Type.Union([Type.Literal('a'), Type.Literal('b')], { description: 'd' }) }, { description: 'root' });
    expect(() => toStructural(schema)).toThrow('.mode: anyOf is allowed only with x-kubernetes-int-or-string');
  });

  it('refuses a Record (patternProperties) and a property without description', () => {
    const schema = Type.Object({ labels: Type.Record(Type.String(), Type.String()) }, { description: 'root' });
    expect(() => toStructural(schema)).toThrow(/\.labels: description is missing[\s\S]*\.labels: "patternProperties" is not allowed/);
  });
});

describe('structuralProblems', () => {
  it.each<[string, JsonSchema, string]>([
    ['$ref', { type: 'object', properties: { a: { $ref: '#/x', description: 'd' } } }, '.a: "$ref" is not allowed'],
    ['a missing type', { type: 'object', properties: { a: { description: 'd' } } }, '.a: type is missing'],
    ['a type list', { type: 'object', properties: { a: { type: ['string', 'null'], description: 'd' } } }, '.a: type must be a single string'],
    ['an array without items', { type: 'object', properties: { a: { type: 'array', description: 'd' } } }, '.a: an array needs items'],
    ['nullable', { type: 'object', properties: { a: { type: 'string', nullable: true, description: 'd' } } }, '.a: "nullable" is not allowed'],
  ])('reports %s', (_name, schema, problem) => {
    expect(structuralProblems(schema).join('\n')).toContain(problem);
  });

  it.each(KIND_DEFINITIONS.map((d) => [d.kind, d] as const))('finds nothing to report in the %s schema', (_kind, def) => {
    expect(structuralProblems(rootSchema(def.schema))).toEqual([]);
  });
});

describe.each(KIND_DEFINITIONS.flatMap((d) => [0, 1].map((index) => [d.kind, index, d] as const)))('the %s CRD, spec.versions[%i]', (kind, index, def) => {
  const crd = crdObject(def) as any; // eslint-disable-line @typescript-eslint/no-explicit-any
  const schema = crd.spec.versions[index].schema.openAPIV3Schema as JsonSchema;

  it('is named <plural>.<group>, namespaced, in the nebari category, with a status subresource', () => {
    expect(crd.metadata.name).toBe(`${def.plural}.${API_GROUP}`);
    expect(crd.spec.scope).toBe('Namespaced');
    expect(crd.spec.names).toMatchObject({ kind, plural: def.plural, categories: [API_CATEGORY] });
    expect(crd.spec.names.shortNames.length).toBeGreaterThan(0);
    expect(crd.spec.versions[index].subresources).toEqual({ status: {} });
  });

  it('prints Phase, Ready (models: Programmed, whether the gateway serves them) and Age columns', () => {
    const columns = crd.spec.versions[index].additionalPrinterColumns.map((c: { name: string }) => c.name);
    expect(columns).toEqual(expect.arrayContaining(['Phase', kind === 'AgentDeployment' ? 'Ready' : 'Programmed', 'Age']));
    expect(columns[0]).toBe('Phase');
    expect(columns[columns.length - 1]).toBe('Age');
  });

  it('names no field a word YAML 1.1 reads as a boolean (kubectl and helm would send `on:` as "true": the field pruned)', () => {
    const yaml11Booleans = /^(y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$/;
    const offending: string[] = [];
    walk(schema, (_node, at) => {
      const name = at.split('.').pop()!.replace(/(\[\]|\{\})+$/, '');
      if (yaml11Booleans.test(name)) offending.push(at);
    });
    expect(offending).toEqual([]);
  });

  it('leaves metadata to the API server and requires spec', () => {
    expect((schema.properties as Record<string, JsonSchema>).metadata).toEqual({ type: 'object' });
    expect(schema.required).toEqual(['spec']);
  });

  it('has standard conditions: a list map keyed by type, bounded', () => {
    const conditions = (((schema.properties as any).status.properties as any).conditions) as JsonSchema; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(conditions['x-kubernetes-list-type']).toBe('map');
    expect(conditions['x-kubernetes-list-map-keys']).toEqual(['type']);
    expect((conditions.items as JsonSchema).required).toEqual(['type', 'status', 'lastTransitionTime', 'reason', 'message']);
  });

  it('gives every CEL rule a message that names the field and says what to do', () => {
    const rules: Array<{ at: string; rule: CelRule }> = [];
    walk(schema, (node, at) => {
      for (const rule of (node['x-kubernetes-validations'] as CelRule[] | undefined) ?? []) rules.push({ at, rule });
    });
    expect(rules.length).toBeGreaterThan(0);
    for (const { at, rule } of rules) {
      const text = rule.message ?? rule.messageExpression ?? '';
      expect({ at, text }).toEqual({ at, text: expect.stringMatching(/(spec|metadata)(\.[A-Za-z]+)*[ :]/) });
      expect({ at, text }).toEqual({ at, text: expect.stringMatching(/;|, because|must|required|set exactly one/) });
    }
  });

  it('bounds every string a CEL rule reads and every list and map in spec, so rule cost is estimable', () => {
    const unbounded: string[] = [];
    walk((schema.properties as any).spec as JsonSchema, (node, at) => { // eslint-disable-line @typescript-eslint/no-explicit-any
      const hasRules = Array.isArray(node['x-kubernetes-validations']);
      if (node.type === 'string' && hasRules && node.maxLength === undefined && node.enum === undefined) unbounded.push(`spec.${at}: maxLength`);
      if (node.type === 'array' && node.maxItems === undefined) unbounded.push(`spec.${at}: maxItems`);
      if (node.type === 'object' && typeof node.additionalProperties === 'object' && node.maxProperties === undefined) unbounded.push(`spec.${at}: maxProperties`);
    });
    expect(unbounded).toEqual([]);
  });
});

describe.each(KIND_DEFINITIONS.map((d) => [d.kind, d] as const))('the %s CRD serves v1alpha1 and v1beta1', (_kind, def) => {
  const crd = crdObject(def);

  it('serves both, stores v1beta1, and marks v1alpha1 deprecated with a warning naming the replacement', () => {
    expect(crd.spec.versions.map((v) => ({ name: v.name, served: v.served, storage: v.storage, deprecated: (v as { deprecated?: boolean }).deprecated }))).toEqual([
      { name: 'v1beta1', served: true, storage: true, deprecated: undefined },
      { name: 'v1alpha1', served: true, storage: false, deprecated: true },
    ]);
    expect((crd.spec.versions[1] as { deprecationWarning?: string }).deprecationWarning).toMatch(/llm\.nebari\.dev\/v1alpha1 \w+ is deprecated; use llm\.nebari\.dev\/v1beta1/);
    expect(crd.spec.versions[1].additionalPrinterColumns).toEqual(crd.spec.versions[0].additionalPrinterColumns);
    expect((crd.spec.versions[0].schema.openAPIV3Schema.properties as Record<string, JsonSchema>).apiVersion.description).toContain('llm.nebari.dev/v1beta1');
  });

  it('leaves spec.conversion and annotations to the operator, so no apply of the files owns or resets them', () => {
    expect('conversion' in crd.spec).toBe(false);
    expect('annotations' in crd.metadata).toBe(false);
  });
});

describe('conversionSpec', () => {
  it('points at one release\'s Service on /convert, with the CA only when given', () => {
    const service = { name: 'team-a-webhook', namespace: 'team-a' };
    expect(conversionSpec(service)).toEqual({
      strategy: 'Webhook',
      webhook: { conversionReviewVersions: ['v1'], clientConfig: { service: { name: 'team-a-webhook', namespace: 'team-a', path: '/convert', port: 443 } } },
    });
    expect(conversionSpec(service, 'Q0E=').webhook.clientConfig).toEqual({ service: { name: 'team-a-webhook', namespace: 'team-a', path: '/convert', port: 443 }, caBundle: 'Q0E=' });
  });
});

describe('crdFiles', () => {
  const files = crdFiles();

  it('writes crds/llm.nebari.dev_<plural>.yaml for every kind, each starting with the generated header', () => {
    expect(files.map((f) => f.path)).toEqual(KIND_DEFINITIONS.map((d) => `crds/${API_GROUP}_${d.plural}.yaml`));
    for (const f of files) expect(f.content.startsWith('# Generated by `npm run synth`')).toBe(true);
  });

  it('holds exactly the CRD objects, and is the same on every call', () => {
    expect(files.map((f) => parse(f.content))).toEqual(crdObjects());
    expect(crdFiles()).toEqual(files);
  });

  it('keeps each file under 256 KiB, so client-side kubectl apply works too', () => {
    for (const f of files) expect({ path: f.path, bytes: Buffer.byteLength(f.content) }).toEqual({ path: f.path, bytes: expect.any(Number) });
    for (const f of files) expect(Buffer.byteLength(f.content)).toBeLessThan(256 * 1024);
  });
});
