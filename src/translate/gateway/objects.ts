// The shapes of the upstream objects this translator emits, limited to the fields it sets.
// Field names follow the released CRDs (Envoy AI Gateway 1.1.0 v1beta1, Envoy Gateway 1.8.1,
// Gateway API 1.5.1, Inference Extension 1.0.2); each spec is checked at compile time against the
// types generated from those CRDs (Conforms, imports/). Every field the API server would default is
// set explicitly, so an object reads back exactly as sent and server-side apply never sees drift.
import type { AiGatewayRouteV1Beta1Spec } from '../../../imports/aigatewayroutes-aigateway.envoyproxy.io';
import type { AiServiceBackendV1Beta1Spec } from '../../../imports/aiservicebackends-aigateway.envoyproxy.io';
import type { BackendSpec } from '../../../imports/backends-gateway.envoyproxy.io';
import type { BackendSecurityPolicyV1Beta1Spec } from '../../../imports/backendsecuritypolicies-aigateway.envoyproxy.io';
import type { BackendTrafficPolicySpec } from '../../../imports/backendtrafficpolicies-gateway.envoyproxy.io';
import type { BackendTlsPolicySpec } from '../../../imports/backendtlspolicies-gateway.networking.k8s.io';
import type { InferencePoolSpec } from '../../../imports/inferencepools-inference.networking.k8s.io';
import type { SecurityPolicySpec } from '../../../imports/securitypolicies-gateway.envoyproxy.io';
import type { Conforms } from './upstream';

export const AI_GATEWAY_API_VERSION = 'aigateway.envoyproxy.io/v1beta1';
export const ENVOY_GATEWAY_API_VERSION = 'gateway.envoyproxy.io/v1alpha1';
export const GATEWAY_API_GROUP = 'gateway.networking.k8s.io';
export const GATEWAY_API_VERSION = `${GATEWAY_API_GROUP}/v1`;
export const INFERENCE_API_GROUP = 'inference.networking.k8s.io';
export const INFERENCE_API_VERSION = `${INFERENCE_API_GROUP}/v1`;

/** Every kind the gateway translation emits (HTTPRoutes are the AI Gateway controller's, not ours). */
export const GATEWAY_OBJECT_KINDS = [
  { apiVersion: AI_GATEWAY_API_VERSION, kind: 'AIGatewayRoute' },
  { apiVersion: ENVOY_GATEWAY_API_VERSION, kind: 'SecurityPolicy' },
  { apiVersion: AI_GATEWAY_API_VERSION, kind: 'AIServiceBackend' },
  { apiVersion: AI_GATEWAY_API_VERSION, kind: 'BackendSecurityPolicy' },
  { apiVersion: ENVOY_GATEWAY_API_VERSION, kind: 'Backend' },
  { apiVersion: GATEWAY_API_VERSION, kind: 'BackendTLSPolicy' },
  { apiVersion: INFERENCE_API_VERSION, kind: 'InferencePool' },
  // Per-key token quotas, only while the chart configures them (quotas.ts).
  { apiVersion: ENVOY_GATEWAY_API_VERSION, kind: 'BackendTrafficPolicy' },
] as const;

export type GatewayObjectKind = (typeof GATEWAY_OBJECT_KINDS)[number]['kind'];

/** The entries of GATEWAY_OBJECT_KINDS for these kinds, in that list's order. */
export function gatewayObjectKinds(...kinds: GatewayObjectKind[]): { apiVersion: string; kind: string }[] {
  return GATEWAY_OBJECT_KINDS.filter((k) => kinds.includes(k.kind));
}

export interface OwnerReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  readonly controller: boolean;
  readonly blockOwnerDeletion: boolean;
}

export interface ObjectMetadata {
  readonly name: string;
  readonly namespace: string;
  readonly labels: Record<string, string>;
  /** Only the digest of the body (../applied-digest.ts). */
  readonly annotations?: Record<string, string>;
  readonly ownerReferences?: OwnerReference[];
}

/** A reference to an object by kind and name, as the operator needs to get or delete it. */
export interface ObjectReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
}

interface GatewayObject<A extends string, K extends string, S> {
  readonly apiVersion: A;
  readonly kind: K;
  readonly metadata: ObjectMetadata;
  readonly spec: S;
}

// --- Envoy Gateway -------------------------------------------------------------------------

export type Backend = GatewayObject<typeof ENVOY_GATEWAY_API_VERSION, 'Backend', Conforms<{
  readonly type: 'Endpoints';
  readonly endpoints: ReadonlyArray<{ readonly fqdn: { readonly hostname: string; readonly port: number } }>;
}, BackendSpec>>;

export interface PolicyTargetReference {
  readonly group: string;
  readonly kind: string;
  readonly name: string;
}

