// Gateway translation: a PassthroughModel or LLMModel in, the Envoy AI Gateway / Envoy Gateway /
// Gateway API objects that publish it out. Pure and deterministic (same input, same objects, same
// key order), so the operator and the cdk8s constructs render byte-identical objects.
import { AUDIENCES_FIX, GatewayContext, resolveGatewayContext, ResolvedGatewayContext, DURATION_PATTERN } from './context';
import { withAppliedDigest } from '../applied-digest';
import { DeletionStep, disabledEndpointDeletions, trafficPolicyDeletion } from './deletions';
import { TranslationError, translationError } from './errors';
import { ModelIdentity } from './labels';
import { modelInferencePool } from './llmmodel';
import { EndpointName, ENDPOINT_NAMES, gatewayObjectNames } from './names';
import { GeneratedGatewayObject } from './objects';
import { providerAIServiceBackend, providerBackend, providerBackendSecurityPolicy, providerBackendTLSPolicy } from './passthroughmodel';
import { resolvePassthroughProvider } from './provider';
import { endpointRoute, RouteBackend, RouteCatalog } from './routes';
import { externalSecurityPolicy, internalSecurityPolicy, ModelAccess } from './security-policies';
import { quotaRequestCosts, quotaRules } from './quotas';
import { endpointTrafficPolicy, routeTracing, RoutingSpec } from './traffic-policy';
import { ownSplitWeight } from '../../api/routing';
import type { LLMModelV1beta1, PassthroughModelV1beta1 } from '../../api/v1beta1';

export type { GatewayContext } from './context';
export { AUTHENTICATING_ROUTES, externalEndpointKeySecrets, oldestRouted, onExternalEndpoint } from './endpoint-peers';
export type { EndpointPeer, RoutedModel } from './endpoint-peers';
export type { DeletionStep } from './deletions';
export { gatewayTeardown } from './deletions';
export type { TranslationError } from './errors';
export type { QuotaSettings, QuotaTier } from './quota-settings';
export { keyTiersFromMetadata } from './quota-settings';
export { gatewayObjectNames, apiKeysSecretName } from './names';
export type { EndpointName } from './names';
export type { GeneratedGatewayObject } from './objects';
export { GATEWAY_OBJECT_KINDS, gatewayObjectKinds } from './objects';

/** A model the gateway can publish. */
export type GatewayModel = LLMModelV1beta1 | PassthroughModelV1beta1;

export interface GatewayTranslation {
  /**
   * The desired objects, in apply order: backends, then each endpoint's auth policy before its
   * route (a route is never live without its policy). Empty when there are errors.
   */
  readonly objects: GeneratedGatewayObject[];
  /** Objects to remove, as ordered steps the operator follows (see DeletionStep). Empty on errors. */
  readonly deletions: DeletionStep[];
  /** Why the model cannot be translated; each names the field and the fix. */
  readonly errors: TranslationError[];
}

interface EndpointSpec {
  readonly external?: { readonly enabled?: boolean };
  readonly internal?: { readonly enabled?: boolean };
}

/** The endpoints a model is published on (each is on unless `enabled: false`). */
export function enabledEndpoints(endpoints: EndpointSpec | undefined): EndpointName[] {
  return ENDPOINT_NAMES.filter((name) => endpoints?.[name]?.enabled !== false);
}

function checkIdentity(model: ModelIdentity): TranslationError[] {
  const errors: TranslationError[] = [];
  if (!model.metadata.name) errors.push(translationError('metadata.name', 'is empty; the model needs a name'));
  if (!model.metadata.namespace) errors.push(translationError('metadata.namespace', 'is empty; gateway objects are created in the model namespace, so set it'));
  return errors;
}

