// Data for test/integration/crds.test.ts: objects the API server must refuse (with the message
// it must give) and objects written with the upstream Nebari pack's field lists that it must
// accept unchanged. Pure data, so the table reads as a specification of the CEL rules.
import { API_GROUP_VERSION } from '../../src/api';

type Obj = Record<string, unknown>;

/** One object the API server must refuse. With `before`, `before` is created first and the object is applied as an update. */
export interface InvalidCase {
  readonly name: string;
  readonly object: Obj;
  readonly before?: Obj;
  /** Every string must appear in the API server's message. */
  readonly expect: string[];
  /**
   * `webhook`: refused by the admission webhook, not by the CRD (a check CEL cannot afford on
   * every Kubernetes minor the chart claims); the CRD alone admits it.
   */
  readonly by?: 'webhook';
}

function merge(base: unknown, patch: unknown): unknown {
  if (patch === undefined) return base;
  if (patch === null) return undefined;
  if (typeof base !== 'object' || base === null || Array.isArray(base) || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Obj = { ...(base as Obj) };
  for (const [k, v] of Object.entries(patch as Obj)) {
    const merged = merge(out[k], v);
    if (merged === undefined) delete out[k];
    else out[k] = merged;
  }
  return out;
}

function object(kind: string, name: string, spec: Obj): Obj {
  return { apiVersion: API_GROUP_VERSION, kind, metadata: { name }, spec };
}

const LLM_BASE = {
  model: { name: 'Qwen/Qwen3-8B', source: 'huggingface' },
  resources: { gpu: { count: 1 } },
  access: { groups: ['llm-users'] },
};
/** A valid LLMModel with `patch` deep-merged into its spec (null deletes a field). */
export function llmModel(name: string, patch: Obj = {}): Obj {
  return object('LLMModel', name, merge(LLM_BASE, patch) as Obj);
}

const PTM_BASE = {
  provider: { hostname: 'api.openai.com', credentialSecretName: 'openai-key' },
  models: { declared: ['gpt-4.1'] },
  access: { public: true },
};
/** A valid PassthroughModel with `patch` deep-merged into its spec. */
export function passthroughModel(name: string, patch: Obj = {}): Obj {
  return object('PassthroughModel', name, merge(PTM_BASE, patch) as Obj);
}
const hostname = (name: string, value: string) => passthroughModel(name, { provider: { hostname: value } });
const bedrock = (name: string, provider: Obj = {}) =>
  passthroughModel(name, {
    provider: merge({ hostname: null, credentialSecretName: null, backend: { type: 'Bedrock', bedrock: { region: 'us-east-1' } } }, provider) as Obj,
  });

const AGENT_BASE = {
  image: 'registry.example.com/agent:1.0.0',
  model: { modelRef: { kind: 'LLMModel', name: 'qwen3-8b' } },
};
/** A valid AgentDeployment with `patch` deep-merged into its spec. */
export function agentDeployment(name: string, patch: Obj = {}): Obj {
  return object('AgentDeployment', name, merge(AGENT_BASE, patch) as Obj);
}
const EXTERNAL = { type: 'openai', baseURL: 'https://api.openai.com/v1', modelName: 'gpt-4.1' };

const HOSTNAME_FIX_PORT = 'has a port; put the port in spec.provider.port';

export const INVALID_CASES: InvalidCase[] = [
  // PassthroughModel hostnames: every case of seed 001 (underscores, empty labels, URLs, ports, paths, whitespace).
  { name: 'hostname with an underscore', object: hostname('h-underscore', 'api_openai.com'), expect: ['"api_openai.com" contains an underscore'] },
  { name: 'hostname with an underscore in the last label', object: hostname('h-underscore2', 'llm.my_corp'), expect: ['contains an underscore'] },
  { name: 'hostname with a leading empty label', object: hostname('h-leading-dot', '.openai.com'), expect: ['".openai.com" has an empty label; remove the extra dot'] },
  { name: 'hostname with an empty inner label', object: hostname('h-double-dot', 'api..openai.com'), expect: ['has an empty label'] },
  { name: 'hostname with two trailing dots', object: hostname('h-two-trailing', 'api.openai.com..'), expect: ['has an empty label'] },
  { name: 'hostname that is a URL', object: hostname('h-url', 'https://api.openai.com'), expect: ['"https://api.openai.com" is a URL; set only the host name'] },
  { name: 'hostname that is a URL with a path', object: hostname('h-url-path', 'https://openrouter.ai/api/v1'), expect: ['is a URL'] },
  { name: 'hostname with a port', object: hostname('h-port', 'Api.OpenAI.com:443'), expect: [`spec.provider.hostname: "Api.OpenAI.com:443" ${HOSTNAME_FIX_PORT}`] },
  { name: 'hostname with a path', object: hostname('h-path', 'openrouter.ai/api/v1'), expect: ['has a path; put the path prefix in spec.provider.schemaVersion'] },
  { name: 'hostname with a port and a path', object: hostname('h-port-path', 'openrouter.ai:443/api'), expect: ['has a path', HOSTNAME_FIX_PORT] },
  { name: 'hostname with leading whitespace', object: hostname('h-space-lead', ' api.openai.com'), expect: ['spec.provider.hostname contains whitespace (a space, tab or line break); remove it'] },
  { name: 'hostname with inner whitespace', object: hostname('h-space-inner', 'api openai.com'), expect: ['contains whitespace'] },
  { name: 'hostname with a trailing newline', object: hostname('h-newline', 'api.openai.com\n'), expect: ['contains whitespace'] },
  { name: 'hostname with a tab', object: hostname('h-tab', 'api.openai.com\t'), expect: ['contains whitespace'] },
  { name: 'hostname with a label starting with -', object: hostname('h-hyphen', '-api.openai.com'), expect: ['is not a DNS name'] },
  { name: 'hostname with a label ending with -', object: hostname('h-hyphen-end', 'api-.openai.com'), expect: ['is not a DNS name'] },
  { name: 'hostname with a character DNS forbids', object: hostname('h-bang', 'api!.openai.com'), expect: ['is not a DNS name'] },
  { name: 'empty hostname', object: hostname('h-empty', ''), expect: ['spec.provider.hostname in body should be at least 1 chars long'] },

  // PassthroughModel backends and credentials.
  { name: 'Bedrock without a region', object: bedrock('b-no-region', { backend: { bedrock: null } }), expect: ['spec.provider.backend.bedrock.region is required when spec.provider.backend.type is Bedrock'] },
  { name: 'bedrock settings on an OpenAI backend', object: passthroughModel('b-on-openai', { provider: { backend: { type: 'OpenAI', bedrock: { region: 'us-east-1' } } } }), expect: ['spec.provider.backend.bedrock is only valid when spec.provider.backend.type is Bedrock'] },
  { name: 'Bedrock with an API key Secret', object: bedrock('b-secret', { credentialSecretName: 'aws-key' }), expect: ['spec.provider.credentialSecretName must be omitted for Bedrock'] },
  { name: 'Bedrock with an APIKey credential', object: bedrock('b-apikey', { credential: { type: 'APIKey' } }), expect: ['spec.provider.credential.type must be WorkloadIdentity for Bedrock'] },
  { name: 'Bedrock with a path prefix', object: bedrock('b-prefix', { schemaVersion: 'api/v1' }), expect: ['spec.provider.schemaVersion applies only to OpenAI and Anthropic backends'] },
  { name: 'Bedrock region that is not a DNS label', object: bedrock('b-region', { backend: { bedrock: { region: 'US_EAST_1' } } }), expect: ['spec.provider.backend.bedrock.region: "US_EAST_1" is not a region name'] },
  { name: 'Bedrock amazonaws hostname for another region', object: bedrock('b-host-region', { hostname: 'bedrock-runtime.eu-west-1.amazonaws.com' }), expect: ['an amazonaws endpoint must contain the region'] },
  { name: 'OpenAI without an API key Secret', object: passthroughModel('o-no-secret', { provider: { credentialSecretName: null } }), expect: ['spec.provider.credentialSecretName is required for the OpenAI backend'] },
  { name: 'OpenAI without a hostname', object: passthroughModel('o-no-host', { provider: { hostname: null } }), expect: ['spec.provider.hostname is required for the OpenAI backend'] },
  { name: 'OpenAI with workload identity', object: passthroughModel('o-wi', { provider: { credential: { type: 'WorkloadIdentity' } } }), expect: ['WorkloadIdentity is supported only for Bedrock'] },
  { name: 'Anthropic without an API key Secret', object: passthroughModel('a-no-secret', { provider: { hostname: null, credentialSecretName: null, backend: { type: 'Anthropic' } } }), expect: ['spec.provider.credentialSecretName is required for the Anthropic backend'] },
  { name: 'AzureOpenAI without an api-version', object: passthroughModel('az-no-version', { provider: { hostname: 'r.openai.azure.com', backend: { type: 'AzureOpenAI' } } }), expect: ['spec.provider.backend.azureOpenAI.apiVersion is required'] },
  { name: 'AzureOpenAI with a malformed api-version', object: passthroughModel('az-bad-version', { provider: { hostname: 'r.openai.azure.com', backend: { type: 'AzureOpenAI', azureOpenAI: { apiVersion: 'latest' } } } }), expect: ['spec.provider.backend.azureOpenAI.apiVersion', 'should match'] },
  { name: 'unknown backend type', object: passthroughModel('b-gemini', { provider: { backend: { type: 'Gemini' } } }), expect: ['spec.provider.backend.type', 'Unsupported value: "Gemini"'] },
  { name: 'port 0', object: passthroughModel('p-zero', { provider: { port: 0 } }), expect: ['spec.provider.port', 'greater than or equal to 1'] },
  { name: 'port above 65535', object: passthroughModel('p-big', { provider: { port: 70000 } }), expect: ['spec.provider.port', 'less than or equal to 65535'] },
  { name: 'schemaVersion that is a URL', object: passthroughModel('sv-url', { provider: { schemaVersion: 'https://openrouter.ai/api/v1' } }), expect: ['must be a path prefix such as v1 or api/v1'] },
  { name: 'no model routed', object: passthroughModel('m-none', { models: null }), expect: ['spec.models: no model would be routed'] },
  { name: 'empty declared list without catchAll', object: passthroughModel('m-empty', { models: { declared: [], catchAll: false } }), expect: ['spec.models: no model would be routed'] },
  { name: 'empty model id', object: passthroughModel('m-empty-id', { models: { declared: [''] } }), expect: ['spec.models.declared[0]', 'at least 1 chars long'] },
  { name: 'model id with a line break', object: passthroughModel('m-newline', { models: { declared: ['gpt-4.1\n'] } }), expect: ['spec.models.declared[0]', 'spec.models.declared: the model id contains a control character (such as a line break or a tab)'] },
  { name: 'model id with a leading space', object: passthroughModel('m-space', { models: { declared: [' gpt-4.1'] } }), expect: ['spec.models.declared[0]', 'has leading or trailing whitespace'] },
  { name: 'both endpoints disabled', object: passthroughModel('e-both-off', { endpoints: { external: { enabled: false }, internal: { enabled: false } } }), expect: ['spec.endpoints: both endpoints are disabled'] },
  { name: 'PassthroughModel without access', object: passthroughModel('acc-none', { access: { public: false } }), expect: ['spec.access: nobody could call this model'] },
  {
    name: 'changing the backend type',
    before: passthroughModel('imm-backend'),
    object: passthroughModel('imm-backend', { provider: { hostname: null, backend: { type: 'Anthropic' } } }),
    expect: ['spec.provider.backend.type is immutable (was OpenAI)'],
  },

  // LLMModel.
  { name: 'LLMModel without model.source', object: llmModel('l-no-source', { model: { source: null } }), expect: ['spec.model.source', 'Required value'] },
  { name: 'oci source without an image', object: llmModel('l-oci', { model: { source: 'oci' } }), expect: ['spec.model.image is required when spec.model.source is oci'] },
  { name: 'unknown model source', object: llmModel('l-s3', { model: { source: 's3' } }), expect: ['Unsupported value: "s3"'] },
  { name: 'too many GPUs', object: llmModel('l-gpus', { resources: { gpu: { count: 65 } } }), expect: ['spec.resources.gpu.count', 'less than or equal to 64'] },
  { name: 'negative GPU count', object: llmModel('l-gpus-neg', { resources: { gpu: { count: -1 } } }), expect: ['spec.resources.gpu.count', 'greater than or equal to 0'] },
  { name: 'too many replicas', object: llmModel('l-replicas', { serving: { replicas: 33 } }), expect: ['spec.serving.replicas', 'less than or equal to 32'] },
  { name: 'tensor parallelism 0', object: llmModel('l-tp0', { serving: { tensorParallelism: 0 } }), expect: ['spec.serving.tensorParallelism', 'greater than or equal to 1'] },
  { name: 'unknown provider', object: llmModel('l-ollama', { provider: { name: 'ollama' } }), expect: ['spec.provider.name', 'Unsupported value: "ollama"'] },
  { name: 'overrides setting metadata', object: llmModel('l-ovr-meta', { provider: { name: 'kaito', overrides: { metadata: { name: 'x' } } } }), expect: ['spec.provider.overrides may not set apiVersion, kind, metadata or status'] },
  { name: 'overrides setting kind', object: llmModel('l-ovr-kind', { provider: { name: 'dynamo', overrides: { kind: 'Deployment' } } }), expect: ['spec.provider.overrides may not set'] },
  { name: 'request timeout that is not a duration', object: llmModel('l-timeout', { endpoints: { requestTimeout: '10 minutes' } }), expect: ['spec.endpoints.requestTimeout', 'should match'] },
  { name: 'subdomain that is not a DNS label', object: llmModel('l-subdomain', { endpoints: { external: { subdomain: 'My_Model' } } }), expect: ['spec.endpoints.external.subdomain: "My_Model" is not a DNS label'] },
  { name: 'unknown storage type', object: llmModel('l-storage', { model: { storage: { type: 'hostPath' } } }), expect: ['Unsupported value: "hostPath"'] },
  { name: 'LLMModel without access', object: llmModel('l-access', { access: { groups: [] } }), expect: ['spec.access: nobody could call this model'] },
  { name: 'name too long for a subdomain', object: llmModel(`l-${'x'.repeat(62)}`), expect: ['metadata.name is longer than 63 characters'] },
  { name: 'LLMModel name with a dot', object: llmModel('llama-3.1-8b'), expect: ['metadata.name: "llama-3.1-8b" becomes part of the model\'s Service names', 'DNS-1035', 'for example to "llama-3-1-8b"'] },
  { name: 'LLMModel name starting with a digit', object: llmModel('3b-model'), expect: ['metadata.name: "3b-model"', 'starting with a letter', 'for example to "m-3b-model"'] },
  { name: 'LLMModel name of 64 characters with a dot, with a subdomain', object: llmModel(`l.${'x'.repeat(62)}`, { endpoints: { external: { subdomain: 'l' } } }), expect: ['becomes part of the model\'s Service names'] },
  { name: 'access group that is empty', object: llmModel('l-group-empty', { access: { groups: [''] } }), expect: ['spec.access.groups[0]', 'should be at least 1 chars long'] },
  { name: 'access group with a line break', object: llmModel('l-group-newline', { access: { groups: ['llm-users\n'] } }), expect: ['spec.access.groups: the group name contains a control character'] },
  { name: 'access group with a trailing space', object: passthroughModel('p-group-space', { access: { groups: ['llm-users '] } }), expect: ['spec.access.groups: "llm-users " has leading or trailing whitespace'] },
  { name: 'served model id with a line break', object: llmModel('l-id-newline', { model: { name: 'Qwen/Qwen3-8B\r\n' } }), expect: ['spec.model.name: the model id contains a control character'] },
  { name: 'served model id with a trailing space', object: llmModel('l-id-space', { model: { name: 'Qwen/Qwen3-8B ' } }), expect: ['spec.model.name: "Qwen/Qwen3-8B " has leading or trailing whitespace'] },
  { name: 'negative storage size', object: llmModel('l-size-neg', { model: { storage: { size: '-5Gi' } } }), expect: ['spec.model.storage.size: "-5Gi" is not a size the volume can have; write a quantity above zero'] },
  { name: 'zero storage size', object: llmModel('l-size-zero', { model: { storage: { size: '0Gi' } } }), expect: ['spec.model.storage.size: "0Gi" is not a size'] },
  { name: 'storage size that is not a quantity', object: llmModel('l-size-word', { model: { storage: { size: 'large' } } }), expect: ['spec.model.storage.size: "large" is not a size'] },
  { name: 'negative cpu request', object: llmModel('l-cpu-neg', { resources: { requests: { cpu: '-1' } } }), expect: ['spec.resources.requests[cpu]', 'every quantity must be above zero'], by: 'webhook' },
  { name: 'zero memory limit (an integer)', object: llmModel('l-mem-zero', { resources: { limits: { memory: 0 } } }), expect: ['spec.resources.limits[memory]', 'every quantity must be above zero'], by: 'webhook' },
  {
    name: 'changing model.name',
    before: llmModel('imm-name'),
    object: llmModel('imm-name', { model: { name: 'Qwen/Qwen3-14B' } }),
    expect: ['spec.model.name is immutable'],
  },
  {
    name: 'changing model.source',
    before: llmModel('imm-source'),
    object: llmModel('imm-source', { model: { source: 'oci', image: 'registry.example.com/qwen:1' } }),
    expect: ['spec.model.source is immutable'],
  },
  {
    name: 'changing provider.name',
    before: llmModel('imm-provider', { provider: { name: 'kaito' } }),
    object: llmModel('imm-provider', { provider: { name: 'dynamo' } }),
    expect: ['spec.provider.name is immutable (was kaito)'],
  },
  {
    name: 'setting a provider on a model served by the default vllm',
    before: llmModel('imm-provider-default'),
    object: llmModel('imm-provider-default', { provider: { name: 'kuberay' } }),
    expect: ['spec.provider.name is immutable (was vllm)'],
  },

  // AgentDeployment.
  { name: 'agent bound to two models', object: agentDeployment('ad-two', { model: { externalAPI: EXTERNAL } }), expect: ['spec.model: set exactly one of spec.model.modelRef'] },
  { name: 'agent bound to no model', object: agentDeployment('ad-none', { model: { modelRef: null } }), expect: ['spec.model: set exactly one of'] },
  { name: 'agent without image or framework', object: agentDeployment('ad-noimage', { image: null }), expect: ['spec: set exactly one of spec.image'] },
  { name: 'agent with image and framework', object: agentDeployment('ad-both', { framework: { name: 'langgraph' } }), expect: ['spec: set exactly one of spec.image'] },
  { name: 'modelRef to another kind', object: agentDeployment('ad-kind', { model: { modelRef: { kind: 'Deployment' } } }), expect: ['spec.model.modelRef.kind', 'Unsupported value: "Deployment"'] },
  { name: 'PassthroughModel ref without a model id', object: agentDeployment('ad-ptm', { model: { modelRef: { kind: 'PassthroughModel', name: 'openai' } } }), expect: ['spec.model.modelRef.modelName is required for a PassthroughModel'] },
  { name: 'externalAPI base URL without a scheme', object: agentDeployment('ad-url', { model: { modelRef: null, externalAPI: { ...EXTERNAL, baseURL: 'api.openai.com/v1' } } }), expect: ['spec.model.externalAPI.baseURL: "api.openai.com/v1" is not an absolute http(s) URL'] },
  { name: 'externalAPI base URL with another scheme', object: agentDeployment('ad-ftp', { model: { modelRef: null, externalAPI: { ...EXTERNAL, baseURL: 'ftp://models.example.com' } } }), expect: ['is not an absolute http(s) URL'] },
  { name: 'externalAPI base URL with credentials', object: agentDeployment('ad-userinfo', { model: { modelRef: null, externalAPI: { ...EXTERNAL, baseURL: 'https://user:secret@api.example.com/v1' } } }), expect: ['spec.model.externalAPI.baseURL must not contain a user name or password'] },
  { name: 'unknown external API type', object: agentDeployment('ad-type', { model: { modelRef: null, externalAPI: { ...EXTERNAL, type: 'gemini' } } }), expect: ['Unsupported value: "gemini"'] },
  { name: 'agent overrides outside workload and container', object: agentDeployment('ad-overrides', { provider: { overrides: { pod: { hostNetwork: true } } } }), expect: ['spec.provider.overrides may only contain the workload and container sections'] },
  { name: 'job with several replicas', object: agentDeployment('ad-job', { lifecycle: 'job', replicas: 3 }), expect: ['spec.replicas: a job agent runs one pod'] },
  { name: 'unknown lifecycle', object: agentDeployment('ad-cron', { lifecycle: 'cronjob' }), expect: ['spec.lifecycle', 'Unsupported value: "cronjob"'] },
  { name: 'OTLP endpoint without a scheme', object: agentDeployment('ad-otlp', { observability: { otlp: { endpoint: 'collector:4317' } } }), expect: ['spec.observability.otlp.endpoint: "collector:4317" is not an absolute http(s) URL'] },
  { name: 'framework name with upper case', object: agentDeployment('ad-fw', { image: null, framework: { name: 'LangGraph' } }), expect: ['spec.framework.name', 'should match'] },
  { name: 'agent name that is not a DNS-1035 label', object: agentDeployment('agent.v2'), expect: ['metadata.name must be a DNS-1035 label'] },
  { name: 'agent name starting with a digit', object: agentDeployment('1agent'), expect: ['metadata.name must be a DNS-1035 label'] },
  { name: 'agent modelRef model id with a tab', object: agentDeployment('ad-id-tab', { model: { modelRef: { modelName: 'qwen\t3' } } }), expect: ['spec.model.modelRef.modelName: the model id contains a control character'] },
  { name: 'agent external model id with a trailing space', object: agentDeployment('ad-id-space', { model: { modelRef: null, externalAPI: { ...EXTERNAL, modelName: 'gpt-4.1 ' } } }), expect: ['spec.model.externalAPI.modelName: "gpt-4.1 " has leading or trailing whitespace'] },
  { name: 'agent zero memory request', object: agentDeployment('ad-mem-zero', { resources: { requests: { memory: '0.0Mi' } } }), expect: ['spec.resources.requests[memory]', 'every quantity must be above zero'], by: 'webhook' },
  { name: 'agent negative cpu limit', object: agentDeployment('ad-cpu-neg', { resources: { limits: { cpu: -2 } } }), expect: ['spec.resources.limits[cpu]', 'every quantity must be above zero'], by: 'webhook' },
  {
    name: 'changing the framework',
    before: agentDeployment('imm-fw', { image: null, framework: { name: 'langgraph' } }),
    object: agentDeployment('imm-fw', { image: null, framework: { name: 'crewai' } }),
    expect: ['spec.framework is immutable'],
  },
  {
    name: 'switching from an image to a framework',
    before: agentDeployment('imm-fw-switch'),
    object: agentDeployment('imm-fw-switch', { image: null, framework: { name: 'langgraph' } }),
    expect: ['spec.framework is immutable'],
  },
];

/** Hostnames the operator normalises, so the API server must accept them. */
export const ACCEPTED_HOSTNAMES = ['Api.OpenAI.com', 'api.openai.com.', 'openrouter.ai', 'localhost', 'my-llm.internal.example.org', '10-0-0-1.nip.io'];

/**
 * Objects written with every field of the upstream Nebari pack's llm.nebari.dev/v1alpha1 kinds
 * (field lists in the pack's CRDs: LLMModel and PassthroughModel, including the Bedrock
 * additions). The compatibility promise is that each is accepted and stored without pruning.
 */
export const UPSTREAM_OBJECTS: Array<{ name: string; object: Obj }> = [
  {
    name: 'LLMModel with every upstream field',
    object: object('LLMModel', 'up-full', {
      model: {
        name: 'mistralai/Devstral-Small-2505',
        source: 'huggingface',
        revision: 'a1b2c3d4',
        authSecretName: 'hf-token',
        storage: { type: 'pvc', size: '200Gi', storageClassName: 'longhorn' },
        preload: true,
      },
      resources: {
        gpu: { count: 2, type: 'nvidia' },
        requests: { cpu: '8', memory: '64Gi' },
        limits: { cpu: 16, memory: '128Gi' },
      },
      serving: {
        image: 'registry.example.com/llm-d/llm-d-cuda:v0.7.0',
        command: ['python3', '-m', 'vllm.entrypoints.openai.api_server'],
        replicas: 1,
        tensorParallelism: 2,
        dataParallelism: 1,
        vllmArgs: ['--max-model-len=32768', '--enable-prefix-caching'],
        updateStrategy: 'RollingUpdate',
        monitoring: { enabled: true },
      },
      access: { public: false, groups: ['llm-users', 'admins'] },
      endpoints: { external: { enabled: true, subdomain: 'devstral' }, internal: { enabled: false }, requestTimeout: '1h30m' },
      advanced: {
        vllm: {
          extraArgs: ['--disable-log-requests'],
          extraEnv: [
            { name: 'VLLM_LOGGING_LEVEL', value: 'DEBUG' },
            { name: 'HF_TOKEN', valueFrom: { secretKeyRef: { name: 'hf-token', key: 'HF_TOKEN' } } },
          ],
          tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }, { key: 'spot', operator: 'Equal', value: 'true', effect: 'NoExecute', tolerationSeconds: 300 }],
          nodeSelector: { 'nvidia.com/gpu.product': 'NVIDIA-A100-SXM4-80GB' },
          affinity: {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1a'] }] }],
              },
            },
          },
        },
        inferencePool: { schedulerConfig: { apiVersion: 'inference.networking.x-k8s.io/v1alpha1', kind: 'EndpointPickerConfig', plugins: [{ type: 'queue-scorer' }] } },
      },
    }),
  },
  {
    name: 'LLMModel with only the upstream required fields',
    object: object('LLMModel', 'up-minimal', { model: { name: 'Qwen/Qwen3-0.6B', source: 'huggingface' }, resources: { gpu: { count: 0 } }, access: { public: true } }),
  },
  {
    name: 'LLMModel from an OCI image on emptyDir',
    object: object('LLMModel', 'up-oci', {
      model: { name: 'granite-3b', source: 'oci', image: 'registry.example.com/granite:3b', storage: { type: 'emptyDir' } },
      resources: { gpu: { count: 1 } },
      access: { groups: ['research'] },
    }),
  },
  {
    name: 'legacy PassthroughModel (hostname, key Secret, schemaVersion, no backend)',
    object: object('PassthroughModel', 'up-openrouter', {
      provider: { hostname: 'openrouter.ai', port: 443, schemaVersion: 'api/v1', credentialSecretName: 'openrouter-key' },
      models: { catchAll: true, declared: ['openai/gpt-4o', 'anthropic/claude-3.5-sonnet'] },
      access: { public: true, groups: [] },
      endpoints: { external: { enabled: true }, internal: { enabled: true } },
    }),
  },
  {
    name: 'PassthroughModel with an explicit OpenAI backend and APIKey credential',
    object: object('PassthroughModel', 'up-openai', {
      provider: { backend: { type: 'OpenAI' }, credential: { type: 'APIKey' }, hostname: 'Api.OpenAI.com.', credentialSecretName: 'openai-key' },
      models: { declared: ['gpt-4o-mini'] },
      access: { groups: ['llm-users'] },
      endpoints: { internal: { enabled: false } },
    }),
  },
  {
    name: 'upstream Bedrock PassthroughModel (region, workload identity, no hostname)',
    object: object('PassthroughModel', 'up-bedrock', {
      provider: { backend: { type: 'Bedrock', bedrock: { region: 'eu-central-1' } }, credential: { type: 'WorkloadIdentity' } },
      models: { declared: ['anthropic.claude-3-haiku-20240307-v1:0'] },
      access: { groups: ['llm-users'] },
    }),
  },
  {
    name: 'upstream Bedrock PassthroughModel with a private endpoint in its region',
    object: object('PassthroughModel', 'up-bedrock-vpce', {
      provider: {
        backend: { type: 'Bedrock', bedrock: { region: 'us-west-2' } },
        hostname: 'vpce-0abc-12345.bedrock-runtime.us-west-2.vpce.amazonaws.com',
        schemaVersion: 'v1',
      },
      models: { catchAll: true },
      access: { public: true },
    }),
  },
];