export interface SecretReference {
  readonly group: '';
  readonly kind: 'Secret';
  readonly name: string;
}

export interface AuthorizationRule {
  readonly name: string;
  readonly action: 'Allow' | 'Deny';
  readonly principal: {
    readonly headers?: ReadonlyArray<{ readonly name: string; readonly values: readonly string[] }>;
    readonly jwt?: {
      readonly provider: string;
      readonly claims: ReadonlyArray<{ readonly name: string; readonly valueType: 'String' | 'StringArray'; readonly values: readonly string[] }>;
    };
  };
}

export interface JWTProvider {
  readonly name: string;
  readonly issuer: string;
  readonly audiences?: readonly string[];
  readonly remoteJWKS: { readonly uri: string; readonly cacheDuration: string };
  readonly claimToHeaders?: ReadonlyArray<{ readonly header: string; readonly claim: string }>;
}

export type SecurityPolicy = GatewayObject<typeof ENVOY_GATEWAY_API_VERSION, 'SecurityPolicy', Conforms<{
  readonly targetRefs: readonly PolicyTargetReference[];
  readonly apiKeyAuth?: {
    readonly credentialRefs: readonly SecretReference[];
    readonly extractFrom: ReadonlyArray<{ readonly headers: readonly string[] }>;
    readonly forwardClientIDHeader: string;
    readonly sanitize: boolean;
  };
  readonly jwt?: { readonly providers: readonly JWTProvider[] };
  readonly authorization?: { readonly defaultAction: 'Allow' | 'Deny'; readonly rules?: readonly AuthorizationRule[] };
}, SecurityPolicySpec>>;

/** One global rate-limit rule: the caller selected by a header, its limit, and what a request costs. */
export interface RateLimitRule {
  readonly clientSelectors: ReadonlyArray<{ readonly headers: ReadonlyArray<{ readonly name: string; readonly type: 'Exact'; readonly value: string; readonly invert: boolean }> }>;
  readonly limit: { readonly requests: number; readonly unit: 'Second' | 'Minute' | 'Hour' | 'Day' | 'Month' };
  readonly cost?: {
    readonly request: { readonly from: 'Number'; readonly number: number };
    readonly response: { readonly from: 'Metadata'; readonly metadata: { readonly namespace: string; readonly key: string } };
  };
}

/** Retries of a route (Envoy Gateway `retry`); `numAttemptsPerPriority: 1` sends each retry to the next priority. */
export interface RetrySettings {
  readonly numRetries: number;
  readonly numAttemptsPerPriority?: number;
  readonly retryOn: { readonly triggers: readonly RetryTrigger[]; readonly httpStatusCodes?: readonly number[] };
  readonly perRetry?: { readonly timeout?: string; readonly backOff?: { readonly baseInterval: string; readonly maxInterval: string } };
}
export type RetryTrigger = 'connect-failure' | 'reset' | 'reset-before-request' | 'refused-stream' | 'retriable-status-codes';

/** Passive health check (outlier detection): an upstream that keeps failing is skipped for a while. */
export interface PassiveHealthCheck {
  readonly alwaysEjectOneEndpoint: boolean;
  readonly consecutive5XxErrors: number;
  readonly consecutiveLocalOriginFailures: number;
  readonly splitExternalLocalOriginErrors: boolean;
  readonly interval: string;
  readonly baseEjectionTime: string;
  readonly maxEjectionPercent: number;
}

export type BackendTrafficPolicy = GatewayObject<typeof ENVOY_GATEWAY_API_VERSION, 'BackendTrafficPolicy', Conforms<{
  readonly targetRefs: readonly PolicyTargetReference[];
  readonly rateLimit?: { readonly global: { readonly rules: readonly RateLimitRule[] } };
  readonly retry?: RetrySettings;
  readonly healthCheck?: { readonly passive: PassiveHealthCheck };
  readonly telemetry?: { readonly tracing: RouteTracing };
}, BackendTrafficPolicySpec>>;

/** Sampling and span tags of one route; the collector is the EnvoyProxy's tracing provider. */
export interface RouteTracing {
  readonly samplingFraction: { readonly numerator: number; readonly denominator: number };
  readonly tags: Readonly<Record<string, string>>;
}

// --- Gateway API -----------------------------------------------------------------------------

export type BackendTLSPolicy = GatewayObject<typeof GATEWAY_API_VERSION, 'BackendTLSPolicy', Conforms<{
  readonly targetRefs: readonly PolicyTargetReference[];
  readonly validation: { readonly hostname: string } & (
    | { readonly wellKnownCACertificates: 'System' }
    | { readonly caCertificateRefs: readonly [{ readonly group: ''; readonly kind: 'ConfigMap'; readonly name: string }] }
  );
}, BackendTlsPolicySpec>>;

