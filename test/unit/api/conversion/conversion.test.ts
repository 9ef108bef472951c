// The pure conversion between llm.nebari.dev/v1alpha1 and v1beta1 (src/api/conversion/): every
// example and test fixture round-trips deep-equal from either version, the design table of
// docs/api-versions.md holds field by field, and a seeded fuzz of generated objects (odd ones
// included) round-trips without a throw.
import { isDeepStrictEqual } from 'node:util';
import Ajv from 'ajv';
import { API_GROUP, applyDefaults, KIND_DEFINITIONS, rootSchema } from '../../../../src/api';
import type { JsonSchema, KindDefinition } from '../../../../src/api';
import { convertTo, restoreAnnotation } from '../../../../src/api/conversion';
import type { JsonObject } from '../../../../src/api/conversion';
import { INVALID_CASES, OBJECTS_AT_BOUNDS, UPSTREAM_OBJECTS } from '../../../integration/crds-cases';
import { examples } from '../schema-helpers';
import { ObjectGenerator } from './object-generator';

const ALPHA = `${API_GROUP}/v1alpha1`;
const BETA = `${API_GROUP}/v1beta1`;

function convert(object: unknown, to: string): JsonObject {
  const result = convertTo(object, to);
  if (!result.ok) throw new Error(result.reason);
  return result.object;
}

const def = (kind: unknown) => KIND_DEFINITIONS.find((d) => d.kind === kind) as KindDefinition;
const betaRoot = (kind: unknown) => rootSchema(def(kind).v1beta1Schema!);

const ajv = new Ajv({ strict: false, validateFormats: false, allErrors: true });
const betaValidators = new Map(KIND_DEFINITIONS.map((d) => [d.kind, ajv.compile(rootSchema(d.v1beta1Schema!))]));

const EXAMPLES = (['llmmodel', 'passthroughmodel', 'agentdeployment'] as const).flatMap((dir) => examples(dir, 'v1alpha1')).map((e) => ({ name: e.file, object: e.object as unknown as JsonObject }));
const VALID_FIXTURES = [...EXAMPLES, ...UPSTREAM_OBJECTS, ...OBJECTS_AT_BOUNDS].map((f) => ({ name: f.name, object: f.object as JsonObject }));
const ALL_FIXTURES = [
  ...VALID_FIXTURES,
  ...INVALID_CASES.flatMap((c) => [{ name: `invalid: ${c.name}`, object: c.object as JsonObject }, ...(c.before ? [{ name: `before: ${c.name}`, object: c.before as JsonObject }] : [])]),
];

describe('every example and test fixture round-trips deep-equal', () => {
  it.each(ALL_FIXTURES.map((f) => [f.name, f.object] as const))('%s: v1alpha1 -> v1beta1 -> v1alpha1', (_name, alpha) => {
    const beta = convert(alpha, BETA);
    expect(beta.apiVersion).toBe(BETA);
    expect(convert(beta, ALPHA)).toStrictEqual(alpha);
  });

  it.each(ALL_FIXTURES.map((f) => [f.name, f.object] as const))('%s: v1beta1 -> v1alpha1 -> v1beta1', (_name, alpha) => {
    const beta = convert(alpha, BETA);
    // Start from the v1beta1 form as a v1beta1 client would write it: without the record.
    const annotations = { ...((beta.metadata as JsonObject)?.annotations as JsonObject | undefined) };
    delete annotations[restoreAnnotation('v1alpha1')];
    const written = { ...beta, metadata: { ...(beta.metadata as JsonObject) } };
    if (Object.keys(annotations).length > 0) (written.metadata as JsonObject).annotations = annotations;
    else delete (written.metadata as JsonObject).annotations;
    expect(convert(convert(written, ALPHA), BETA)).toStrictEqual(written);
  });

  it.each(VALID_FIXTURES.map((f) => [f.name, f.object] as const))('%s: a valid stored v1alpha1 object is a valid v1beta1 object', (_name, alpha) => {
    const stored = applyDefaults(rootSchema(def(alpha.kind).schema), alpha);
    const beta = convert(stored, BETA);
    const validate = betaValidators.get(alpha.kind as string)!;
    expect(validate(applyDefaults(betaRoot(alpha.kind) as JsonSchema, beta)) ? [] : validate.errors).toEqual([]);
  });

  it.each(EXAMPLES.map((f) => [f.name, f.object] as const))('%s: the stored example needs no record in v1beta1', (_name, alpha) => {
    const beta = convert(applyDefaults(rootSchema(def(alpha.kind).schema), alpha), BETA);
    expect((beta.metadata as JsonObject).annotations).toBeUndefined();
  });

  it.each(VALID_FIXTURES.map((f) => [f.name, f.object] as const))('%s: stored (defaulted) objects mean the same after v1beta1 defaulting', (_name, alpha) => {
    // The API server fills the requested version's defaults after conversion: they must add nothing.
    const stored = applyDefaults(rootSchema(def(alpha.kind).schema), alpha);
    const beta = convert(stored, BETA);
    expect(applyDefaults(betaRoot(alpha.kind) as JsonSchema, beta)).toStrictEqual(beta);
    expect(convert(beta, ALPHA)).toStrictEqual(stored);
  });
});

