// Cluster-level settings the translation needs besides the model itself. The chart passes them
// to the operator (and to the cdk8s constructs) from its values; the operator adds the few
// per-model facts it reads from the cluster (the API-key client IDs). Every optional setting has
// a documented default, applied in one place (`resolveGatewayContext`).
import { TranslationError, translationError } from './errors';
import { lowerWithoutRootDot, normalizeHostname } from './hostname';
import type { EndpointName } from './names';
import { quotaSettingsErrors, quotaSettingsFromEnv, type QuotaSettings } from './quota-settings';

/** Where one shared endpoint lives. */
export interface EndpointSettings {
  /**
   * Host name clients call; each endpoint's routes declare exactly this one host name, so its
   * `/v1/models` lists its own catalog.
   * @default `llm.<baseDomain>` (external), `llm-internal.<baseDomain>` (internal)
   */
  readonly hostname?: string;
  /** Name of the Gateway the routes attach to. @default `nebari-gateway` (external), `nebari-internal-gateway` (internal) */
  readonly gatewayName?: string;
  /** Namespace of that Gateway (its listener must allow routes from model namespaces). @default `envoy-gateway-system` */
  readonly gatewayNamespace?: string;
  /** Listener (section) of the Gateway; empty string attaches to every listener. @default `llm-https` (external), `llm-internal-https` (internal) */
  readonly sectionName?: string;
}

/** How the internal endpoint checks callers' OIDC tokens. */
export interface JWTSettings {
  /** The OIDC issuer URL (https). Required while any model enables its internal endpoint. @default none */
  readonly issuer?: string;
  /** Where the issuer publishes its signing keys. @default `<issuer>/protocol/openid-connect/certs` (Keycloak) */
  readonly jwksUri?: string;
  /** Claim holding the caller's groups (a string array). @default `groups` */
  readonly groupsClaim?: string;
  /**
   * Accepted `aud` values. Required (or `allowAnyAudience`) while a model enables its internal
   * endpoint: empty accepts a token minted for any client of the issuer. @default []
   */
  readonly audiences?: readonly string[];
  /** Accept tokens of any audience with `audiences` empty, knowingly (the replay risk of docs/security.md). @default false */
  readonly allowAnyAudience?: boolean;
}

/** How the gateway verifies the TLS certificates of PassthroughModel providers (chart values `platform.providerTLS`). */
export interface ProviderTLSSettings {
  /**
   * ConfigMap in the models' namespace whose `ca.crt` holds the CA certificates (PEM) that the
   * providers' certificates must chain to, instead of the proxies' system trust bundle. A bundle of
   * the few roots the providers use costs Envoy a fraction of the system bundle's memory per
   * PassthroughModel, and no file watch per model (docs/performance.md). @default none (the system CAs)
   */
  readonly caConfigMap?: string;
}

/** The serving pods an LLMModel's InferencePool selects (supplied by the provider translation). */
export interface ServingPoolSettings {
  /** Labels of the model's serving pods. @default `{ "llm.nebari.dev/model": <model label>, "llm.nebari.dev/role": "serving" }` */
  readonly selector?: Readonly<Record<string, string>>;
  /** Port the serving pods listen on (OpenAI-compatible HTTP). @default 8000 (vLLM) */
  readonly targetPort?: number;
  /** gRPC port of the endpoint picker Service `<model>-epp`. @default 9002 */
  readonly endpointPickerPort?: number;
  /** What the gateway does when the endpoint picker is unreachable. @default `FailClose` */
  readonly failureMode?: 'FailOpen' | 'FailClose';
}