// --- Envoy AI Gateway ------------------------------------------------------------------------

export type AIServiceBackendSchemaName = 'OpenAI' | 'AWSBedrock' | 'Anthropic' | 'AzureOpenAI';

export interface AIServiceBackendSchema {
  readonly name: AIServiceBackendSchemaName;
  readonly prefix?: string;
  readonly version?: string;
}

export type AIServiceBackend = GatewayObject<typeof AI_GATEWAY_API_VERSION, 'AIServiceBackend', Conforms<{
  readonly schema: AIServiceBackendSchema;
  readonly backendRef: { readonly group: 'gateway.envoyproxy.io'; readonly kind: 'Backend'; readonly name: string };
  readonly headerMutation?: { readonly remove: readonly string[] };
}, AiServiceBackendV1Beta1Spec>>;

/** The upstream credential kinds this translator emits (a subset of the CRD's `type` enum). */
export type BackendSecurityPolicyType = 'APIKey' | 'AWSCredentials' | 'AnthropicAPIKey' | 'AzureAPIKey';

export type BackendSecurityPolicy = GatewayObject<typeof AI_GATEWAY_API_VERSION, 'BackendSecurityPolicy', Conforms<{
  readonly targetRefs: readonly PolicyTargetReference[];
  readonly type: BackendSecurityPolicyType;
  readonly apiKey?: { readonly secretRef: SecretReference };
  readonly anthropicAPIKey?: { readonly secretRef: SecretReference };
  readonly azureAPIKey?: { readonly secretRef: SecretReference };
  readonly awsCredentials?: { readonly region: string };
}, BackendSecurityPolicyV1Beta1Spec>>;

export interface AIGatewayRouteBackendRef {
  readonly group?: typeof INFERENCE_API_GROUP;
  readonly kind?: 'InferencePool';
  readonly name: string;
  readonly weight: number;
  readonly priority: number;
  /** The model id sent to this backend in place of the client's (AIServiceBackends only). */
  readonly modelNameOverride?: string;
}

export interface AIGatewayRouteRule {
  readonly name: string;
  readonly matches?: ReadonlyArray<{
    readonly headers: ReadonlyArray<{ readonly type: 'Exact' | 'RegularExpression'; readonly name: string; readonly value: string }>;
  }>;
  readonly backendRefs: readonly AIGatewayRouteBackendRef[];
  readonly timeouts: { readonly request: string };
  readonly streamIdleTimeout?: string;
  readonly modelsOwnedBy: string;
}

/** A token count the AI Gateway writes to dynamic metadata for each response. */
export interface LLMRequestCost {
  readonly metadataKey: string;
  readonly type: 'TotalToken' | 'OutputToken' | 'InputToken' | 'CachedInputToken' | 'CacheCreationInputToken' | 'ReasoningToken';
}

export type AIGatewayRoute = GatewayObject<typeof AI_GATEWAY_API_VERSION, 'AIGatewayRoute', Conforms<{
  readonly parentRefs: ReadonlyArray<{
    readonly group: typeof GATEWAY_API_GROUP;
    readonly kind: 'Gateway';
    readonly name: string;
    readonly namespace: string;
    readonly sectionName?: string;
  }>;
  readonly hostnames: readonly [string];
  readonly rules: readonly AIGatewayRouteRule[];
  readonly llmRequestCosts?: readonly LLMRequestCost[];
}, AiGatewayRouteV1Beta1Spec>>;

// --- Gateway API Inference Extension -----------------------------------------------------------

export type InferencePool = GatewayObject<typeof INFERENCE_API_VERSION, 'InferencePool', Conforms<{
  readonly selector: { readonly matchLabels: Record<string, string> };
  readonly targetPorts: ReadonlyArray<{ readonly number: number }>;
  readonly endpointPickerRef: {
    readonly group: '';
    readonly kind: 'Service';
    readonly name: string;
    readonly port: { readonly number: number };
    readonly failureMode: 'FailOpen' | 'FailClose';
  };
}, InferencePoolSpec>>;

/** Every object kind the gateway translation produces. */
export type GeneratedGatewayObject =
  | Backend
  | BackendTLSPolicy
  | AIServiceBackend
  | BackendSecurityPolicy
  | InferencePool
  | AIGatewayRoute
  | SecurityPolicy
  | BackendTrafficPolicy;

/** The reference to a generated object (for deletions and lookups). */
export function referenceTo(object: { apiVersion: string; kind: string; metadata: { namespace: string; name: string } }): ObjectReference {
  return { apiVersion: object.apiVersion, kind: object.kind, namespace: object.metadata.namespace, name: object.metadata.name };
}