/** The upstream status shapes, written through the status subresource and read back unchanged. */
export const UPSTREAM_STATUS = {
  LLMModel: {
    phase: 'Ready',
    observedGeneration: 1,
    modelSize: '15Gi',
    replicas: { ready: 1, desired: 1 },
    endpoints: { external: 'https://llm.example.com/v1', internal: 'https://llm-internal.example.com/v1' },
    conditions: [
      { type: 'InferencePoolReady', status: 'True', reason: 'Applied', message: 'InferencePool applied', lastTransitionTime: '2026-11-29T10:00:00Z', observedGeneration: 1 },
      { type: 'ExternalEndpointReady', status: 'False', reason: 'EndpointDisabled', message: '', lastTransitionTime: '2026-11-29T10:00:00Z' },
    ],
  },
  PassthroughModel: {
    phase: 'Error',
    observedGeneration: 2,
    endpoints: { external: 'https://llm.example.com/v1' },
    conditions: [{ type: 'CredentialResolved', status: 'False', reason: 'SecretNotFound', message: 'Secret openrouter-key not found', lastTransitionTime: '2026-11-29T10:00:00Z' }],
  },
};

/** A DNS name of exactly `length` characters (labels of up to 63). */
function longHostname(length: number): string {
  const labels: string[] = [];
  let remaining = length;
  while (remaining > 0) {
    const size = Math.min(63, remaining - (labels.length ? 1 : 0));
    labels.push('a'.repeat(size));
    remaining -= size + (labels.length > 1 ? 1 : 0);
  }
  return labels.join('.');
}

