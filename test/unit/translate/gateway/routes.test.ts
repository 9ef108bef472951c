import { endpointRoute, MAX_MATCHES_PER_RULE, MODEL_HEADER, RouteCatalog, routeRules } from '../../../../src/translate/gateway/routes';
import type { ResolvedEndpoint } from '../../../../src/translate/gateway/context';
import type { ModelIdentity } from '../../../../src/translate/gateway/labels';

const model: ModelIdentity = { apiVersion: 'llm.nebari.dev/v1beta1', kind: 'PassthroughModel', metadata: { name: 'openai', namespace: 'models', uid: 'u-1' } };
const external: ResolvedEndpoint = { name: 'external', hostname: 'llm.example.com', gatewayName: 'nebari-gateway', gatewayNamespace: 'envoy-gateway-system', sectionName: 'llm-https' };
const catalog = (over: Partial<RouteCatalog> = {}): RouteCatalog => ({
  modelIds: ['gpt-4o'],
  catchAll: false,
  backends: [{ kind: 'AIServiceBackend', name: 'openai', weight: 1, priority: 0 }],
  modelsOwnedBy: 'api.openai.com',
  requestTimeout: '120s',
  modelIdsField: 'spec.models',
  ...over,
});
const ruleSummary = (c: RouteCatalog) => {
  const rules = routeRules(c);
  if (!rules.ok) throw new Error(rules.errors[0].message);
  return rules.value.map((r) => ({ name: r.name, ids: r.matches?.map((m) => m.headers[0].value) }));
};

test('one declared model: one named rule matching x-ai-eg-model exactly, with timeout and owner', () => {
  const rules = routeRules(catalog());
  expect(rules).toEqual({
    ok: true,
    value: [
      {
        name: 'models',
        matches: [{ headers: [{ type: 'Exact', name: 'x-ai-eg-model', value: 'gpt-4o' }] }],
        backendRefs: [{ name: 'openai', weight: 1, priority: 0 }],
        timeouts: { request: '120s' },
        modelsOwnedBy: 'api.openai.com',
      },
    ],
  });
  expect(MODEL_HEADER).toBe('x-ai-eg-model');
});

test('duplicates are dropped and order is kept', () => {
  expect(ruleSummary(catalog({ modelIds: ['b', 'a', 'b', 'c'] }))).toEqual([{ name: 'models', ids: ['b', 'a', 'c'] }]);
});

test('catch-all adds a last rule matching any model id by regular expression; catch-all alone is one rule', () => {
  expect(ruleSummary(catalog({ catchAll: true }))).toEqual([
    { name: 'models', ids: ['gpt-4o'] },
    { name: 'catch-all', ids: ['.+'] },
  ]);
  const only = routeRules(catalog({ modelIds: [], catchAll: true }));
  expect(only.ok && only.value).toEqual([
    {
      name: 'catch-all',
      matches: [{ headers: [{ type: 'RegularExpression', name: 'x-ai-eg-model', value: '.+' }] }],
      backendRefs: [{ name: 'openai', weight: 1, priority: 0 }],
      timeouts: { request: '120s' },
      modelsOwnedBy: 'api.openai.com',
    },
  ]);
});

test('more ids than the generated HTTPRoute holds per rule are split into several named rules', () => {
  const ids = Array.from({ length: MAX_MATCHES_PER_RULE * 2 + 1 }, (_, i) => `m-${i}`);
  const rules = ruleSummary(catalog({ modelIds: ids, catchAll: true }));
  expect(rules.map((r) => [r.name, r.ids?.length])).toEqual([
    ['models', 64],
    ['models-2', 64],
    ['models-3', 1],
    ['catch-all', 1],
  ]);
  expect(rules.slice(0, 3).flatMap((r) => r.ids ?? [])).toEqual(ids);
});

test('too many ids for 15 rules, or none at all, are errors naming the field', () => {
  const tooMany = routeRules(catalog({ modelIds: Array.from({ length: 15 * 64 + 1 }, (_, i) => `m-${i}`) }));
  expect(tooMany.ok).toBe(false);
  if (!tooMany.ok) expect(tooMany.errors[0].message).toBe('spec.models: 961 model ids need 16 route rules, more than the 15 an AIGatewayRoute allows; declare at most 960 ids or split the provider into several models');
  const none = routeRules(catalog({ modelIds: [] }));
  expect(none.ok || none.errors[0].message).toBe('spec.models: no model would be routed; list model ids or enable the catch-all');
});

test('InferencePool backends carry group and kind', () => {
  const rules = routeRules(catalog({ backends: [{ kind: 'InferencePool', name: 'llama' }] }));
  expect(rules.ok && rules.value[0].backendRefs).toEqual([{ group: 'inference.networking.k8s.io', kind: 'InferencePool', name: 'llama', weight: 1, priority: 0 }]);
});

test('the route declares exactly its endpoint host name and attaches to its Gateway listener', () => {
  const route = endpointRoute(model, external, catalog());
  expect(route.ok).toBe(true);
  if (!route.ok) return;
  expect(route.value.metadata.name).toBe('openai-external');
  expect(route.value.spec.hostnames).toEqual(['llm.example.com']);
  expect(route.value.spec.parentRefs).toEqual([
    { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'nebari-gateway', namespace: 'envoy-gateway-system', sectionName: 'llm-https' },
  ]);
  const noSection = endpointRoute(model, { ...external, sectionName: '' }, catalog());
  expect(noSection.ok && noSection.value.spec.parentRefs[0]).toEqual({ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'nebari-gateway', namespace: 'envoy-gateway-system' });
});
