// One AIGatewayRoute per enabled endpoint. Each declares exactly one host name (its endpoint's),
// so the AI Gateway's `/v1/models` on that host lists only the models routed there, whether or
// not the other endpoint is enabled. Rules match the `x-ai-eg-model` header the AI Gateway fills
// from the request body; an optional catch-all rule takes every other model id.
import type { ResolvedEndpoint } from './context';
import { failed, ok, Result, translationError } from './errors';
import { gatewayMetadata, ModelIdentity } from './labels';
import { gatewayObjectNames } from './names';
import {
  AI_GATEWAY_API_VERSION,
  AIGatewayRoute,
  AIGatewayRouteBackendRef,
  AIGatewayRouteRule,
  GATEWAY_API_GROUP,
  LLMRequestCost,
  INFERENCE_API_GROUP,
} from './objects';

/** The header the AI Gateway sets from the request body's `model` field before routing. */
export const MODEL_HEADER = 'x-ai-eg-model';
/** AIGatewayRoute allows 15 rules (the 16th HTTPRoute rule is the controller's not-found rule). */
export const MAX_ROUTE_RULES = 15;
/** The generated HTTPRoute allows 64 matches per rule, fewer than AIGatewayRoute's 128. */
export const MAX_MATCHES_PER_RULE = 64;
export const CATCH_ALL_RULE_NAME = 'catch-all';
/** Any non-empty model id. */
export const CATCH_ALL_MODEL_PATTERN = '.+';

/**
 * Where a route sends its traffic: one InferencePool (LLMModel), or AIServiceBackends with a
 * weight (splits) and a priority (0 first; higher ones take over when the ones before fail).
 */
export type RouteBackend =
  | { readonly kind: 'AIServiceBackend'; readonly name: string; readonly weight: number; readonly priority: number; readonly modelNameOverride?: string }
  | { readonly kind: 'InferencePool'; readonly name: string };

/** What one model publishes on an endpoint. */
export interface RouteCatalog {
  /** Model ids matched exactly and listed in `/v1/models`, in order (duplicates are dropped). */
  readonly modelIds: readonly string[];
  /** Also route every model id no other rule claims. */
  readonly catchAll: boolean;
  readonly backends: readonly RouteBackend[];
  /** `owned_by` of the listed models. */
  readonly modelsOwnedBy: string;
  /** Gateway API duration of the whole request. */
  readonly requestTimeout: string;
  /** Gateway API duration the upstream may stay silent (spec.routing.timeouts.streamIdle); none when absent. */
  readonly streamIdleTimeout?: string;
  /** Field the model ids came from, for errors. */
  readonly modelIdsField: string;
}

function backendRef(backend: RouteBackend): AIGatewayRouteBackendRef {
  // weight and priority are written although they are the CRD defaults, so the stored object
  // equals the applied one.
  return backend.kind === 'InferencePool'
    ? { group: INFERENCE_API_GROUP, kind: 'InferencePool', name: backend.name, weight: 1, priority: 0 }
    : { name: backend.name, weight: backend.weight, priority: backend.priority, ...(backend.modelNameOverride ? { modelNameOverride: backend.modelNameOverride } : {}) };
}

function modelRuleName(index: number): string {
  return index === 0 ? 'models' : `models-${index + 1}`;
}

/** The route rules for a catalog: model ids in chunks the generated HTTPRoute can hold, then the catch-all. */
export function routeRules(catalog: RouteCatalog): Result<AIGatewayRouteRule[]> {
  const ids = [...new Set(catalog.modelIds)];
  const chunks: string[][] = [];
  for (let i = 0; i < ids.length; i += MAX_MATCHES_PER_RULE) chunks.push(ids.slice(i, i + MAX_MATCHES_PER_RULE));
  const ruleCount = chunks.length + (catalog.catchAll ? 1 : 0);
  if (ruleCount > MAX_ROUTE_RULES) {
    return failed(
      translationError(
        catalog.modelIdsField,
        `${ids.length} model ids need ${ruleCount} route rules, more than the ${MAX_ROUTE_RULES} an AIGatewayRoute allows; declare at most ${(MAX_ROUTE_RULES - (catalog.catchAll ? 1 : 0)) * MAX_MATCHES_PER_RULE} ids or split the provider into several models`,
      ),
    );
  }
  if (ruleCount === 0) {
    return failed(translationError(catalog.modelIdsField, 'no model would be routed; list model ids or enable the catch-all'));
  }
  const common = {
    backendRefs: catalog.backends.map(backendRef),
    timeouts: { request: catalog.requestTimeout },
    ...(catalog.streamIdleTimeout ? { streamIdleTimeout: catalog.streamIdleTimeout } : {}),
    modelsOwnedBy: catalog.modelsOwnedBy,
  };
  const rules: AIGatewayRouteRule[] = chunks.map((chunk, index) => ({
    name: modelRuleName(index),
    matches: chunk.map((id) => ({ headers: [{ type: 'Exact' as const, name: MODEL_HEADER, value: id }] })),
    ...common,
  }));
  // A regular-expression match on the model header. Envoy Gateway orders routes on a host by
  // header count, then by the number of exact header matches: an exact model rule of any route
  // on the host beats this rule, and this rule beats the AI Gateway's header-less not-found
  // rules, whatever the routes' ages. The AI Gateway lists only exact matches in /v1/models.
  if (catalog.catchAll) {
    rules.push({
      name: CATCH_ALL_RULE_NAME,
      matches: [{ headers: [{ type: 'RegularExpression', name: MODEL_HEADER, value: CATCH_ALL_MODEL_PATTERN }] }],
      ...common,
    });
  }
  return ok(rules);
}

/** The AIGatewayRoute publishing `catalog` on `endpoint`; `costs` are the token counts quotas charge (quotas.ts). */
export function endpointRoute(model: ModelIdentity, endpoint: ResolvedEndpoint, catalog: RouteCatalog, costs: readonly LLMRequestCost[] = []): Result<AIGatewayRoute> {
  const rules = routeRules(catalog);
  if (!rules.ok) return rules;
  const names = gatewayObjectNames(model.metadata.name ?? '');
  return ok({
    apiVersion: AI_GATEWAY_API_VERSION,
    kind: 'AIGatewayRoute',
    metadata: gatewayMetadata(model, names.route(endpoint.name), endpoint.name),
    spec: {
      parentRefs: [
        {
          group: GATEWAY_API_GROUP,
          kind: 'Gateway',
          name: endpoint.gatewayName,
          namespace: endpoint.gatewayNamespace,
          ...(endpoint.sectionName ? { sectionName: endpoint.sectionName } : {}),
        },
      ],
      hostnames: [endpoint.hostname],
      rules: rules.value,
      ...(costs.length > 0 ? { llmRequestCosts: costs } : {}),
    },
  });
}