/** Objects with every CEL-checked string, list and map at its maximum: the rules must still run within the cost budget. */
export const OBJECTS_AT_BOUNDS: Array<{ name: string; object: Obj }> = [
  {
    name: 'PassthroughModel with the longest hostname, 128 declared ids and 64 groups',
    object: passthroughModel('bounds-ptm', {
      provider: { hostname: `${longHostname(253)}.`, schemaVersion: 'a/'.repeat(64).slice(0, 128) },
      models: { declared: Array.from({ length: 128 }, (_, i) => `${String(i).padStart(3, '0')}${'m'.repeat(253)}`) },
      access: { public: false, groups: Array.from({ length: 64 }, (_, i) => `g${i}${'x'.repeat(250)}`) },
    }),
  },
  {
    name: 'LLMModel with 32 overrides, the longest subdomain and 64 groups',
    object: llmModel('bounds-llm', {
      provider: { name: 'kaito', overrides: Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`section${i}`, { value: i }])) },
      endpoints: { external: { subdomain: 'b'.repeat(63) } },
      access: { groups: Array.from({ length: 64 }, (_, i) => `group-${i}`) },
      resources: { gpu: { count: 64 } },
      serving: { replicas: 32, tensorParallelism: 64, dataParallelism: 64 },
    }),
  },
  {
    name: 'LLMModel with a 63-character name and small positive quantities',
    object: llmModel(`l${'x'.repeat(62)}`, {
      model: { storage: { size: '.5Gi' } },
      resources: { requests: { cpu: '0.5', memory: '1e9' }, limits: { cpu: 1, memory: '+2Gi' } },
    }),
  },
  { name: 'LLMModel with a 253-character name and a subdomain', object: llmModel(`l${'x'.repeat(252)}`, { endpoints: { external: { subdomain: 'long' } } }) },
  {
    name: 'Bedrock behind a proxy host outside amazonaws (the region is not in its name)',
    object: bedrock('bedrock-proxy', { hostname: 'bedrock-proxy.corp.example' }),
  },
  {
    name: 'AgentDeployment with the longest URLs',
    object: agentDeployment('bounds-agent', {
      model: { modelRef: null, externalAPI: { ...EXTERNAL, baseURL: `https://api.example.com/${'p'.repeat(2000)}` } },
      observability: { otlp: { endpoint: `http://collector.example.com:4318/${'q'.repeat(2000)}` } },
      provider: { overrides: { workload: { podSecurityContext: { runAsNonRoot: true } }, container: { securityContext: { readOnlyRootFilesystem: true } } } },
    }),
  },
];
