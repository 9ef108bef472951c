import { admissionRoutes, webhookPath } from '../../../src/webhook/admission';
import { agentDeploymentAdmission } from '../../../src/webhook/agentdeployment';
import { applyJsonPatch } from '../../../src/webhook/json-patch';
import { llmModelAdmission } from '../../../src/webhook/llmmodel';
import { passthroughModelAdmission } from '../../../src/webhook/passthroughmodel';
import type { AdmissionRequest } from '../../../src/webhook/review';
import { agentDeployment, clusterState, context, llmModel, memoryLookups, operatorNamespace, passthroughModel, request } from './fixtures';

const routes = admissionRoutes([llmModelAdmission, passthroughModelAdmission, agentDeploymentAdmission], context());
const call = (path: string, req: AdmissionRequest<unknown>) => routes.get(path)!(req as AdmissionRequest);

describe('admission routes', () => {
  it('serves validate and mutate paths for every kind', () => {
    expect([...routes.keys()].sort()).toEqual([
      '/mutate-agentdeployment',
      '/mutate-llmmodel',
      '/mutate-passthroughmodel',
      '/validate-agentdeployment',
      '/validate-llmmodel',
      '/validate-passthroughmodel',
    ]);
    expect(webhookPath('validate', 'llmmodel')).toBe('/validate-llmmodel');
  });

  it('denies a kind the path does not serve, naming what it got', async () => {
    const review = await call('/validate-agentdeployment', request(llmModel()));
    expect(review.response).toMatchObject({ allowed: false, status: { code: 400 } });
    expect(review.response.status?.message).toBe(
      'this webhook admits AgentDeployment.llm.nebari.dev only, but was sent LLMModel.llm.nebari.dev; fix the rules of the webhook configuration',
    );
  });

  it('denies versions it does not understand', async () => {
    const review = await call('/validate-llmmodel', request(llmModel(), { version: 'v9' }));
    expect(review.response.status?.message).toContain('LLMModel version v9 is not served by this webhook (served: v1beta1, v1alpha1); upgrade the operator or send llm.nebari.dev/v1beta1');
  });

  it('allows DELETE and objects being deleted without running rules', async () => {
    const outside = llmModel({}, { namespace: 'elsewhere' });
    expect((await call('/validate-llmmodel', request(outside, { operation: 'DELETE' }))).response.allowed).toBe(true);
    const deleting = llmModel({}, { namespace: 'elsewhere', deletionTimestamp: '2030-01-01T00:00:00Z' } as never);
    expect((await call('/validate-llmmodel', request(deleting))).response.allowed).toBe(true);
    expect((await call('/validate-llmmodel', request(outside))).response.allowed).toBe(false);
  });

  it('denies a body with no spec and one whose spec breaks the rules\' assumptions', async () => {
    const noSpec = { ...llmModel(), spec: undefined };
    expect((await call('/validate-llmmodel', request(noSpec as never))).response.status?.message).toBe('spec: the LLMModel has no spec object; add one');
    const broken = { ...llmModel(), spec: { access: {}, model: {} } };
    const review = await call('/validate-llmmodel', request(broken as never));
    expect(review.response.allowed).toBe(false);
    expect(review.response.status?.message).toContain('the LLMModel does not match its schema');
  });

  it('answers mutations with a JSON Patch that produces the defaulted object', async () => {
    const model = llmModel({ resources: { gpu: { count: 2, type: 'nvidia' } } });
    const review = await call('/mutate-llmmodel', request(model));
    expect(review.response.allowed).toBe(true);
    const patch = JSON.parse(Buffer.from(review.response.patch as string, 'base64').toString());
    // The operator's cleanup finalizer comes with every CREATE (no PATCH of its own on the first pass).
    expect(patch).toEqual([{ op: 'add', path: '/metadata/finalizers', value: ['llm.nebari.dev/cleanup'] }, { op: 'add', path: '/spec/serving', value: { tensorParallelism: 2 } }]);
    expect(applyJsonPatch(model, patch).spec.serving).toEqual({ tensorParallelism: 2 });
  });

  it('answers an UPDATE with nothing to default without a patch (the finalizer is added on CREATE only)', async () => {
    const stored = llmModel({ resources: { gpu: { count: 0, type: 'nvidia' } } });
    const review = await call('/mutate-llmmodel', request(stored, { operation: 'UPDATE', oldObject: stored }));
    expect(review.response).toEqual({ uid: 'uid-1', allowed: true });
  });

  it('adds the cleanup finalizer on CREATE after finalizers the object already has, and not twice', async () => {
    const model = llmModel({ resources: { gpu: { count: 0, type: 'nvidia' } } });
    const other = await call('/mutate-llmmodel', request({ ...model, metadata: { ...model.metadata, finalizers: ['example.com/keep'] } }));
    expect(JSON.parse(Buffer.from(other.response.patch as string, 'base64').toString())).toEqual([
      { op: 'replace', path: '/metadata/finalizers', value: ['example.com/keep', 'llm.nebari.dev/cleanup'] },
    ]);
    const already = await call('/mutate-llmmodel', request({ ...model, metadata: { ...model.metadata, finalizers: ['llm.nebari.dev/cleanup'] } }));
    expect(already.response).toEqual({ uid: 'uid-1', allowed: true });
  });
});