export interface GatewayContext {
  /** Base DNS domain of the platform, e.g. `example.com`. Required (endpoint host names derive from it). */
  readonly baseDomain: string;
  /** The external endpoint (API keys). @default see EndpointSettings */
  readonly external?: EndpointSettings;
  /** The internal endpoint (OIDC JWT + groups). @default see EndpointSettings */
  readonly internal?: EndpointSettings;
  /** Token checks of the internal endpoint. @default see JWTSettings */
  readonly jwt?: JWTSettings;
  /** Request timeout of PassthroughModel routes (LLMModels use spec.endpoints.requestTimeout). @default `120s` */
  readonly passthroughRequestTimeout?: string;
  /** Request timeout of LLMModel routes when the spec has none. @default `600s` */
  readonly llmModelRequestTimeout?: string;
  /** Header that names the caller: the API-key client ID (external endpoint; also what authorization checks) or the token's subject (internal). @default `x-llm-client-id` */
  readonly clientIDHeader?: string;
  /**
   * Client IDs (the data keys of the model's API-key Secret) allowed to call this model through
   * the external endpoint. Per-model state the operator reads from the Secret. @default [] (nobody yet)
   */
  readonly apiKeyClientIDs?: readonly string[];
  /** Name of the model's API-key Secret. @default `<model>-api-keys` */
  readonly apiKeysSecretName?: string;
  /**
   * Key Secrets of other models on the same external endpoint that the external policy accepts
   * too: every model's when this model's route is one of the endpoint's two oldest, because Envoy
   * authenticates on that route before the AI Gateway routes by model (endpoint-peers.ts). The
   * model's own is added whether listed or not.
   * @default [] (the model's own Secret only)
   */
  readonly externalEndpointKeySecrets?: readonly string[];
  /**
   * Per-key token quotas on the external endpoint (chart values `quotas.*`, passed only while a
   * rate-limit backend is configured). @default none (quotas off: no costs, no BackendTrafficPolicy)
   */
  readonly quotas?: QuotaSettings;
  /** Each key's quota tier by client ID (per-model state from the key metadata). @default {} (every key the default tier) */
  readonly apiKeyTiers?: Readonly<Record<string, string>>;
  /** The serving pods of an LLMModel. @default see ServingPoolSettings */
  readonly servingPool?: ServingPoolSettings;
  /** `owned_by` of LLMModel entries in `/v1/models` (PassthroughModels use the provider host). @default `nebari-llm-serving` */
  readonly modelsOwnedBy?: string;
  /**
   * The operator watches the generated HTTPRoutes and the Gateways' Envoy proxy Deployments to
   * report Programmed (chart value `platform.proxyStatus`, true by default; the chart then grants
   * the read in each Gateway's namespace). @default false
   */
  readonly proxyStatus?: boolean;
  /** Spans of model requests at the gateway (chart values `platform.tracing`). @default off */
  readonly tracing?: GatewayTracingSettings;
  /** TLS verification of PassthroughModel providers. @default see ProviderTLSSettings */
  readonly providerTLS?: ProviderTLSSettings;
}

/**
 * Tracing at the gateway: each model route's sampling share and span tags. Where spans go (the
 * collector) is the tracing provider of the Gateways' EnvoyProxy, which the platform owns.
 */
export interface GatewayTracingSettings {
  /** Tag and sample model routes. @default false */
  readonly enabled?: boolean;
  /** Share of a model's requests traced, 0 to 1, when the caller sent no sampling decision. @default 1 */
  readonly samplingRatio?: number;
}

export interface ResolvedEndpoint {
  readonly name: EndpointName;
  readonly hostname: string;
  readonly gatewayName: string;
  readonly gatewayNamespace: string;
  readonly sectionName: string;
}

export interface ResolvedGatewayContext {
  readonly endpoints: Readonly<Record<EndpointName, ResolvedEndpoint>>;
  readonly jwt: { readonly issuer?: string; readonly jwksUri?: string; readonly groupsClaim: string; readonly audiences: readonly string[]; readonly allowAnyAudience: boolean };
  readonly passthroughRequestTimeout: string;
  readonly llmModelRequestTimeout: string;
  readonly clientIDHeader: string;
  readonly apiKeyClientIDs: readonly string[];
  readonly apiKeysSecretName?: string;
  readonly externalEndpointKeySecrets: readonly string[];
  readonly quotas?: QuotaSettings;
  readonly apiKeyTiers: Readonly<Record<string, string>>;
  readonly servingPool: Required<Omit<ServingPoolSettings, 'selector'>> & { readonly selector?: Readonly<Record<string, string>> };
  readonly modelsOwnedBy: string;
  /** Present only while tracing is enabled. */
  readonly tracing?: { readonly samplingRatio: number };
  /** The ConfigMap of provider CAs; absent: the system CAs. */
  readonly providerCAConfigMap?: string;
}