describe('the design table of docs/api-versions.md', () => {
  const meta = { name: 'm', namespace: 'ns' };

  it('LLMModel L1–L6: engine arguments in one list, advanced dissolved; the split survives in the record', () => {
    const alpha = {
      apiVersion: ALPHA,
      kind: 'LLMModel',
      metadata: meta,
      spec: {
        model: { name: 'Qwen/Qwen3-8B', source: 'huggingface' },
        resources: { gpu: { count: 1, type: 'nvidia' } },
        access: { public: true },
        serving: { replicas: 1, vllmArgs: ['--a'] },
        advanced: {
          vllm: { extraArgs: ['--b'], extraEnv: [{ name: 'X', value: '1' }], tolerations: [{ key: 'k' }], nodeSelector: { pool: 'gpu' }, affinity: { nodeAffinity: {} } },
          inferencePool: { schedulerConfig: { plugins: [] } },
        },
      },
    };
    const beta = convert(alpha, BETA);
    expect(beta.spec).toStrictEqual({
      model: alpha.spec.model,
      resources: alpha.spec.resources,
      access: alpha.spec.access,
      serving: { replicas: 1, engineArgs: ['--a', '--b'], env: [{ name: 'X', value: '1' }] },
      scheduling: { tolerations: [{ key: 'k' }], nodeSelector: { pool: 'gpu' }, affinity: { nodeAffinity: {} } },
      inferencePool: { schedulerConfig: { plugins: [] } },
    });
    expect(JSON.parse((beta.metadata as { annotations: Record<string, string> }).annotations[restoreAnnotation('v1alpha1')])).toStrictEqual({
      restore: [
        { path: ['spec', 'advanced', 'vllm', 'extraArgs'], value: ['--b'] },
        { path: ['spec', 'serving', 'vllmArgs'], value: ['--a'], mapped: ['--a', '--b'] },
      ],
    });
    expect(convert(beta, ALPHA)).toStrictEqual(alpha);
  });

  it('a v1beta1 client adding a field beside a recorded one keeps the record current', () => {
    const alpha = {
      apiVersion: ALPHA,
      kind: 'LLMModel',
      metadata: meta,
      spec: { model: { name: 'm', source: 'huggingface' }, resources: { gpu: { count: 0 } }, access: { public: true }, serving: { vllmArgs: ['--a'] }, advanced: { vllm: { extraArgs: ['--b'] } } },
    };
    const beta = convert(alpha, BETA);
    (beta.spec as JsonObject).scheduling = { nodeSelector: { pool: 'h100' } };
    expect(convert(beta, ALPHA).spec).toStrictEqual({ ...alpha.spec, advanced: { vllm: { extraArgs: ['--b'], nodeSelector: { pool: 'h100' } } } });
  });

  it('a v1beta1 client changing a recorded field wins: the stale record is dropped, nothing is applied twice', () => {
    const alpha = {
      apiVersion: ALPHA,
      kind: 'LLMModel',
      metadata: meta,
      spec: { model: { name: 'm', source: 'huggingface' }, resources: { gpu: { count: 0 } }, access: { public: true }, serving: { vllmArgs: ['--a'] }, advanced: { vllm: { extraArgs: ['--b'] } } },
    };
    const beta = convert(alpha, BETA);
    (beta.spec as { serving: { engineArgs: string[] } }).serving.engineArgs = ['--c'];
    const back = convert(beta, ALPHA);
    const { advanced: _advanced, ...rest } = alpha.spec;
    expect(back.spec).toStrictEqual({ ...rest, serving: { vllmArgs: ['--c'] } });
    expect((back.metadata as JsonObject).annotations).toBeUndefined();
  });

  it.each([
    ['OpenAI with the default', { hostname: 'api.openai.com', schemaVersion: 'v1', credentialSecretName: 's' }, { hostname: 'api.openai.com', pathPrefix: '/v1', credential: { secretRef: { name: 's' } } }],
    ['OpenRouter api/v1', { hostname: 'openrouter.ai', schemaVersion: 'api/v1', credentialSecretName: 's', credential: { type: 'APIKey' } }, { hostname: 'openrouter.ai', pathPrefix: '/api/v1', credential: { type: 'APIKey', secretRef: { name: 's' } } }],
    ['Bedrock with the old default', { backend: { type: 'Bedrock', bedrock: { region: 'us-east-1' } }, schemaVersion: 'v1' }, { backend: { type: 'Bedrock', bedrock: { region: 'us-east-1' } } }],
    ['an empty prefix', { hostname: 'h.example', schemaVersion: '', credentialSecretName: 's' }, { hostname: 'h.example', pathPrefix: '/', credential: { secretRef: { name: 's' } } }],
  ])('PassthroughModel P1–P3: %s', (_name, alphaProvider, betaProvider) => {
    const alpha = { apiVersion: ALPHA, kind: 'PassthroughModel', metadata: meta, spec: { provider: alphaProvider, models: { catchAll: true }, access: { public: true } } };
    const beta = convert(alpha, BETA);
    expect((beta.spec as JsonObject).provider).toStrictEqual(betaProvider);
    expect((beta.metadata as JsonObject).annotations).toBeUndefined();
    expect(convert(beta, ALPHA)).toStrictEqual(alpha);
  });

  it.each([
    ['PassthroughModel', { provider: { hostname: 'api.openai.com', credential: { type: 'APIKey', secretRef: { name: 's' } } }, models: { declared: ['gpt'] }, access: { public: true } }],
    ['LLMModel', { model: { name: 'org/m' }, resources: {}, access: { public: true } }],
  ])('%s spec.routing (v1beta1 only) survives a round trip through v1alpha1 in the record', (kind, spec) => {
    const routing = { retries: { attempts: 2, retryOn: ['connect-failure'], statusCodes: [503], perTryTimeout: '5s' }, timeouts: { streamIdle: '30s' } };
    const beta = { apiVersion: BETA, kind, metadata: meta, spec: { ...spec, routing } };
    const alpha = convert(beta, ALPHA);
    expect((alpha.spec as JsonObject).routing).toBeUndefined();
    expect((alpha.metadata as { annotations: Record<string, string> }).annotations[restoreAnnotation('v1beta1')]).toContain('routing');
    expect(convert(alpha, BETA)).toStrictEqual(beta);
  });

  it('LLMModel spec.observability (v1beta1 only) survives a round trip through v1alpha1 in the record', () => {
    const observability = { tracing: { endpoint: 'http://otel-collector.observability:4317', protocol: 'grpc', sampler: 'traceidratio', ratio: 0.25 } };
    const beta = { apiVersion: BETA, kind: 'LLMModel', metadata: meta, spec: { model: { name: 'org/m' }, resources: {}, access: { public: true }, observability } };
    const alpha = convert(beta, ALPHA);
    expect((alpha.spec as JsonObject).observability).toBeUndefined();
    expect((alpha.metadata as { annotations: Record<string, string> }).annotations[restoreAnnotation('v1beta1')]).toContain('otel-collector');
    expect(convert(alpha, BETA)).toStrictEqual(beta);
  });

  it('AgentDeployment A1–A3: container grouped, overrides renamed, an omitted OTLP protocol keeps meaning grpc', () => {
    const alpha = {
      apiVersion: ALPHA,
      kind: 'AgentDeployment',
      metadata: meta,
      spec: {
        image: 'registry.example/agent:1',
        command: ['run'],
        args: ['--x'],
        env: [{ name: 'A', value: 'b' }],
        resources: { limits: { memory: '1Gi' } },
        provider: { overrides: { container: { securityContext: { runAsNonRoot: true } } } },
        port: 8080,
        model: { modelRef: { kind: 'LLMModel', name: 'm' } },
        observability: { otlp: { endpoint: 'http://otel:4317' } },
      },
    };
    const beta = convert(alpha, BETA);
    expect(beta.spec).toStrictEqual({
      container: { image: 'registry.example/agent:1', command: ['run'], args: ['--x'], env: [{ name: 'A', value: 'b' }], resources: { limits: { memory: '1Gi' } } },
      overrides: { container: { securityContext: { runAsNonRoot: true } } },
      port: 8080,
      model: { modelRef: { kind: 'LLMModel', name: 'm' } },
      observability: { otlp: { endpoint: 'http://otel:4317', protocol: 'grpc' } },
    });
    // The explicit grpc is not what the v1alpha1 object said (nothing): the record restores the omission.
    expect(convert(beta, ALPHA)).toStrictEqual(alpha);
    // A v1beta1 object without a protocol means http/protobuf, and says so in v1alpha1.
    const betaWritten = { ...beta, metadata: meta, spec: { ...(beta.spec as JsonObject), observability: { otlp: { endpoint: 'http://otel:4318' } } } };
    expect((convert(betaWritten, ALPHA).spec as JsonObject).observability).toStrictEqual({ otlp: { endpoint: 'http://otel:4318', protocol: 'http/protobuf' } });
  });
});

