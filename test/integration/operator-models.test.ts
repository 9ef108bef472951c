// LLMModel (direct vLLM provider) and AgentDeployment (container backend) reconciled by the
// operator process against the shared control plane (cluster mode: kwok runs the pods, garbage
// collection removes owned objects).
import { applyObject, deleteObject, getObject, kubeconfigPath, uniqueName } from '../support/cluster';
import { waitFor } from '../support/processes';
import { KubeRest, KubeObject } from '../../src/kube/rest';
import { OperatorProcess, condition, startOperator, prepareOperatorNamespace } from './operator-support';

const ns = uniqueName('op-models');
const GROUP = 'llm.nebari.dev/v1alpha1';
let client: KubeRest;
let operator: OperatorProcess;

const llmModel = (name: string): KubeObject => ({
  apiVersion: GROUP,
  kind: 'LLMModel',
  metadata: { name, namespace: ns },
  spec: {
    model: { name: 'Qwen/Qwen3-0.6B', source: 'huggingface', storage: { type: 'emptyDir' } },
    provider: { name: 'vllm' },
    resources: { gpu: { count: 0, type: 'nvidia' }, requests: { cpu: '100m', memory: '128Mi' } },
    access: { public: true },
  },
});
const agent = (name: string, model: Record<string, unknown>): KubeObject => ({
  apiVersion: GROUP,
  kind: 'AgentDeployment',
  metadata: { name, namespace: ns },
  spec: { image: 'example.com/agent:1', model },
});
const get = (kind: string, name: string, apiVersion = GROUP) => getObject<KubeObject>({ apiVersion, kind, metadata: { name, namespace: ns } });
const phase = (o?: KubeObject) => (o?.status as { phase?: string } | undefined)?.phase;

beforeAll(async () => {
  client = await prepareOperatorNamespace(ns, { credential: false });
  operator = startOperator({ kubeconfigPath: kubeconfigPath(), namespace: ns, name: 'models-operator' });
});

afterAll(async () => {
  if (process.env.NLS_OPERATOR_LOG) require('node:fs').writeFileSync(process.env.NLS_OPERATOR_LOG, operator.lines.join('\n')); // eslint-disable-line @typescript-eslint/no-require-imports
  if (operator?.child.exitCode === null) await operator.kill();
  client?.close();
});

describe('LLMModel with the vLLM provider', () => {
  it('creates the serving Deployment, Service, endpoint picker, InferencePool and routes, and turns Ready when the pods are', async () => {
    await applyObject(llmModel('tiny'));
    await waitFor('LLMModel tiny Ready', async () => phase(await get('LLMModel', 'tiny')) === 'Ready', { timeoutMs: 120_000 });
    const model = (await get('LLMModel', 'tiny'))!;
    expect(model.status).toMatchObject({ provider: { name: 'vllm', resourceKind: 'Deployment', resourceName: 'tiny-vllm' }, replicas: { ready: 1, desired: 1 } });
    for (const type of ['ProviderReady', 'InferencePoolReady', 'ExternalEndpointReady', 'InternalEndpointReady', 'ModelServing']) {
      expect({ type, status: condition(model, type)?.status }).toEqual({ type, status: 'True' });
    }
    const deployment = await get('Deployment', 'tiny-vllm', 'apps/v1');
    const pod = (deployment!.spec as { template: { spec: { containers: Array<{ args: string[] }> } } }).template.spec;
    expect(pod.containers[0].args).toContain('--served-model-name=Qwen/Qwen3-0.6B');
    expect(deployment!.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'LLMModel', name: 'tiny', controller: true });
    for (const [apiVersion, kind, name] of [
      ['v1', 'Service', 'tiny-vllm'],
      ['apps/v1', 'Deployment', 'tiny-epp'],
      ['v1', 'Service', 'tiny-epp'],
      ['inference.networking.k8s.io/v1', 'InferencePool', 'tiny'],
      ['aigateway.envoyproxy.io/v1beta1', 'AIGatewayRoute', 'tiny-external'],
      ['gateway.envoyproxy.io/v1alpha1', 'SecurityPolicy', 'tiny-internal-auth'],
    ]) {
      expect({ kind, name, exists: (await get(kind, name, apiVersion)) !== undefined }).toEqual({ kind, name, exists: true });
    }
  });
});