describe('v1alpha1 clients', () => {
  const alphaModel = {
    apiVersion: 'llm.nebari.dev/v1alpha1',
    kind: 'LLMModel',
    metadata: { name: 'qwen', namespace: 'nebari-llm-serving-system' },
    spec: {
      model: { name: 'Qwen/Qwen3-0.6B', source: 'huggingface' },
      resources: { gpu: { count: 2, type: 'nvidia' } },
      serving: { vllmArgs: ['--max-model-len=8192'] },
      advanced: { vllm: { extraArgs: ['--enforce-eager'] } },
      access: { public: true },
    },
  };

  it('reads its own field names when the API server converted its request (requestKind v1alpha1)', async () => {
    const model = passthroughModel({ credential: undefined });
    const asBeta = await call('/validate-passthroughmodel', request(model));
    expect(asBeta.response.status?.message).toMatch(/^spec\.provider\.credential\.secretRef\.name: is required for the OpenAI backend/);
    const fromAlpha = await call('/validate-passthroughmodel', { ...request(model), requestKind: { group: 'llm.nebari.dev', version: 'v1alpha1', kind: 'PassthroughModel' } });
    expect(fromAlpha.response.status?.message).toMatch(/^spec\.provider\.credentialSecretName: is required for the OpenAI backend/);
  });

  it('is converted when a v1alpha1 request arrives as such: v1beta1 rules, its own field names', async () => {
    const agent = agentDeployment({ overrides: { workload: { hostPID: true } } });
    const alpha = { ...agent, apiVersion: 'llm.nebari.dev/v1alpha1', spec: { image: 'registry.example.com/agent:1.0', model: agent.spec.model, provider: { overrides: agent.spec.overrides } } };
    const review = await call('/validate-agentdeployment', request(alpha, { version: 'v1alpha1' }));
    expect(review.response.allowed).toBe(false);
    expect(review.response.status?.message).toContain('spec.provider.overrides.workload.hostPID: is not allowed');
  });

  it('gets a patch for the object it sent: defaults from the v1beta1 rules, its two argument lists kept apart', async () => {
    const review = await call('/mutate-llmmodel', request(alphaModel, { version: 'v1alpha1' }));
    const patch = JSON.parse(Buffer.from(review.response.patch as string, 'base64').toString());
    expect(patch).toEqual([{ op: 'add', path: '/metadata/finalizers', value: ['llm.nebari.dev/cleanup'] }, { op: 'add', path: '/spec/serving/tensorParallelism', value: 2 }]);
    expect(applyJsonPatch(alphaModel, patch).spec).toEqual({ ...alphaModel.spec, serving: { vllmArgs: ['--max-model-len=8192'], tensorParallelism: 2 } });
  });
});