describe('never fails on one of our objects; refuses only what is not ours', () => {
  it.each([
    ['spec is a string', { apiVersion: ALPHA, kind: 'LLMModel', metadata: {}, spec: 'odd' }],
    ['no spec, no metadata', { apiVersion: ALPHA, kind: 'PassthroughModel' }],
    ['provider is a list', { apiVersion: ALPHA, kind: 'PassthroughModel', spec: { provider: [1] } }],
    ['annotations are not a map', { apiVersion: BETA, kind: 'AgentDeployment', metadata: { annotations: 'x' }, spec: { container: 5 } }],
    ['a record that is not one', { apiVersion: BETA, kind: 'LLMModel', metadata: { annotations: { [restoreAnnotation('v1beta1')]: '{"restore":[{"path":[]}]}' } }, spec: {} }],
  ])('%s converts and round-trips', (_name, object) => {
    const to = object.apiVersion === ALPHA ? BETA : ALPHA;
    expect(convert(convert(object, to), object.apiVersion)).toStrictEqual(object);
  });

  it.each([
    [{ apiVersion: ALPHA, kind: 'Pod' }, BETA, 'kind "Pod" is not converted here'],
    [{ apiVersion: 'v1', kind: 'LLMModel' }, BETA, 'apiVersion "v1" is not one of'],
    [{ apiVersion: ALPHA, kind: 'LLMModel' }, `${API_GROUP}/v2`, 'desiredAPIVersion "llm.nebari.dev/v2" is not served'],
    ['text', BETA, 'not a JSON object'],
  ])('%j to %s is refused: %s', (object, to, message) => {
    const result = convertTo(object, to);
    expect(result.ok).toBe(false);
    expect(result.ok ? '' : result.reason).toContain(message);
  });
});