describe('AgentDeployment (container backend)', () => {
  it('binds to a model through the gateway with a key minted for it, injected from a Secret', async () => {
    await applyObject(agent('helper', { modelRef: { kind: 'LLMModel', name: 'tiny' } }));
    await waitFor('agent helper Running', async () => phase(await get('AgentDeployment', 'helper')) === 'Running', { timeoutMs: 120_000 });
    const a = (await get('AgentDeployment', 'helper'))!;
    expect(a.status).toMatchObject({
      modelBinding: { bindingMode: 'modelRef', apiType: 'openai', baseURL: 'https://llm.example.com/v1', modelName: 'Qwen/Qwen3-0.6B', credentialsRef: { name: 'helper-model-key', key: 'apiKey' } },
      runtime: { workloadRef: { kind: 'Deployment', name: 'helper' }, address: `http://helper.${ns}.svc:8080` },
    });
    const env = ((await get('Deployment', 'helper', 'apps/v1'))!.spec as { template: { spec: { containers: Array<{ env: Array<{ name: string; value?: string; valueFrom?: unknown }> }> } } }).template.spec.containers[0].env;
    expect(env).toEqual(expect.arrayContaining([
      { name: 'OPENAI_BASE_URL', value: 'https://llm.example.com/v1' },
      { name: 'OPENAI_MODEL', value: 'Qwen/Qwen3-0.6B' },
      { name: 'OPENAI_API_KEY', valueFrom: { secretKeyRef: { name: 'helper-model-key', key: 'apiKey' } } },
    ]));
    // The agent's key is one of the model's keys, so the external policy lets it in.
    const agentKey = (await get('Secret', 'helper-model-key', 'v1')) as KubeObject & { data: { apiKey: string } };
    const modelKeys = (await get('Secret', 'tiny-api-keys', 'v1')) as KubeObject & { data: Record<string, string> };
    const clientId = Object.entries(modelKeys.data).find(([, v]) => v === agentKey.data.apiKey)?.[0];
    expect(clientId).toBeDefined();
    await waitFor('the SecurityPolicy to allow the agent', async () => JSON.stringify((await get('SecurityPolicy', 'tiny-external-auth', 'gateway.envoyproxy.io/v1alpha1'))?.spec).includes(clientId!));
    // Deleting the agent revokes its key on the model.
    await deleteObject({ apiVersion: GROUP, kind: 'AgentDeployment', metadata: { name: 'helper', namespace: ns } });
    await waitFor('the agent key revoked', async () => {
      const keys = (await get('Secret', 'tiny-api-keys', 'v1')) as (KubeObject & { data?: Record<string, string> }) | undefined;
      return !(clientId! in (keys?.data ?? {}));
    });
  });

  it('checks externalAPI credentials and binds once the Secret exists', async () => {
    await applyObject(agent('ext', { externalAPI: { type: 'anthropic', baseURL: 'https://api.anthropic.com', modelName: 'claude-sonnet-4', credentialsRef: { name: 'anthropic', key: 'apiKey' } } }));
    await waitFor('CredentialSecretNotFound', async () => condition(await get('AgentDeployment', 'ext'), 'ModelBound')?.reason === 'CredentialSecretNotFound');
    await applyObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'anthropic', namespace: ns }, stringData: { apiKey: 'sk-ant-test-value-not-real-0000000000' } });
    await waitFor('ext bound', async () => condition(await get('AgentDeployment', 'ext'), 'ModelBound')?.status === 'True', { timeoutMs: 60_000 });
    const env = ((await get('Deployment', 'ext', 'apps/v1'))!.spec as { template: { spec: { containers: Array<{ env: Array<{ name: string }> }> } } }).template.spec.containers[0].env.map((e) => e.name);
    expect(env).toEqual(expect.arrayContaining(['ANTHROPIC_BASE_URL', 'ANTHROPIC_MODEL', 'ANTHROPIC_API_KEY']));
    expect(JSON.stringify((await get('AgentDeployment', 'ext'))!.status)).not.toContain('sk-ant-test');
  });
});

describe('LLMModel deletion', () => {
  it('removes its keys and, through garbage collection, its serving objects', async () => {
    await deleteObject({ apiVersion: GROUP, kind: 'LLMModel', metadata: { name: 'tiny', namespace: ns } });
    await waitFor('model gone', async () => (await get('LLMModel', 'tiny')) === undefined);
    expect(await get('Secret', 'tiny-api-keys', 'v1')).toBeUndefined();
    await waitFor('Deployment garbage-collected', async () => (await get('Deployment', 'tiny-vllm', 'apps/v1')) === undefined, { timeoutMs: 60_000 });
  });
});