export const DEFAULT_GATEWAY_NAMESPACE = 'envoy-gateway-system';
export const DEFAULT_PASSTHROUGH_REQUEST_TIMEOUT = '120s';
export const DEFAULT_LLMMODEL_REQUEST_TIMEOUT = '600s';
export const DEFAULT_CLIENT_ID_HEADER = 'x-llm-client-id';
export const DEFAULT_GROUPS_CLAIM = 'groups';
/** How to fix an internal endpoint that would accept tokens of any audience (chart, custom builds, operator). */
export const AUDIENCES_FIX =
  "set the chart value platform.jwt.audiences to the client IDs whose tokens may call models (e.g. --set 'platform.jwt.audiences={nebari-llm}'), or accept the replay risk with platform.jwt.allowAnyAudience=true (docs/security.md)";

/** A Kubernetes object name, as the chart's values schema checks it. */
const OBJECT_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** Gateway API Duration, as the route `timeouts` fields accept it. */
export const DURATION_PATTERN = /^([0-9]{1,5}(h|m|s|ms)){1,4}$/;

const ENDPOINT_DEFAULTS: Record<EndpointName, { host: string; gatewayName: string; sectionName: string }> = {
  external: { host: 'llm', gatewayName: 'nebari-gateway', sectionName: 'llm-https' },
  internal: { host: 'llm-internal', gatewayName: 'nebari-internal-gateway', sectionName: 'llm-internal-https' },
};

/**
 * Applies every default and checks the settings. Problems name the chart value the setting comes
 * from (`platform.…`; the operator gets them as NLS_GATEWAY_CONTEXT), so the fix is findable.
 */
export function resolveGatewayContext(context: GatewayContext): { context: ResolvedGatewayContext; errors: TranslationError[] } {
  const errors: TranslationError[] = [];
  const endpoint = (name: EndpointName): ResolvedEndpoint => {
    const settings = context[name] ?? {};
    const defaults = ENDPOINT_DEFAULTS[name];
    const field = settings.hostname !== undefined ? `platform.${name}.hostname` : 'platform.baseDomain';
    const raw = settings.hostname ?? `${defaults.host}.${context.baseDomain}`;
    const host = normalizeHostname(raw, field, { example: `${defaults.host}.example.com` });
    if (!host.ok) errors.push(...host.errors);
    return {
      name,
      hostname: host.ok ? host.value : raw,
      gatewayName: settings.gatewayName ?? defaults.gatewayName,
      gatewayNamespace: settings.gatewayNamespace ?? DEFAULT_GATEWAY_NAMESPACE,
      sectionName: settings.sectionName ?? defaults.sectionName,
    };
  };

  const endpoints = { external: endpoint('external'), internal: endpoint('internal') };
  const issuer = context.jwt?.issuer?.replace(/\/+$/, '');
  if (context.jwt?.issuer !== undefined && !/^https:\/\/[^\s/]+/.test(context.jwt.issuer)) {
    errors.push(translationError('platform.jwt.issuer', `${JSON.stringify(context.jwt.issuer)} is not an https URL; set the chart value platform.jwt.issuer to the OIDC issuer URL, e.g. https://keycloak.example.com/realms/nebari`));
  }
  const jwksUri = context.jwt?.jwksUri ?? (issuer ? `${issuer}/protocol/openid-connect/certs` : undefined);
  if (jwksUri !== undefined && !/^https:\/\//.test(jwksUri)) {
    errors.push(translationError('platform.jwt.jwksUri', `${JSON.stringify(jwksUri)} is not an https URL; Envoy fetches signing keys over HTTPS only`));
  }
  for (const [field, value] of [
    ['platform.passthroughRequestTimeout', context.passthroughRequestTimeout],
    ['platform.llmModelRequestTimeout', context.llmModelRequestTimeout],
  ] as const) {
    if (value !== undefined && !DURATION_PATTERN.test(value)) {
      errors.push(translationError(field, `${JSON.stringify(value)} is not a duration; use a Gateway API duration such as 120s, 10m or 1h`));
    }
  }

  const caConfigMap = context.providerTLS?.caConfigMap || undefined;
  if (caConfigMap !== undefined && !(caConfigMap.length <= 253 && OBJECT_NAME.test(caConfigMap))) {
    errors.push(translationError('platform.providerTLS.caConfigMap', `${JSON.stringify(caConfigMap)} is not a ConfigMap name; use lowercase letters, digits, "-" and ".", e.g. provider-ca, or leave it empty to verify providers against the system CAs`));
  }
  if (context.quotas) errors.push(...quotaSettingsErrors(context.quotas));
  const samplingRatio = context.tracing?.samplingRatio ?? 1;
  if (!(samplingRatio >= 0 && samplingRatio <= 1)) {
    errors.push(translationError('platform.tracing.samplingRatio', `${JSON.stringify(context.tracing?.samplingRatio)} is not a share; set it between 0 (no request traced) and 1 (every request)`));
  }

  return {
    context: {
      endpoints,
      jwt: { issuer, jwksUri, groupsClaim: context.jwt?.groupsClaim ?? DEFAULT_GROUPS_CLAIM, audiences: context.jwt?.audiences ?? [], allowAnyAudience: context.jwt?.allowAnyAudience === true },
      passthroughRequestTimeout: context.passthroughRequestTimeout ?? DEFAULT_PASSTHROUGH_REQUEST_TIMEOUT,
      llmModelRequestTimeout: context.llmModelRequestTimeout ?? DEFAULT_LLMMODEL_REQUEST_TIMEOUT,
      clientIDHeader: context.clientIDHeader ?? DEFAULT_CLIENT_ID_HEADER,
      apiKeyClientIDs: context.apiKeyClientIDs ?? [],
      apiKeysSecretName: context.apiKeysSecretName,
      externalEndpointKeySecrets: context.externalEndpointKeySecrets ?? [],
      ...(context.quotas ? { quotas: context.quotas } : {}),
      apiKeyTiers: context.apiKeyTiers ?? {},
      servingPool: {
        selector: context.servingPool?.selector,
        targetPort: context.servingPool?.targetPort ?? 8000,
        endpointPickerPort: context.servingPool?.endpointPickerPort ?? 9002,
        failureMode: context.servingPool?.failureMode ?? 'FailClose',
      },
      modelsOwnedBy: context.modelsOwnedBy ?? 'nebari-llm-serving',
      ...(context.tracing?.enabled === true ? { tracing: { samplingRatio } } : {}),
      ...(caConfigMap ? { providerCAConfigMap: caConfigMap } : {}),
    },
    errors,
  };
}

