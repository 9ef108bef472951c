// The real kube-apiserver calls the webhook server over TLS (by URL on 127.0.0.1) for every rule:
// allowed, denied with the message, patched defaults, and warnings returned to the client.
import * as k8s from '@kubernetes/client-node';
import { installCRDs, kubeConfig, uniqueName } from '../support/cluster';
import { collectionPath, kubeRequest } from '../support/webhook/kube-raw';

const deprecated = (kind: string) => expect.stringMatching(new RegExp(`^llm\\.nebari\\.dev/v1alpha1 ${kind} is deprecated; use llm\\.nebari\\.dev/v1beta1`));
import { type WebhookEnvironment, crdDirectory, createNamespace, selectorLabel, startWebhookEnvironment } from '../support/webhook/webhook-env';

const admin = kubeConfig();
let env: WebhookEnvironment;
let team: string;

const llmModel = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'llm.nebari.dev/v1alpha1',
  kind: 'LLMModel',
  metadata: { name },
  // One model id per model (the webhook refuses a second model serving an id).
  spec: { model: { name: `Qwen/Qwen3-0.6B-${name}`, source: 'huggingface' }, resources: { gpu: { count: 2 } }, access: { public: true }, ...spec },
});
const passthroughModel = (name: string, provider: Record<string, unknown> = {}, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'llm.nebari.dev/v1alpha1',
  kind: 'PassthroughModel',
  metadata: { name },
  spec: { provider: { hostname: 'api.openai.com', credentialSecretName: 'openai-key', ...provider }, models: { declared: [`gpt-4o-${name}`] }, access: { groups: ['ml'] }, ...spec },
});
const agent = (name: string, model: Record<string, unknown>, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'llm.nebari.dev/v1alpha1',
  kind: 'AgentDeployment',
  metadata: { name },
  spec: { image: 'registry.example.com/agent:1.0', model, ...spec },
});

const create = (namespace: string, plural: string, body: unknown) => kubeRequest(admin, 'POST', collectionPath(namespace, plural), body);
const message = (response: { body: Record<string, unknown> }) => String(response.body.message ?? '');

beforeAll(async () => {
  await installCRDs([crdDirectory]);
  const id = uniqueName('wh-adm');
  env = await startWebhookEnvironment({ kubeConfig: admin, id });
  team = `${id}-team`;
  await createNamespace(admin, team, { [selectorLabel]: id });
});
afterAll(() => env?.close());

describe('LLMModel admission through the API server', () => {
  it('allows a model in the operator namespace and stores the patched default', async () => {
    const response = await create(env.operatorNamespace, 'llmmodels', llmModel('qwen'));
    expect(response).toMatchObject({ status: 201 });
    expect(response.body).toMatchObject({ spec: { serving: { tensorParallelism: 2 } } });
    expect(env.calls).toEqual(expect.arrayContaining(['/mutate-llmmodel', '/validate-llmmodel']));
  });

  it('denies a model outside the operator namespace, naming the field and the fix', async () => {
    const response = await create(team, 'llmmodels', llmModel('elsewhere'));
    expect(response).toMatchObject({ status: 422 });
    expect(message(response)).toContain(
      `denied the request: metadata.namespace: "${team}" is not the operator namespace; create the LLMModel in "${env.operatorNamespace}"`,
    );
  });

  it('admits a model in the operator namespace without the nebari.dev/managed label', async () => {
    const core = admin.makeApiClient(k8s.CoreV1Api);
    const unlabel = [{ op: 'remove', path: '/metadata/labels/nebari.dev~1managed' }];
    const jsonPatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch);
    await core.patchNamespace({ name: env.operatorNamespace, body: unlabel }, jsonPatch);
    try {
      expect((await create(env.operatorNamespace, 'llmmodels', llmModel('unlabelled'))).status).toBe(201);
    } finally {
      await core.patchNamespace({ name: env.operatorNamespace, body: [{ op: 'add', path: '/metadata/labels/nebari.dev~1managed', value: 'true' }] }, jsonPatch);
    }
  });

  it('denies a name a PassthroughModel already uses', async () => {
    expect((await create(env.operatorNamespace, 'passthroughmodels', passthroughModel('shared'))).status).toBe(201);
    const response = await create(env.operatorNamespace, 'llmmodels', llmModel('shared'));
    expect(response).toMatchObject({ status: 422 });
    expect(message(response)).toContain('metadata.name: a PassthroughModel named "shared" already exists');
    expect(message(response)).toContain('"shared-api-keys"; choose another name');
  });

  it('returns warnings to the client', async () => {
    const response = await create(
      env.operatorNamespace,
      'llmmodels',
      llmModel('scratch', { model: { name: 'Qwen/Qwen3-0.6B-scratch', source: 'huggingface', storage: { type: 'emptyDir' }, preload: true } }),
    );
    expect(response).toMatchObject({ status: 201 });
    // A v1alpha1 client also hears that the version is deprecated (the CRD's deprecationWarning).
    expect(response.warnings).toEqual([deprecated('LLMModel'), expect.stringContaining('spec.model.storage.type: emptyDir with spec.model.preload downloads the whole model again')]);
  });
});

