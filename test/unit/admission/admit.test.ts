// The offline admission's order and verdicts on plain objects: defaults before the schema, CEL
// rules with old objects, webhook rules with the input as cluster state.
import { admit, admitLLMModel } from '../../../src/admission';

const operatorNamespace = 'models';
const llm = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'llm.nebari.dev/v1beta1',
  kind: 'LLMModel',
  metadata: { name },
  spec: { model: { name: 'Qwen/Qwen3-8B', source: 'huggingface' }, resources: { gpu: { count: 2 } }, access: { public: true }, ...spec },
});
const ptm = (name: string) => ({
  apiVersion: 'llm.nebari.dev/v1beta1',
  kind: 'PassthroughModel',
  metadata: { name, namespace: operatorNamespace },
  spec: { provider: { hostname: 'api.openai.com', credential: { secretRef: { name: 'k' } } }, models: { declared: ['gpt-4.1'] }, access: { public: true } },
});

describe('admit', () => {
  test('schema defaults, then webhook defaults, then the schema: a model without gpu.type is admitted and stored complete', async () => {
    const result = await admit(llm('qwen'), { operatorNamespace });
    expect(result.problems).toEqual([]);
    expect(result.admitted).toBe(true);
    expect(result.object).toMatchObject({
      metadata: { namespace: operatorNamespace },
      spec: { resources: { gpu: { count: 2, type: 'nvidia' } }, serving: { tensorParallelism: 2, replicas: 1 }, model: { name: 'Qwen/Qwen3-8B' } },
    });
  });

  test('a CEL rule refuses with its messageExpression at the rule\'s node', async () => {
    const result = await admitLLMModel(llm('llama-3.1-8b'), { operatorNamespace });
    expect(result.admitted).toBe(false);
    expect(result.problems).toEqual([
      expect.objectContaining({ field: '', source: 'cel', message: expect.stringContaining('for example to "llama-3-1-8b"') }),
    ]);
  });

  test('transition rules run on UPDATE only, against the old object', async () => {
    const before = llm('qwen');
    const after = llm('qwen', { model: { name: 'Qwen/Qwen3-14B', source: 'huggingface' } });
    expect((await admit(after, { operatorNamespace })).admitted).toBe(true);
    const update = await admit(after, { operatorNamespace }, before);
    expect(update.problems).toEqual([expect.objectContaining({ field: 'spec.model.name', message: expect.stringContaining('spec.model.name is immutable') })]);
  });

  test('a blocking schema error stops the CEL rules, as in the API server', async () => {
    const result = await admit(llm('qwen', { model: { name: 'm', source: 's3' } }), { operatorNamespace });
    expect(result.problems.map((p) => p.field)).toEqual(['spec.model.source', '']);
    expect(result.problems[1].message).toContain('some validation rules were not checked');
  });

  test('the webhook rules see the other objects as the cluster: a name another model kind uses is refused', async () => {
    const result = await admit(llm('openai'), { operatorNamespace, objects: [ptm('openai')] });
    expect(result.problems).toEqual([expect.objectContaining({ source: 'webhook', field: 'metadata.name', message: expect.stringContaining('a PassthroughModel named "openai" already exists') })]);
    expect((await admit(llm('openai'), { operatorNamespace })).admitted).toBe(true);
  });

  test('undeclared fields are pruned and reported as the API server\'s warning', async () => {
    const result = await admit(llm('qwen', { extra: 1 }), { operatorNamespace });
    expect(result.admitted).toBe(true);
    expect(result.unknownFields).toEqual(['spec.extra']);
    expect(result.warnings).toContain('unknown field "spec.extra"');
    expect(result.object.spec).not.toHaveProperty('extra');
  });

  test('an AgentDeployment outside the watched namespaces and an unknown kind are refused naming the field', async () => {
    const agent = {
      apiVersion: 'llm.nebari.dev/v1beta1',
      kind: 'AgentDeployment',
      metadata: { name: 'bot', namespace: 'elsewhere' },
      spec: { container: { image: 'registry.example.com/a:1' }, model: { externalAPI: { type: 'openai', baseURL: 'https://api.openai.com/v1', modelName: 'gpt-4.1' } } },
    };
    expect((await admit(agent, { operatorNamespace, agentNamespaces: ['team'] })).problems[0]).toMatchObject({ field: 'metadata.namespace' });
    expect((await admit({ ...agent, metadata: { name: 'bot', namespace: 'team' } }, { operatorNamespace, agentNamespaces: ['team'] })).admitted).toBe(true);
    expect((await admit({ ...agent, kind: 'Agent' }, { operatorNamespace })).problems[0]).toMatchObject({ field: 'kind' });
  });
});