describe('property-based fuzz (seeded)', () => {
  const PER_DIRECTION = 2100;
  const roots = new Map(KIND_DEFINITIONS.flatMap((d) => [[`${d.kind}/v1alpha1`, rootSchema(d.schema)], [`${d.kind}/v1beta1`, rootSchema(d.v1beta1Schema!)]] as const));
  const directions = [
    ['v1alpha1', ALPHA, BETA],
    ['v1beta1', BETA, ALPHA],
  ] as const;

  it.each(directions)('%s objects round-trip deep-equal and convert deterministically', (version, from, to) => {
    const started = Date.now();
    const ours = [restoreAnnotation('v1alpha1'), restoreAnnotation('v1beta1')];
    let checked = 0;
    let withRecord = 0;
    for (let seed = 1; seed <= PER_DIRECTION; seed++) {
      const generator = new ObjectGenerator(seed * 7919 + (version === 'v1alpha1' ? 0 : 1));
      const d = KIND_DEFINITIONS[seed % KIND_DEFINITIONS.length];
      const root = roots.get(`${d.kind}/${version}`)!;
      const object = generator.object(root, from, d.kind, ours);
      const snapshot = JSON.stringify(object);
      const converted = convert(object, to);
      if (JSON.stringify(object) !== snapshot) throw new Error(`seed ${seed}: conversion changed its input`);
      if (JSON.stringify(convert(object, to)) !== JSON.stringify(converted)) throw new Error(`seed ${seed}: conversion is not deterministic`);
      const back = convert(converted, from);
      if (JSON.stringify(back) !== JSON.stringify(object) && !isDeepStrictEqual(back, object)) {
        throw new Error(`seed ${seed} (${d.kind} ${version}) does not round-trip:\n${JSON.stringify(object)}\n${JSON.stringify(converted)}\n${JSON.stringify(back)}`);
      }
      if (((converted.metadata as JsonObject).annotations as JsonObject | undefined)?.[restoreAnnotation(version)] !== undefined) withRecord++;
      checked++;
    }
    expect(checked).toBe(PER_DIRECTION);
    // The fuzz reaches the record path, not only the plain mapping.
    expect(withRecord).toBeGreaterThan(PER_DIRECTION / 20);
    process.stdout.write(`conversion fuzz ${version}: ${checked} objects, ${withRecord} with a record, ${Date.now() - started} ms\n`);
  });
});