function checkEndpoints(enabled: readonly EndpointName[], access: ModelAccess, context: ResolvedGatewayContext): TranslationError[] {
  const errors: TranslationError[] = [];
  if (enabled.length === 0) {
    errors.push(translationError('spec.endpoints', 'both endpoints are disabled, so nobody could reach the model; enable spec.endpoints.external or spec.endpoints.internal'));
  }
  if (!access.public && (access.groups ?? []).length === 0) {
    errors.push(translationError('spec.access', 'nobody could call this model; set spec.access.public: true or list at least one group in spec.access.groups'));
  }
  if (enabled.includes('internal') && !context.jwt.issuer) {
    errors.push(
      translationError(
        'spec.endpoints.internal.enabled',
        'the internal endpoint checks OIDC tokens, but the platform has no issuer configured; set the chart value platform.jwt.issuer to the OIDC issuer URL (e.g. https://keycloak.example.com/realms/nebari) or set spec.endpoints.internal.enabled: false',
      ),
    );
  }
  // Issue 29, Medium 9: without audiences, a token the issuer minted for any other client is accepted.
  if (enabled.includes('internal') && context.jwt.issuer && context.jwt.audiences.length === 0 && !context.jwt.allowAnyAudience) {
    errors.push(translationError('platform.jwt.audiences', `is empty, so the internal endpoint would accept a token the issuer minted for any of its clients (another application's token could be replayed against the model); ${AUDIENCES_FIX}, or set spec.endpoints.internal.enabled: false`));
  }
  return errors;
}

/** Auth policies, traffic policies, then routes for every enabled endpoint, plus deletions for the disabled ones. */
function publish(
  model: ModelIdentity,
  enabled: readonly EndpointName[],
  access: ModelAccess,
  catalog: RouteCatalog,
  routing: RoutingSpec | undefined,
  context: ResolvedGatewayContext,
): { objects: GeneratedGatewayObject[]; deletions: DeletionStep[]; errors: TranslationError[] } {
  const objects: GeneratedGatewayObject[] = [];
  const errors: TranslationError[] = [];
  const trafficPolicyRendered = new Set<EndpointName>();
  for (const name of enabled) {
    const endpoint = context.endpoints[name];
    // Quotas count keys, so they apply to the external (API-key) endpoint only.
    const quotas = name === 'external' ? context.quotas : undefined;
    const route = endpointRoute(model, endpoint, catalog, quotas ? quotaRequestCosts(quotas) : []);
    if (!route.ok) {
      errors.push(...route.errors);
      continue;
    }
    objects.push(name === 'external' ? externalSecurityPolicy(model, endpoint, context) : internalSecurityPolicy(model, endpoint, context, access));
    // Without keys nobody passes the SecurityPolicy, so there is nothing to limit yet.
    const rules = quotas && context.apiKeyClientIDs.length > 0 ? quotaRules(context, quotas) : undefined;
    if (rules && !rules.ok) {
      errors.push(...rules.errors);
      continue;
    }
    const policy = endpointTrafficPolicy(model, endpoint, routing, rules?.value, routeTracing(model, name, context.tracing));
    if (!policy.ok) {
      errors.push(...policy.errors);
      continue;
    }
    // Before the route: the route is never live without its limits and retries.
    if (policy.value) {
      objects.push(policy.value);
      trafficPolicyRendered.add(name);
    }
    objects.push(route.value);
  }
  const disabled = ENDPOINT_NAMES.filter((name) => !enabled.includes(name));
  // A policy left from when quotas, retries or tracing were on (or the endpoint enabled, or keys existed) goes.
  const staleTrafficPolicies = ENDPOINT_NAMES.filter((name) => !trafficPolicyRendered.has(name)).map((name) => trafficPolicyDeletion(model, name));
  return { objects, deletions: [...staleTrafficPolicies, ...disabledEndpointDeletions(model, disabled)], errors };
}

/**
 * The backends of a PassthroughModel's routes: its own provider and its split models at priority
 * 0 (weighted), then each fallback model one priority lower, in the order listed.
 */
function passthroughBackends(model: PassthroughModelV1beta1): RouteBackend[] {
  const routing = model.spec.routing;
  const aiServiceBackend = (name: string) => gatewayObjectNames(name).aiServiceBackend;
  const split = routing?.split ?? [];
  const own: RouteBackend = { kind: 'AIServiceBackend', name: aiServiceBackend(model.metadata.name ?? ''), weight: split.length > 0 ? ownSplitWeight(routing) : 1, priority: 0 };
  return [
    own,
    ...split.map((s): RouteBackend => ({ kind: 'AIServiceBackend', name: aiServiceBackend(s.name), weight: s.weight, priority: 0, ...(s.model ? { modelNameOverride: s.model } : {}) })),
    ...(routing?.fallback ?? []).map((f, i): RouteBackend => ({ kind: 'AIServiceBackend', name: aiServiceBackend(f.name), weight: 1, priority: i + 1, ...(f.model ? { modelNameOverride: f.model } : {}) })),
  ];
}