describe('PassthroughModel admission through the API server', () => {
  it('allows a provider and stores the credential type defaulted from the backend', async () => {
    const response = await create(env.operatorNamespace, 'passthroughmodels', passthroughModel('openai'));
    expect(response).toMatchObject({ status: 201 });
    expect(response.body).toMatchObject({ spec: { provider: { credential: { type: 'APIKey' }, hostname: 'api.openai.com' } } });
  });

  it('defaults the Anthropic host name', async () => {
    const response = await create(env.operatorNamespace, 'passthroughmodels', passthroughModel('claude', { hostname: undefined, backend: { type: 'Anthropic' } }));
    expect(response).toMatchObject({ status: 201 });
    expect(response.body).toMatchObject({ spec: { provider: { hostname: 'api.anthropic.com', credential: { type: 'APIKey' } } } });
  });

  it('denies duplicate model ids and an LLMModel\'s name', async () => {
    const duplicate = await create(env.operatorNamespace, 'passthroughmodels', passthroughModel('dups', {}, { models: { declared: ['a', 'a'] } }));
    expect(duplicate).toMatchObject({ status: 422 });
    expect(message(duplicate)).toContain('spec.models.declared[1]: "a" is already listed at spec.models.declared[0]; remove the duplicate');
    const collision = await create(env.operatorNamespace, 'passthroughmodels', passthroughModel('qwen'));
    expect(message(collision)).toContain('metadata.name: an LLMModel named "qwen" already exists');
  });

  it('denies a host name label longer than DNS allows (which the CEL rules let through)', async () => {
    const response = await create(env.operatorNamespace, 'passthroughmodels', passthroughModel('longlabel', { hostname: `${'a'.repeat(64)}.example.com` }));
    expect(response).toMatchObject({ status: 422 });
    expect(message(response)).toContain('denied the request: spec.provider.hostname:');
    expect(message(response)).toContain('longer than 63 characters');
  });

  it('denies a second model serving a model id, naming the first and the fix (issue 29, Low)', async () => {
    expect((await create(env.operatorNamespace, 'passthroughmodels', passthroughModel('first-id', {}, { models: { declared: ['shared-id'] } }))).status).toBe(201);
    const response = await create(env.operatorNamespace, 'llmmodels', llmModel('second-id', { model: { name: 'shared-id', source: 'huggingface' } }));
    expect(response).toMatchObject({ status: 422 });
    expect(message(response)).toContain(
      `spec.model.name: model id "shared-id" is already served on the external endpoint by PassthroughModel first-id in "${env.operatorNamespace}"; two models with one id would take turns getting its requests as they are re-created. Choose another id, or remove "shared-id" from PassthroughModel first-id first`,
    );
  });

  it('spec.routing (v1beta1): stores a fallback to a model serving the id it is sent; refuses an unknown model, an LLMModel and a cycle, naming the field and the fix', async () => {
    const beta = (name: string, routing: Record<string, unknown>) => ({
      apiVersion: 'llm.nebari.dev/v1beta1',
      kind: 'PassthroughModel',
      metadata: { name },
      spec: { provider: { hostname: 'api.openai.com', credential: { secretRef: { name: 'openai-key' } } }, models: { declared: [`id-${name}`] }, access: { groups: ['ml'] }, routing },
    });
    const createBeta = (plural: string, body: unknown) => kubeRequest(admin, 'POST', collectionPath(env.operatorNamespace, plural, 'v1beta1'), body);
    expect((await createBeta('passthroughmodels', beta('route-backup', {}))).status).toBe(201);
    const routed = await createBeta('passthroughmodels', beta('routed', { retries: { attempts: 2, statusCodes: [503] }, fallback: [{ name: 'route-backup', model: 'id-route-backup' }] }));
    expect(routed).toMatchObject({ status: 201, body: { spec: { routing: { retries: { attempts: 2, statusCodes: [503] }, fallback: [{ name: 'route-backup', model: 'id-route-backup' }] } } } });
    const unknown = await createBeta('passthroughmodels', beta('route-unknown', { fallback: [{ name: 'nowhere' }] }));
    expect(unknown).toMatchObject({ status: 422 });
    expect(message(unknown)).toContain(`spec.routing.fallback[0].name: there is no PassthroughModel "nowhere" in "${env.operatorNamespace}"; create it first or remove it from the list`);
    const pool = await createBeta('passthroughmodels', beta('route-pool', { split: [{ name: 'qwen', weight: 10 }] }));
    expect(message(pool)).toContain('spec.routing.split[0].name: "qwen" is an LLMModel, and Envoy AI Gateway v1.1 routes a rule either to one InferencePool or to provider backends, never both (envoyproxy/ai-gateway#1256)');
    // route-backup falling back to routed would close a cycle.
    const backupPath = `${collectionPath(env.operatorNamespace, 'passthroughmodels', 'v1beta1')}/route-backup`;
    const stored = (await kubeRequest(admin, 'GET', backupPath)).body as { metadata: Record<string, unknown>; spec: Record<string, unknown> };
    const cycle = await kubeRequest(admin, 'PUT', backupPath, { ...stored, spec: { ...stored.spec, routing: { fallback: [{ name: 'routed', model: 'id-routed' }] } } });
    expect(cycle).toMatchObject({ status: 422 });
    expect(message(cycle)).toContain('spec.routing.fallback[0].name: "routed" leads back to this model (route-backup -> routed -> route-backup); remove one link of the cycle');
    const llm = await createBeta('llmmodels', { ...llmModel('llm-fallback'), apiVersion: 'llm.nebari.dev/v1beta1', spec: { ...llmModel('llm-fallback').spec, routing: { fallback: [{ name: 'route-backup' }] } } });
    expect(message(llm)).toContain('spec.routing.fallback is not supported for an LLMModel: Envoy AI Gateway v1.1 routes a rule either to one InferencePool or to provider backends, never both (envoyproxy/ai-gateway#1256)');
  });

  it('warns that the host name is normalised, and stores it as written', async () => {
    const response = await create(env.operatorNamespace, 'passthroughmodels', passthroughModel('upper', { hostname: 'API.OpenAI.com.' }));
    expect(response).toMatchObject({ status: 201 });
    // A v1alpha1 client also hears that the version is deprecated (the CRD's deprecationWarning).
    expect(response.warnings).toEqual([deprecated('PassthroughModel'), expect.stringContaining('spec.provider.hostname: "API.OpenAI.com." is used as "api.openai.com"')]);
    expect(response.body).toMatchObject({ spec: { provider: { hostname: 'API.OpenAI.com.' } } });
  });
});

