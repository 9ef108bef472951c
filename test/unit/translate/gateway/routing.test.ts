// spec.routing in the gateway translation: fallback models become lower priorities of the route's
// backends, splits become weights, retries and the passive health check go into the endpoint's
// BackendTrafficPolicy (merged with quotas on the external endpoint), timeouts onto the rules.
import { desiredGatewayObjects } from '../../../../src/translate/gateway';
import type { GatewayContext, GeneratedGatewayObject } from '../../../../src/translate/gateway';
import { llmModel, passthroughModel } from './model-matrix';

const context = { baseDomain: 'example.com', jwt: { issuer: 'https://keycloak.example.com/realms/nebari', audiences: ['nebari-llm'] } };
const provider = { hostname: 'api.openai.com', credential: { secretRef: { name: 'k' } } };

function translate(routing: object, ctx: GatewayContext = context) {
  const result = desiredGatewayObjects(passthroughModel('primary', { provider, routing } as never), ctx);
  expect(result.errors).toEqual([]);
  const byName = (name: string) => result.objects.find((o) => o.metadata.name === name) as GeneratedGatewayObject & { spec: Record<string, unknown> };
  return { ...result, byName };
}

test('fallback models follow the model itself, one priority each, with a model id override where asked', () => {
  const { byName } = translate({ fallback: [{ name: 'backup' }, { name: 'last', model: 'other-id' }] });
  const rule = (byName('primary-external').spec.rules as { backendRefs: unknown[] }[])[0];
  expect(rule.backendRefs).toEqual([
    { name: 'primary', weight: 1, priority: 0 },
    { name: 'backup', weight: 1, priority: 1 },
    { name: 'last', weight: 1, priority: 2, modelNameOverride: 'other-id' },
  ]);
});

test('fallback without retries written: one retry per fallback, each to the next priority, and the passive health check', () => {
  const { byName, deletions } = translate({ fallback: [{ name: 'backup' }] });
  for (const [policy, route] of [['primary-external-quota', 'primary-external'], ['primary-internal-traffic', 'primary-internal']]) {
    expect(byName(policy).spec).toEqual({
      targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: route }],
      retry: { numRetries: 1, numAttemptsPerPriority: 1, retryOn: { triggers: ['connect-failure', 'reset', 'refused-stream', 'retriable-status-codes'], httpStatusCodes: [503] } },
      healthCheck: {
        passive: { alwaysEjectOneEndpoint: false, consecutive5XxErrors: 1, consecutiveLocalOriginFailures: 5, splitExternalLocalOriginErrors: false, interval: '3s', baseEjectionTime: '30s', maxEjectionPercent: 100 },
      },
    });
  }
  expect(deletions.filter((d) => d.object.kind === 'BackendTrafficPolicy')).toEqual([]);
});

test('retries as written: attempts, conditions, status codes, per-try timeout and backoff (max defaults to 10 x base)', () => {
  const { byName } = translate({ retries: { attempts: 3, retryOn: ['reset', 'connect-failure'], statusCodes: [503, 500, 429], perTryTimeout: '10s', backoff: { baseInterval: '100ms' } } });
  expect(byName('primary-internal-traffic').spec).toEqual({
    targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'primary-internal' }],
    retry: {
      numRetries: 3,
      retryOn: { triggers: ['reset', 'connect-failure', 'retriable-status-codes'], httpStatusCodes: [429, 500, 503] },
      perRetry: { timeout: '10s', backOff: { baseInterval: '100ms', maxInterval: '1000ms' } },
    },
  });
});

test('splits: the model and its split targets share priority 0 by weight; fallbacks come after', () => {
  const { byName } = translate({ weight: 90, split: [{ name: 'canary', weight: 10 }], fallback: [{ name: 'backup' }] });
  const rule = (byName('primary-external').spec.rules as { backendRefs: unknown[] }[])[0];
  expect(rule.backendRefs).toEqual([
    { name: 'primary', weight: 90, priority: 0 },
    { name: 'canary', weight: 10, priority: 0 },
    { name: 'backup', weight: 1, priority: 1 },
  ]);
});

test('timeouts: the whole-request timeout replaces the platform default, the idle timeout goes onto every rule', () => {
  const { byName } = translate({ timeouts: { request: '900s', streamIdle: '30s' } });
  const rules = byName('primary-external').spec.rules as { timeouts: unknown; streamIdleTimeout: unknown }[];
  expect(rules.map((r) => [r.timeouts, r.streamIdleTimeout])).toEqual([[{ request: '900s' }, '30s']]);
  // Timeouts alone need no traffic policy.
  expect(byName('primary-internal-traffic')).toBeUndefined();
});

test('no routing: the route is as before, one backend, no idle timeout, no traffic policy', () => {
  const { byName } = translate({});
  const rule = (byName('primary-external').spec.rules as Record<string, unknown>[])[0];
  expect(rule.backendRefs).toEqual([{ name: 'primary', weight: 1, priority: 0 }]);
  expect('streamIdleTimeout' in rule).toBe(false);
  expect(byName('primary-external-quota')).toBeUndefined();
});

test('quotas and retries share the external policy (Envoy Gateway attaches one per route)', () => {
  const quotas = { costType: 'TotalToken', defaultTier: 'standard', tiers: [{ name: 'standard', tokens: 1000, unit: 'Hour' }] } as const;
  const { byName } = translate({ retries: { attempts: 1 } }, { ...context, quotas, apiKeyClientIDs: ['primary-alice-1'] });
  const spec = byName('primary-external-quota').spec as { rateLimit?: unknown; retry?: unknown };
  expect(spec.rateLimit).toBeDefined();
  expect(spec.retry).toMatchObject({ numRetries: 1 });
});

test('LLMModel: retries and timeouts apply; routing.timeouts.request wins over spec.endpoints.requestTimeout', () => {
  const model = llmModel('llama', { endpoints: { requestTimeout: '600s' }, routing: { retries: { attempts: 2 }, timeouts: { request: '1200s', streamIdle: '60s' } } } as never);
  const { objects, errors } = desiredGatewayObjects(model, context);
  expect(errors).toEqual([]);
  const route = objects.find((o) => o.metadata.name === 'llama-external') as unknown as { spec: { rules: { timeouts: unknown; streamIdleTimeout: unknown; backendRefs: unknown[] }[] } };
  expect(route.spec.rules[0]).toMatchObject({ timeouts: { request: '1200s' }, streamIdleTimeout: '60s' });
  expect(route.spec.rules[0].backendRefs).toHaveLength(1);
  const policy = objects.find((o) => o.metadata.name === 'llama-internal-traffic') as unknown as { spec: { retry: unknown; healthCheck?: unknown } };
  expect(policy.spec.retry).toMatchObject({ numRetries: 2 });
  expect(policy.spec.healthCheck).toBeUndefined();
});
