// Client authentication, one Envoy Gateway SecurityPolicy per enabled endpoint. Each targets the
// HTTPRoute the AI Gateway generates from the endpoint's AIGatewayRoute (same name), so it
// applies exactly to this model's rules on that endpoint.
// - external: API keys from the model's key Secret (data key = client ID, value = key), and from
//   every other model's on the endpoint when its route is one of the endpoint's two oldest (see
//   endpoint-peers.ts for why), taken from `Authorization:
//   Bearer …` (OpenAI clients) or `x-api-key` (Anthropic clients) and stripped before the request
//   goes upstream; the matched client ID is forwarded
//   in a header and authorization allows only this model's client IDs (deny by default).
// - internal: an OIDC JWT from the platform issuer; unless the model is public, authorization
//   allows only tokens whose groups claim contains one of the model's groups. The token's subject
//   is copied into the same client-ID header, so the extproc's usage metrics name the caller on
//   both endpoints (docs/observability.md).
import type { ResolvedEndpoint, ResolvedGatewayContext } from './context';
import { gatewayMetadata, ModelIdentity } from './labels';
import { gatewayObjectNames } from './names';
import { AuthorizationRule, ENVOY_GATEWAY_API_VERSION, GATEWAY_API_GROUP, JWTProvider, SecurityPolicy } from './objects';

/** Name of the single JWT provider in internal policies (authorization rules refer to it). */
export const JWT_PROVIDER_NAME = 'oidc';
/** Envoy Gateway accepts at most 256 values per header in one authorization principal. */
export const MAX_HEADER_VALUES_PER_RULE = 256;
/** ...and at most 128 values per JWT claim. */
export const MAX_CLAIM_VALUES_PER_RULE = 128;
/** JWKS cache time; the CRD default, written out so the stored object equals the applied one. */
export const JWKS_CACHE_DURATION = '300s';
/**
 * The claim that names the caller in the usage metrics of the internal endpoint. Only the subject:
 * Envoy Gateway copies string, number and boolean claims into headers, not arrays such as groups.
 */
export const USAGE_SUBJECT_CLAIM = 'sub';

/** Who may call a model on the internal endpoint. */
export interface ModelAccess {
  readonly public?: boolean;
  readonly groups?: readonly string[];
}

function targetRefs(model: ModelIdentity, endpoint: ResolvedEndpoint) {
  return [{ group: GATEWAY_API_GROUP, kind: 'HTTPRoute', name: gatewayObjectNames(model.metadata.name ?? '').route(endpoint.name) }];
}

function chunk<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
}

function ruleName(base: string, index: number): string {
  return index === 0 ? base : `${base}-${index + 1}`;
}

/**
 * The model's own key Secret and its peers', sorted and unique, so the models that list every
 * key render the same list. Envoy Gateway 1.8.1 sets no maxItems on `credentialRefs`; the size of
 * one SecurityPolicy (etcd's 1.5 MiB) and Envoy's per-route key copies bound it (docs/compatibility-gateway.md).
 */
function keySecrets(own: string, peers: readonly string[]): string[] {
  return [...new Set([own, ...peers])].sort();
}

/** API keys plus client-ID authorization for the external endpoint. */
export function externalSecurityPolicy(model: ModelIdentity, endpoint: ResolvedEndpoint, context: ResolvedGatewayContext): SecurityPolicy {
  const names = gatewayObjectNames(model.metadata.name ?? '');
  const clientIDs = [...new Set(context.apiKeyClientIDs)].sort();
  const rules: AuthorizationRule[] = chunk(clientIDs, MAX_HEADER_VALUES_PER_RULE).map((values, index) => ({
    name: ruleName('api-key-clients', index),
    action: 'Allow',
    principal: { headers: [{ name: context.clientIDHeader, values }] },
  }));
  return securityPolicy(model, endpoint, {
    apiKeyAuth: {
      credentialRefs: keySecrets(context.apiKeysSecretName ?? names.apiKeysSecret, context.externalEndpointKeySecrets).map((name) => ({ group: '', kind: 'Secret', name })),
      // Envoy uses the first header present and strips the "Bearer " prefix, so OpenAI clients
      // and Anthropic's SDKs (which send `x-api-key`) work unchanged.
      extractFrom: [{ headers: ['Authorization', 'x-api-key'] }],
      forwardClientIDHeader: context.clientIDHeader,
      sanitize: true,
    },
    // With no client IDs yet there are no rules, and the default denies everyone.
    authorization: rules.length > 0 ? { defaultAction: 'Deny', rules } : { defaultAction: 'Deny' },
  });
}

/** OIDC JWT plus group authorization for the internal endpoint. `context.jwt.issuer` must be set. */
export function internalSecurityPolicy(
  model: ModelIdentity,
  endpoint: ResolvedEndpoint,
  context: ResolvedGatewayContext,
  access: ModelAccess,
): SecurityPolicy {
  const { jwt } = context;
  const provider: JWTProvider = {
    name: JWT_PROVIDER_NAME,
    issuer: jwt.issuer ?? '',
    ...(jwt.audiences.length > 0 ? { audiences: [...jwt.audiences] } : {}),
    remoteJWKS: { uri: jwt.jwksUri ?? '', cacheDuration: JWKS_CACHE_DURATION },
    // Envoy's JWT filter (1.38) first removes every copy of this header the client sent, then
    // writes the verified subject; a token without one leaves the header absent. So the extproc's
    // `client_id` label is the subject or nothing, never the caller's choice, and the header
    // stops at the provider's AIServiceBackend like the API-key client ID.
    claimToHeaders: [{ header: context.clientIDHeader, claim: USAGE_SUBJECT_CLAIM }],
  };
  const groups = [...new Set(access.groups ?? [])].sort();
  const rules: AuthorizationRule[] = chunk(groups, MAX_CLAIM_VALUES_PER_RULE).map((values, index) => ({
    name: ruleName('groups', index),
    action: 'Allow',
    principal: { jwt: { provider: JWT_PROVIDER_NAME, claims: [{ name: jwt.groupsClaim, valueType: 'StringArray', values }] } },
  }));
  return securityPolicy(model, endpoint, {
    jwt: { providers: [provider] },
    // A public model admits every valid token; otherwise only the listed groups.
    ...(access.public ? {} : { authorization: { defaultAction: 'Deny', rules } }),
  });
}

/** The SecurityPolicy of one endpoint: its name, labels and target routes around `spec`. */
function securityPolicy(model: ModelIdentity, endpoint: ResolvedEndpoint, spec: Omit<SecurityPolicy['spec'], 'targetRefs'>): SecurityPolicy {
  const names = gatewayObjectNames(model.metadata.name ?? '');
  return {
    apiVersion: ENVOY_GATEWAY_API_VERSION,
    kind: 'SecurityPolicy',
    metadata: gatewayMetadata(model, names.securityPolicy(endpoint.name), endpoint.name),
    spec: { targetRefs: targetRefs(model, endpoint), ...spec },
  };
}