describe('AgentDeployment admission through the API server', () => {
  it('allows a reference to an existing model and stores defaults read from it', async () => {
    const response = await create(env.operatorNamespace, 'agentdeployments', agent('helper', { modelRef: { kind: 'LLMModel', name: 'qwen' } }));
    expect(response).toMatchObject({ status: 201 });
    expect(response.body).toMatchObject({ spec: { replicas: 1, model: { modelRef: { modelName: 'Qwen/Qwen3-0.6B-qwen' } } } });
  });

  it('denies a reference to a model that does not exist', async () => {
    const response = await create(team, 'agentdeployments', agent('orphan', { modelRef: { kind: 'LLMModel', name: 'ghost' } }));
    expect(response).toMatchObject({ status: 422 });
    expect(message(response)).toContain(`spec.model.modelRef.name: LLMModel "ghost" does not exist in namespace "${team}"; create it first or fix the reference`);
  });

  it('denies an external API URL the schema accepts but an agent cannot use', async () => {
    const response = await create(team, 'agentdeployments', agent('badport', { externalAPI: { type: 'custom', baseURL: 'http://llm.example.com:0/v1', modelName: 'm' } }));
    expect(response).toMatchObject({ status: 422 });
    expect(message(response)).toContain('spec.model.externalAPI.baseURL: "http://llm.example.com:0/v1" has the port "0"; use a port from 1 to 65535');
  });

  it('allows provider overrides that harden the security context and denies the rest', async () => {
    const external = { externalAPI: { type: 'custom', baseURL: 'https://llm.example.com/v1', modelName: 'm' } };
    const hardened = await create(
      team,
      'agentdeployments',
      agent('hardened', external, {
        provider: { overrides: { workload: { podSecurityContext: { runAsNonRoot: true } }, container: { securityContext: { capabilities: { drop: ['ALL'] } } } } },
      }),
    );
    expect(hardened).toMatchObject({ status: 201 });
    const privileged = await create(team, 'agentdeployments', agent('privileged', external, { provider: { overrides: { container: { securityContext: { privileged: true } } } } }));
    expect(privileged).toMatchObject({ status: 422 });
    expect(message(privileged)).toContain('spec.provider.overrides.container.securityContext.privileged: is not allowed; securityContext overrides may only set');
    const added = await create(team, 'agentdeployments', agent('caps', external, { provider: { overrides: { container: { securityContext: { capabilities: { add: ['NET_ADMIN'] } } } } } }));
    expect(message(added)).toContain('only drop is allowed (found add); capabilities may be removed, never added');
  });

  it('warns when an external API is called without credentials', async () => {
    const response = await create(team, 'agentdeployments', agent('nokey', { externalAPI: { type: 'openai', baseURL: 'https://api.openai.com/v1', modelName: 'gpt-4o' } }));
    expect(response).toMatchObject({ status: 201 });
    // A v1alpha1 client also hears that the version is deprecated (the CRD's deprecationWarning).
    expect(response.warnings).toEqual([deprecated('AgentDeployment'), expect.stringContaining('spec.model.externalAPI.credentialsRef is not set')]);
  });
});
