// Model specs covering every gateway translation path: each backend type, endpoints on and off,
// catch-all, declared lists (including more ids than one route rule holds), pathPrefix
// values, Bedrock regions and host name overrides, long names. Unit tests, the admission
// conformance test against the real API server and the benchmark all use this one matrix.
import type { LLMModelV1beta1 as LLMModel } from '../../../../src/api/v1beta1';
import type { PassthroughModelV1beta1 as PassthroughModel, PassthroughModelSpecV1beta1 as PassthroughModelSpec } from '../../../../src/api/v1beta1';
import type { GatewayContext } from '../../../../src/translate/gateway';

export const MATRIX_NAMESPACE = 'models';

/** The cluster settings used with the matrix (an internal endpoint needs an issuer). */
export const matrixContext: GatewayContext = {
  baseDomain: 'example.com',
  jwt: { issuer: 'https://keycloak.example.com/realms/nebari', audiences: ['nebari-llm'] },
  apiKeyClientIDs: ['user-alice-1', 'user-bob-1'],
  // Gateway tracing on, so every route's policy carries its sampling share and span tags.
  tracing: { enabled: true, samplingRatio: 0.5 },
  // Quotas on, so every external route carries costs and gets its per-key policy (bob has a larger tier).
  quotas: {
    costType: 'TotalToken',
    defaultTier: 'standard',
    tiers: [
      { name: 'standard', tokens: 100000, unit: 'Hour' },
      { name: 'large', tokens: 5000000, unit: 'Day', requestsPerMinute: 120 },
    ],
  },
  apiKeyTiers: { 'user-bob-1': 'large' },
};