function failedTranslation(errors: TranslationError[]): GatewayTranslation {
  // Errors are deduplicated (the same field can be reached twice) and kept in a stable order.
  const unique = new Map(errors.map((e) => [e.message, e]));
  return { objects: [], deletions: [], errors: [...unique.values()] };
}

function translatePassthroughModel(model: PassthroughModelV1beta1, context: ResolvedGatewayContext, errors: TranslationError[]): GatewayTranslation {
  const enabled = enabledEndpoints(model.spec.endpoints);
  errors.push(...checkEndpoints(enabled, model.spec.access, context));
  const provider = resolvePassthroughProvider(model.spec);
  if (!provider.ok) errors.push(...provider.errors);
  if (errors.length > 0 || !provider.ok) return failedTranslation(errors);

  const catalog: RouteCatalog = {
    modelIds: model.spec.models?.declared ?? [],
    catchAll: model.spec.models?.catchAll === true,
    backends: passthroughBackends(model),
    modelsOwnedBy: provider.value.hostname,
    requestTimeout: model.spec.routing?.timeouts?.request ?? context.passthroughRequestTimeout,
    streamIdleTimeout: model.spec.routing?.timeouts?.streamIdle,
    modelIdsField: 'spec.models',
  };
  const published = publish(model, enabled, model.spec.access, catalog, model.spec.routing, context);
  if (published.errors.length > 0) return failedTranslation(published.errors);
  return {
    objects: [
      providerBackend(model, provider.value),
      providerBackendTLSPolicy(model, provider.value, context.providerCAConfigMap),
      providerAIServiceBackend(model, provider.value, context.clientIDHeader),
      providerBackendSecurityPolicy(model, provider.value),
      ...published.objects,
    ],
    deletions: published.deletions,
    errors: [],
  };
}

function translateLLMModel(model: LLMModelV1beta1, context: ResolvedGatewayContext, errors: TranslationError[]): GatewayTranslation {
  const enabled = enabledEndpoints(model.spec.endpoints);
  errors.push(...checkEndpoints(enabled, model.spec.access, context));
  // spec.routing.timeouts.request, when written, wins over the older spec.endpoints.requestTimeout.
  const routingTimeout = model.spec.routing?.timeouts?.request;
  const requestTimeout = routingTimeout ?? model.spec.endpoints?.requestTimeout ?? context.llmModelRequestTimeout;
  if (!DURATION_PATTERN.test(requestTimeout)) {
    errors.push(
      translationError(routingTimeout ? 'spec.routing.timeouts.request' : 'spec.endpoints.requestTimeout', `${JSON.stringify(requestTimeout)} is not a duration; use a Gateway API duration such as 600s or 10m`),
    );
  }
  if (errors.length > 0) return failedTranslation(errors);

  const catalog: RouteCatalog = {
    modelIds: [model.spec.model.name],
    catchAll: false,
    backends: [{ kind: 'InferencePool', name: gatewayObjectNames(model.metadata.name ?? '').inferencePool }],
    modelsOwnedBy: context.modelsOwnedBy,
    requestTimeout,
    streamIdleTimeout: model.spec.routing?.timeouts?.streamIdle,
    modelIdsField: 'spec.model.name',
  };
  // Only retries: an InferencePool rule has no other backend to fall back or split to.
  const routing = model.spec.routing?.retries ? { retries: model.spec.routing.retries } : undefined;
  const published = publish(model, enabled, model.spec.access, catalog, routing, context);
  if (published.errors.length > 0) return failedTranslation(published.errors);
  return { objects: [modelInferencePool(model, context), ...published.objects], deletions: published.deletions, errors: [] };
}

/**
 * The gateway objects that publish `model`, the ordered deletions of what it no longer needs,
 * or the errors that prevent it. Never throws for bad input.
 */
export function desiredGatewayObjects(model: GatewayModel, context: GatewayContext): GatewayTranslation {
  const resolved = resolveGatewayContext(context);
  const errors = [...checkIdentity(model), ...resolved.errors];
  const translation = model.kind === 'LLMModel' ? translateLLMModel(model, resolved.context, errors) : translatePassthroughModel(model, resolved.context, errors);
  return { ...translation, objects: translation.objects.map(withAppliedDigest) };
}
