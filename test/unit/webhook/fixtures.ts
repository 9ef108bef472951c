// Objects and an in-memory ClusterLookups for the rule tests: the rules only see the interface,
// and the real implementation is exercised against a real API server in the integration tests.
import type { AgentDeploymentV1beta1 as AgentDeployment } from '../../../src/api/v1beta1';
import type { LLMModelV1beta1 as LLMModel } from '../../../src/api/v1beta1';
import type { PassthroughModelV1beta1 as PassthroughModel } from '../../../src/api/v1beta1';
import type { AdmissionContext } from '../../../src/webhook/admission';
import type { ClusterLookups, ModelKind } from '../../../src/webhook/lookups';
import type { AdmissionOperation, AdmissionRequest, KubernetesObject, UserInfo } from '../../../src/webhook/review';

export const operatorNamespace = 'nebari-llm-serving-system';

export interface ClusterState {
  namespaces: Record<string, Record<string, string>>;
  models: { kind: ModelKind; namespace: string; name: string; spec: unknown }[];
  /** `user/namespace/secret` triples that may be read (`user/namespace/configmap:name` for ConfigMaps). */
  readableSecrets: string[];
  /** `user/namespace/Kind/name` of models the user may bind agents to (RBAC verb `bind`). */
  bindableModels?: string[];
  failing?: Partial<Record<keyof ClusterLookups, Error>>;
}

export function clusterState(overrides: Partial<ClusterState> = {}): ClusterState {
  return {
    namespaces: { [operatorNamespace]: { 'nebari.dev/managed': 'true' }, team: {} },
    models: [],
    readableSecrets: [],
    ...overrides,
  };
}

export function memoryLookups(state: ClusterState): ClusterLookups & { reviews: string[] } {
  const reviews: string[] = [];
  return {
    reviews,
    async getModel(kind, namespace, name) {
      if (state.failing?.getModel) throw state.failing.getModel;
      const found = state.models.find((m) => m.kind === kind && m.namespace === namespace && m.name === name);
      return found ? ({ kind, metadata: { name, namespace }, spec: found.spec } as KubernetesObject) : undefined;
    },
    async listModels(kind, namespace) {
      if (state.failing?.listModels) throw state.failing.listModels;
      return state.models.filter((m) => m.kind === kind && m.namespace === namespace).map((m) => ({ kind, metadata: { name: m.name, namespace: m.namespace }, spec: m.spec }) as KubernetesObject);
    },
    async userMayGet(user: UserInfo, namespace, resource, name) {
      // Secrets as `user/namespace/name`, ConfigMaps as `user/namespace/configmap:name`.
      const key = `${user.username}/${namespace}/${resource === 'configmaps' ? 'configmap:' : ''}${name}`;
      reviews.push(key);
      if (state.failing?.userMayGet) throw state.failing.userMayGet;
      return { allowed: state.readableSecrets.includes(key) };
    },
    async userMayBindModel(user: UserInfo, namespace, kind, name) {
      const key = `${user.username}/${namespace}/${kind}/${name}`;
      reviews.push(`bind:${key}`);
      if (state.failing?.userMayBindModel) throw state.failing.userMayBindModel;
      return { allowed: (state.bindableModels ?? []).includes(key) };
    },
  };
}

export function context(state: ClusterState = clusterState()): AdmissionContext & { lookups: ReturnType<typeof memoryLookups> } {
  return { operatorNamespace, agentNamespaces: [operatorNamespace, 'team'], lookups: memoryLookups(state) };
}

export function request<T extends { kind?: string; metadata?: { name?: string; namespace?: string } }>(
  object: T,
  options: { operation?: AdmissionOperation; oldObject?: T; user?: string; version?: string } = {},
): AdmissionRequest<T> {
  return {
    uid: 'uid-1',
    kind: { group: 'llm.nebari.dev', version: options.version ?? 'v1beta1', kind: object.kind ?? '' },
    operation: options.operation ?? 'CREATE',
    name: object.metadata?.name,
    namespace: object.metadata?.namespace,
    userInfo: { username: options.user ?? 'alice', groups: ['system:authenticated'] },
    object,
    oldObject: options.oldObject,
    dryRun: false,
  };
}

export function llmModel(spec: Partial<LLMModel['spec']> = {}, metadata: Partial<LLMModel['metadata']> = {}): LLMModel {
  return {
    apiVersion: 'llm.nebari.dev/v1beta1',
    kind: 'LLMModel',
    metadata: { name: 'qwen', namespace: operatorNamespace, ...metadata },
    spec: {
      model: { name: 'Qwen/Qwen3-0.6B', source: 'huggingface' },
      resources: { gpu: { count: 1, type: 'nvidia' } },
      access: { public: true },
      ...spec,
    },
  };
}

export function passthroughModel(
  provider: Partial<PassthroughModel['spec']['provider']> = {},
  spec: Partial<PassthroughModel['spec']> = {},
  metadata: Partial<PassthroughModel['metadata']> = {},
): PassthroughModel {
  return {
    apiVersion: 'llm.nebari.dev/v1beta1',
    kind: 'PassthroughModel',
    metadata: { name: 'openai', namespace: operatorNamespace, ...metadata },
    spec: {
      provider: { hostname: 'api.openai.com', credential: { secretRef: { name: 'openai-key' } }, ...provider },
      models: { declared: ['gpt-4o'] },
      access: { groups: ['ml'] },
      ...spec,
    },
  };
}

export function agentDeployment(spec: Partial<AgentDeployment['spec']> = {}, metadata: Partial<AgentDeployment['metadata']> = {}): AgentDeployment {
  return {
    apiVersion: 'llm.nebari.dev/v1beta1',
    kind: 'AgentDeployment',
    metadata: { name: 'helper', namespace: 'team', ...metadata },
    spec: {
      container: { image: 'registry.example.com/agent:1.0' },
      model: { externalAPI: { type: 'openai', baseURL: 'https://api.openai.com/v1', modelName: 'gpt-4o', credentialsRef: { name: 'openai', key: 'apiKey' } } },
      ...spec,
    },
  };
}
