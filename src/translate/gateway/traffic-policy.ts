// The BackendTrafficPolicy on an endpoint's generated HTTPRoute: the model's retries and passive
// health check (spec.routing), the per-key quotas on the external endpoint (quotas.ts) and, with
// gateway tracing on, the route's sampling share and span tags.
// Envoy Gateway attaches one BackendTrafficPolicy per route (a second one targeting the same
// route is Conflicted), so everything the route needs goes into one object per endpoint.
import type { ResolvedEndpoint, ResolvedGatewayContext } from './context';
import { ok, Result } from './errors';
import { gatewayMetadata, ModelIdentity } from './labels';
import { EndpointName, gatewayObjectNames } from './names';
import { BackendTrafficPolicy, ENVOY_GATEWAY_API_VERSION, GATEWAY_API_GROUP, PassiveHealthCheck, RateLimitRule, RetrySettings, RetryTrigger, RouteTracing } from './objects';
import { ROUTING_DEFAULTS, type PassthroughRouting } from '../../api/routing';

/** The parts of spec.routing the policy needs (LLMModels have no fallback or split). */
export type RoutingSpec = Pick<PassthroughRouting, 'retries' | 'fallback' | 'split'>;

/**
 * Envoy Gateway's retry for the model: the model's own retries, or, with fallback models and no
 * retries written, one try per fallback. With fallbacks each try goes to the next priority.
 */
export function routeRetry(routing: RoutingSpec | undefined): RetrySettings | undefined {
  const fallbacks = routing?.fallback?.length ?? 0;
  const retries = routing?.retries;
  const attempts = retries?.attempts ?? fallbacks;
  if (attempts === 0) return undefined;
  const statusCodes = [...(retries?.statusCodes ?? ROUTING_DEFAULTS.retryStatusCodes)].sort((a, b) => a - b);
  const triggers: RetryTrigger[] = [...(retries?.retryOn ?? ROUTING_DEFAULTS.retryOn)];
  if (statusCodes.length > 0) triggers.push('retriable-status-codes');
  const backoff = retries?.backoff;
  const perRetry = {
    ...(retries?.perTryTimeout ? { timeout: retries.perTryTimeout } : {}),
    ...(backoff ? { backOff: { baseInterval: backoff.baseInterval, maxInterval: backoff.maxInterval ?? tenTimes(backoff.baseInterval) } } : {}),
  };
  return {
    numRetries: attempts,
    ...(fallbacks > 0 ? { numAttemptsPerPriority: 1 } : {}),
    retryOn: { triggers, ...(statusCodes.length > 0 ? { httpStatusCodes: statusCodes } : {}) },
    ...(Object.keys(perRetry).length > 0 ? { perRetry } : {}),
  };
}

/** `10 * duration` for the default maximum backoff (durations are Gateway API: units h, m, s, ms). */
function tenTimes(duration: string): string {
  const UNIT_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
  let ms = 0;
  for (const [, n, unit] of duration.matchAll(/([0-9]+)(ms|h|m|s)/g)) ms += Number(n) * UNIT_MS[unit];
  return `${ms * 10}ms`;
}

/**
 * With several upstreams (fallback or split), one that fails is skipped at once for 30 s, so the
 * next requests go straight to the others instead of paying a failed try each. Every field is
 * written (the CRD defaults included) so the stored policy equals the applied one.
 */
export function routeHealthCheck(routing: RoutingSpec | undefined): PassiveHealthCheck | undefined {
  if ((routing?.fallback?.length ?? 0) === 0 && (routing?.split?.length ?? 0) === 0) return undefined;
  return {
    alwaysEjectOneEndpoint: false,
    consecutive5XxErrors: ROUTING_DEFAULTS.consecutiveFailures,
    consecutiveLocalOriginFailures: 5,
    splitExternalLocalOriginErrors: false,
    interval: '3s',
    baseEjectionTime: ROUTING_DEFAULTS.ejectionTime,
    maxEjectionPercent: 100,
  };
}

/** Sampling fractions are written over this denominator: a ratio keeps four decimal places. */
const SAMPLING_DENOMINATOR = 10_000;

/**
 * The route's tracing: the chart's sampling share, and tags naming the model and endpoint so a
 * trace is found by model. No caller tag: the client-ID header is gone from the request by the
 * time Envoy writes the span of an answered PassthroughModel request (the AIServiceBackend
 * removes it before the upstream), so such a tag would be set only on refused requests.
 */
export function routeTracing(model: ModelIdentity, endpoint: EndpointName, tracing: ResolvedGatewayContext['tracing']): RouteTracing | undefined {
  if (!tracing) return undefined;
  return {
    samplingFraction: { numerator: Math.round(tracing.samplingRatio * SAMPLING_DENOMINATOR), denominator: SAMPLING_DENOMINATOR },
    tags: {
      [TRACE_TAGS.model]: model.metadata.name ?? '',
      [TRACE_TAGS.kind]: model.kind,
      [TRACE_TAGS.namespace]: model.metadata.namespace ?? '',
      [TRACE_TAGS.endpoint]: endpoint,
    },
  };
}

/** Span tag names (documented in docs/observability.md "Tracing"). */
export const TRACE_TAGS = {
  model: 'nebari.llm.model',
  kind: 'nebari.llm.model_kind',
  namespace: 'nebari.llm.namespace',
  endpoint: 'nebari.llm.endpoint',
} as const;

/** The endpoint's policy, or undefined when the route needs none (no retries, no fallback, no quotas, no tracing). */
export function endpointTrafficPolicy(
  model: ModelIdentity,
  endpoint: ResolvedEndpoint & { readonly name: EndpointName },
  routing: RoutingSpec | undefined,
  quotaRules: readonly RateLimitRule[] | undefined,
  tracing?: RouteTracing,
): Result<BackendTrafficPolicy | undefined> {
  const retry = routeRetry(routing);
  const passive = routeHealthCheck(routing);
  if (!retry && !passive && !quotaRules && !tracing) return ok(undefined);
  const names = gatewayObjectNames(model.metadata.name ?? '');
  return ok({
    apiVersion: ENVOY_GATEWAY_API_VERSION,
    kind: 'BackendTrafficPolicy',
    metadata: gatewayMetadata(model, names.trafficPolicy(endpoint.name), endpoint.name),
    spec: {
      targetRefs: [{ group: GATEWAY_API_GROUP, kind: 'HTTPRoute', name: names.route(endpoint.name) }],
      // No rules yet (no keys): a policy that limits nothing, so the route never waits for one.
      ...(quotaRules ? { rateLimit: { global: { rules: quotaRules } } } : {}),
      ...(retry ? { retry } : {}),
      ...(passive ? { healthCheck: { passive } } : {}),
      ...(tracing ? { telemetry: { tracing } } : {}),
    },
  });
}