describe('validation ratcheting on UPDATE', () => {
  // An object stored before a stricter rule (here: a storage size the CRD now refuses).
  const stored = llm('qwen', { model: { name: 'Qwen/Qwen3-8B', source: 'huggingface', storage: { size: '0Gi' } } });

  test('an unchanged invalid value does not block an update of other fields', async () => {
    const relabelled = llm('qwen', { model: { name: 'Qwen/Qwen3-8B', source: 'huggingface', storage: { size: '0Gi' } }, access: { groups: ['a'] } });
    expect((await admit(relabelled, { operatorNamespace }, stored)).problems).toEqual([]);
    expect((await admit(relabelled, { operatorNamespace })).problems.map((p) => p.field)).toEqual(['spec.model.storage.size']);
  });

  test('a changed value is checked', async () => {
    const changed = llm('qwen', { model: { name: 'Qwen/Qwen3-8B', source: 'huggingface', storage: { size: '-1Gi' } } });
    expect((await admit(changed, { operatorNamespace }, stored)).problems.map((p) => p.field)).toEqual(['spec.model.storage.size']);
  });
});

describe('v1alpha1 objects (still served, converted for the webhooks)', () => {
  const alpha = (kind: string, name: string, spec: Record<string, unknown>) => ({ apiVersion: 'llm.nebari.dev/v1alpha1', kind, metadata: { name, namespace: operatorNamespace }, spec });

  test('are admitted in their own version: v1alpha1 defaults, webhook defaults, both argument lists kept apart', async () => {
    const model = alpha('LLMModel', 'qwen', {
      model: { name: 'Qwen/Qwen3-8B', source: 'huggingface' },
      resources: { gpu: { count: 2 } },
      serving: { vllmArgs: ['--max-model-len=8192'] },
      advanced: { vllm: { extraArgs: ['--enforce-eager'] } },
      access: { public: true },
    });
    const result = await admit(model, { operatorNamespace });
    expect(result.problems).toEqual([]);
    expect(result.object).toMatchObject({
      apiVersion: 'llm.nebari.dev/v1alpha1',
      spec: { resources: { gpu: { type: 'nvidia' } }, serving: { vllmArgs: ['--max-model-len=8192'], tensorParallelism: 2 }, advanced: { vllm: { extraArgs: ['--enforce-eager'] } } },
    });
    // As the API server stores it through the mutating webhook: with the operator's cleanup finalizer.
    expect(result.object.metadata).toEqual({ name: 'qwen', namespace: operatorNamespace, finalizers: ['llm.nebari.dev/cleanup'] });
  });

  test('keep the v1alpha1 meaning of an omitted OTLP protocol (grpc)', async () => {
    const agent = alpha('AgentDeployment', 'bot', {
      image: 'registry.example.com/a:1',
      model: { externalAPI: { type: 'custom', baseURL: 'http://llm.example.com/v1', modelName: 'm' } },
      observability: { otlp: { endpoint: 'http://otel:4317' } },
    });
    const result = await admit(agent, { operatorNamespace });
    expect(result.problems).toEqual([]);
    expect(result.object).toMatchObject({ spec: { image: 'registry.example.com/a:1', observability: { otlp: { protocol: 'grpc' } } } });
  });

  test('read a webhook refusal in their own field names', async () => {
    const spec = { model: { externalAPI: { type: 'custom', baseURL: 'http://llm.example.com/v1', modelName: 'm' } } };
    const agent = alpha('AgentDeployment', 'bot', { ...spec, image: 'registry.example.com/a:1', provider: { overrides: { workload: { hostPID: true } } } });
    expect((await admit(agent, { operatorNamespace })).problems).toEqual([
      expect.objectContaining({ source: 'webhook', field: 'spec.provider.overrides.workload.hostPID', message: expect.stringMatching(/^spec\.provider\.overrides\.workload\.hostPID: is not allowed/) }),
    ]);
    const beta = { ...agent, apiVersion: 'llm.nebari.dev/v1beta1', spec: { ...spec, container: { image: 'registry.example.com/a:1' }, overrides: { workload: { hostPID: true } } } };
    expect((await admit(beta, { operatorNamespace })).problems).toEqual([expect.objectContaining({ field: 'spec.overrides.workload.hostPID' })]);
  });
});