// The model cache (src/webhook/model-cache.ts) may lag the API server; these rules hold for any
// `lookups` that may be stale, given `liveLookups` that are not.
describe('admission over lookups that may lag', () => {
  const gpt = passthroughModel({}, {}, { name: 'other' });
  const stale = (models: ReturnType<typeof clusterState>['models']) =>
    memoryLookups(clusterState({ models, readableSecrets: [`alice/${operatorNamespace}/openai-key`] }));
  const routesOver = (lookups: ReturnType<typeof memoryLookups>, liveLookups: ReturnType<typeof memoryLookups>, admitted?: (o: unknown) => void) =>
    admissionRoutes([llmModelAdmission, passthroughModelAdmission, agentDeploymentAdmission], { operatorNamespace, agentNamespaces: [operatorNamespace, 'team'], lookups, liveLookups, admitted });
  const send = (routes: ReturnType<typeof routesOver>, path: string, req: AdmissionRequest<unknown>) => routes.get(path)!(req as AdmissionRequest);
  const served = { kind: 'PassthroughModel' as const, namespace: operatorNamespace, name: 'other', spec: gpt.spec };

  it('does not refuse on the word of a cache that still holds a deleted model: the API server is asked first', async () => {
    const live = stale([]);
    const routes = routesOver(stale([served]), live);
    const review = await send(routes, '/validate-passthroughmodel', request(passthroughModel()));
    expect(review.response.allowed).toBe(true);
    expect(live.reviews.length).toBeGreaterThan(0); // validated again against the live state
  });

  it('refuses when the API server confirms what the cache said', async () => {
    const live = stale([served]);
    const review = await send(routesOver(stale([served]), live), '/validate-passthroughmodel', request(passthroughModel()));
    expect(review.response.allowed).toBe(false);
    expect(review.response.status?.message).toContain('model id "gpt-4o" is already served on the external endpoint by PassthroughModel other');
  });

  it('allows without a live read when the cache sees no reason to refuse, and reports what it admitted (not dry runs)', async () => {
    const live = stale([]);
    const admitted: unknown[] = [];
    const routes = routesOver(stale([]), live, (o) => admitted.push(o));
    const review = await send(routes, '/validate-passthroughmodel', request(passthroughModel()));
    expect(review.response.allowed).toBe(true);
    expect(live.reviews).toEqual([]);
    expect(admitted).toEqual([expect.objectContaining({ kind: 'PassthroughModel', metadata: expect.objectContaining({ name: 'openai' }) })]);
    await send(routes, '/validate-passthroughmodel', { ...request(passthroughModel()), dryRun: true });
    expect(admitted).toHaveLength(1);
  });

  it('confirms live when a rule trips over a cached object that is not schema-valid (a write admitted here but never stored)', async () => {
    const garbage = { kind: 'PassthroughModel' as const, namespace: operatorNamespace, name: 42 as unknown as string, spec: gpt.spec };
    const review = await send(routesOver(stale([garbage]), stale([])), '/validate-passthroughmodel', request(passthroughModel()));
    expect(review.response.allowed).toBe(true);
  });

  it('defaults an agent from the live model, not from a cache that has not seen it yet', async () => {
    const qwen = { kind: 'LLMModel' as const, namespace: 'team', name: 'qwen', spec: llmModel().spec };
    const routes = routesOver(stale([]), stale([qwen]));
    const agent = agentDeployment({ model: { modelRef: { kind: 'LLMModel', name: 'qwen' } } });
    const review = await send(routes, '/mutate-agentdeployment', request(agent));
    const patch = JSON.parse(Buffer.from(review.response.patch as string, 'base64').toString());
    expect(patch).toEqual(expect.arrayContaining([{ op: 'add', path: '/spec/model/modelRef/modelName', value: 'Qwen/Qwen3-0.6B' }]));
  });
});