let uidCounter = 0;
/** A deterministic, well-formed uid (the API server does not check that owners exist). */
function uid(name: string): string {
  uidCounter += 1;
  const hex = (uidCounter.toString(16) + Buffer.from(name).toString('hex')).padEnd(32, '0').slice(0, 32);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

export function passthroughModel(name: string, spec: Partial<PassthroughModelSpec> & Pick<PassthroughModelSpec, 'provider'>, namespace = MATRIX_NAMESPACE): PassthroughModel {
  return {
    apiVersion: 'llm.nebari.dev/v1beta1',
    kind: 'PassthroughModel',
    metadata: { name, namespace, uid: uid(name) },
    spec: { models: { declared: ['gpt-4o'] }, access: { groups: ['ml-team'] }, ...spec },
  };
}

export function llmModel(name: string, spec: Partial<LLMModel['spec']> = {}, namespace = MATRIX_NAMESPACE): LLMModel {
  return {
    apiVersion: 'llm.nebari.dev/v1beta1',
    kind: 'LLMModel',
    metadata: { name, namespace, uid: uid(name) },
    spec: {
      model: { name: 'meta-llama/Llama-3.1-8B-Instruct', source: 'huggingface' },
      resources: { gpu: { type: 'nvidia', count: 1 } },
      access: { groups: ['ml-team'] },
      ...spec,
    },
  };
}

const openai = { hostname: 'api.openai.com', credential: { secretRef: { name: 'openai-key' } } };
const manyIds = Array.from({ length: 100 }, (_, i) => `provider/model-${String(i).padStart(3, '0')}`);
const longName = 'a-model-name-that-is-much-longer-than-sixty-three-characters-and-keeps-going';

/** One entry per case; `why` says what it covers. */
export interface MatrixCase {
  readonly why: string;
  readonly model: PassthroughModel | LLMModel;
  /** Platform settings this case changes from matrixContext. */
  readonly context?: Partial<GatewayContext>;
}

/** The context a case is translated with. */
export const caseContext = (c: MatrixCase): GatewayContext => ({ ...matrixContext, ...c.context });

export const modelMatrix: readonly MatrixCase[] = [
  { why: 'OpenAI, defaults', model: passthroughModel('openai', { provider: openai }) },
  { why: 'OpenAI, pathPrefix /api/v1 (OpenRouter)', model: passthroughModel('openrouter', { provider: { hostname: 'openrouter.ai', pathPrefix: '/api/v1', credential: { secretRef: { name: 'or-key' } } }, models: { declared: ['openai/gpt-4o', 'anthropic/claude-sonnet-4'] } }) },
  { why: 'OpenAI, pathPrefix /v1beta/openai', model: passthroughModel('gemini', { provider: { hostname: 'generativelanguage.googleapis.com', pathPrefix: '/v1beta/openai', credential: { secretRef: { name: 'g-key' } } }, models: { declared: ['gemini-2.5-pro'] } }) },
  { why: 'OpenAI, pathPrefix / (prefix /)', model: passthroughModel('deepseek', { provider: { hostname: 'api.deepseek.com', pathPrefix: '/', credential: { secretRef: { name: 'ds-key' } } }, models: { declared: ['deepseek-chat'] } }) },
  { why: 'OpenAI, upper-case host with trailing dot', model: passthroughModel('upper-host', { provider: { hostname: 'API.OpenAI.com.', credential: { secretRef: { name: 'k' } } } }) },
  { why: 'OpenAI, verified against the platform\'s provider CA ConfigMap', model: passthroughModel('provider-ca', { provider: openai }), context: { providerTLS: { caConfigMap: 'provider-ca' } } },
  { why: 'OpenAI, custom port', model: passthroughModel('custom-port', { provider: { hostname: 'llm.internal.example.org', port: 8443, credential: { secretRef: { name: 'k' } } } }) },
  { why: 'OpenAI, catch-all only', model: passthroughModel('catch-all-only', { provider: openai, models: { catchAll: true } }) },
  { why: 'OpenAI, declared + catch-all', model: passthroughModel('declared-and-catch-all', { provider: openai, models: { declared: ['gpt-4o', 'gpt-4o-mini'], catchAll: true } }) },
  { why: 'OpenAI, 100 declared ids (two rules)', model: passthroughModel('many-models', { provider: openai, models: { declared: manyIds } }) },
  { why: 'OpenAI, external endpoint only', model: passthroughModel('external-only', { provider: openai, endpoints: { internal: { enabled: false } } }) },
  { why: 'OpenAI, internal endpoint only', model: passthroughModel('internal-only', { provider: openai, endpoints: { external: { enabled: false } } }) },
  { why: 'OpenAI, public access', model: passthroughModel('public', { provider: openai, access: { public: true } }) },
  { why: 'OpenAI, several groups', model: passthroughModel('groups', { provider: openai, access: { groups: ['b-team', 'a-team', 'c-team'] } }) },
  { why: 'OpenAI, name longer than 63 characters', model: passthroughModel(longName, { provider: openai }) },
  { why: 'OpenAI, dotted name', model: passthroughModel('gpt.4o.mini', { provider: openai }) },
  { why: 'Anthropic, default host', model: passthroughModel('anthropic', { provider: { backend: { type: 'Anthropic' }, credential: { secretRef: { name: 'anthropic-key' } } }, models: { declared: ['claude-sonnet-4-5'] } }) },
  { why: 'Anthropic, host override', model: passthroughModel('anthropic-proxy', { provider: { backend: { type: 'Anthropic' }, hostname: 'anthropic.proxy.example.com', credential: { secretRef: { name: 'k' } } }, models: { declared: ['claude-opus-4'] } }) },
  { why: 'Azure OpenAI', model: passthroughModel('azure', { provider: { backend: { type: 'AzureOpenAI', azureOpenAI: { apiVersion: '2025-01-01-preview' } }, hostname: 'my-resource.openai.azure.com', credential: { secretRef: { name: 'azure-key' } } } }) },
  { why: 'Bedrock us-east-1, derived host', model: passthroughModel('bedrock', { provider: { backend: { type: 'Bedrock', bedrock: { region: 'us-east-1' } } }, models: { declared: ['anthropic.claude-3-5-sonnet-20240620-v1:0'] } }) },
  { why: 'Bedrock eu-central-1, explicit WorkloadIdentity', model: passthroughModel('bedrock-eu', { provider: { backend: { type: 'Bedrock', bedrock: { region: 'eu-central-1' } }, credential: { type: 'WorkloadIdentity' } }, models: { declared: ['amazon.nova-pro-v1:0'] } }) },
  { why: 'Bedrock cn-north-1 (China partition)', model: passthroughModel('bedrock-cn', { provider: { backend: { type: 'Bedrock', bedrock: { region: 'cn-north-1' } } } }) },
  { why: 'Bedrock us-gov-west-1', model: passthroughModel('bedrock-gov', { provider: { backend: { type: 'Bedrock', bedrock: { region: 'us-gov-west-1' } } } }) },
  { why: 'Bedrock with a regional VPC endpoint override', model: passthroughModel('bedrock-vpce', { provider: { backend: { type: 'Bedrock', bedrock: { region: 'us-west-2' } }, hostname: 'vpce-0abc.bedrock-runtime.us-west-2.vpce.amazonaws.com' }, models: { catchAll: true } }) },
  {
    why: 'OpenAI, retries as written, timeouts, fallback with an id override, weighted split',
    model: passthroughModel('routed', {
      provider: openai,
      routing: {
        retries: { attempts: 3, retryOn: ['connect-failure', 'reset'], statusCodes: [429, 500, 502, 503, 504], perTryTimeout: '15s', backoff: { baseInterval: '100ms', maxInterval: '2s' } },
        timeouts: { request: '900s', streamIdle: '45s' },
        fallback: [{ name: 'openrouter', model: 'openai/gpt-4o' }, { name: 'azure' }],
        weight: 90,
        split: [{ name: 'gemini', weight: 10, model: 'gemini-2.5-pro' }],
      },
    }),
  },
  { why: 'OpenAI, fallback only (default retries and health check)', model: passthroughModel('fallback-only', { provider: openai, models: { catchAll: true }, routing: { fallback: [{ name: 'deepseek', model: 'deepseek-chat' }] } }) },
  { why: 'LLMModel, defaults', model: llmModel('llama') },
  { why: 'LLMModel, retries and timeouts', model: llmModel('llama-retried', { routing: { retries: { attempts: 2, statusCodes: [503] }, timeouts: { request: '1200s', streamIdle: '2m' } } }) },
  { why: 'LLMModel, request timeout 30m', model: llmModel('llama-slow', { endpoints: { requestTimeout: '30m' } }) },
  { why: 'LLMModel, external only', model: llmModel('llama-external', { endpoints: { internal: { enabled: false } } }) },
  { why: 'LLMModel, internal only, public', model: llmModel('llama-internal', { endpoints: { external: { enabled: false } }, access: { public: true } }) },
  { why: 'LLMModel, name longer than 63 characters', model: llmModel(longName.slice(0, 70)) },
  { why: 'LLMModel, dotted name and KAITO provider', model: llmModel('qwen2.5-7b', { model: { name: 'Qwen/Qwen2.5-7B-Instruct', source: 'huggingface' }, provider: { name: 'kaito' } }) },
];