/**
 * The gateway context from the operator's environment: NLS_GATEWAY_CONTEXT (JSON GatewayContext)
 * with NLS_BASE_DOMAIN / NLS_OIDC_ISSUER_URL overriding. The operator reads its own environment;
 * `nls smoke` reads the operator Deployment's, so both derive the same endpoint host names.
 */
export function gatewayContextFromEnv(env: NodeJS.ProcessEnv): GatewayContext {
  let ctx: Partial<GatewayContext> = {};
  if (env.NLS_GATEWAY_CONTEXT) {
    try {
      ctx = JSON.parse(env.NLS_GATEWAY_CONTEXT) as Partial<GatewayContext>;
    } catch (err) {
      throw new Error(`NLS_GATEWAY_CONTEXT: not valid JSON (${(err as Error).message}); set it to the gateway settings object, e.g. {"baseDomain":"example.com"}`);
    }
  }
  // Normalised like every host name (the chart already does it; NLS_BASE_DOMAIN may be set by hand).
  const rawBaseDomain = env.NLS_BASE_DOMAIN || ctx.baseDomain;
  const baseDomain = rawBaseDomain ? lowerWithoutRootDot(rawBaseDomain) : rawBaseDomain;
  if (!baseDomain) {
    throw new Error(
      'the platform base domain is not set: set the chart value platform.baseDomain ' +
        '(helm upgrade <release> <chart> --reuse-values --set platform.baseDomain=example.com; NLS_BASE_DOMAIN for the process)',
    );
  }
  const issuer = env.NLS_OIDC_ISSUER_URL || ctx.jwt?.issuer;
  const endpoint = (e: EndpointSettings | undefined) => (e?.hostname ? { ...e, hostname: lowerWithoutRootDot(e.hostname) } : e);
  const endpoints = { ...(ctx.external ? { external: endpoint(ctx.external) } : {}), ...(ctx.internal ? { internal: endpoint(ctx.internal) } : {}) };
  const quotas = quotaSettingsFromEnv(env);
  return { ...ctx, ...endpoints, baseDomain, ...(issuer ? { jwt: { ...ctx.jwt, issuer } } : {}), ...(quotas ? { quotas } : {}) };
}
