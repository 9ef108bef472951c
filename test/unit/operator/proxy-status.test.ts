// The Programmed condition from what the cluster shows: the generated HTTPRoute's acceptance and
// the Gateway's proxy Deployments (issue 28, defect 4: Ready was not servable).
import { EndpointProgramming, ProxyView, SETTLE_MS, UNSEEN_PROXIES_REQUEUE_MS, programmedCondition, proxyViewOf, routeViewOf } from '../../../src/operator/proxy-status';
import type { Condition } from '../../../src/operator/runtime/conditions';

const GATEWAY = { name: 'nebari-gateway', namespace: 'envoy-gateway-system' };

const proxy = (over: Partial<ProxyView> = {}): ProxyView => ({
  name: 'envoy-envoy-gateway-system-nebari-gateway-1a2b',
  namespace: GATEWAY.namespace,
  gatewayName: GATEWAY.name,
  gatewayNamespace: GATEWAY.namespace,
  generation: 3,
  observedGeneration: 3,
  replicas: 2,
  updatedReplicas: 2,
  availableReplicas: 2,
  podsTotal: 2,
  withSidecar: true,
  ...over,
});

const accepted = { status: 'True', reason: 'Accepted', message: 'Route is accepted', observedGeneration: 1 };
const endpoint = (over: Partial<EndpointProgramming> = {}): EndpointProgramming => ({
  endpoint: 'external',
  routeName: 'alpha-external',
  gateway: GATEWAY,
  route: { name: 'alpha-external', generation: 1, parents: [{ gatewayName: GATEWAY.name, gatewayNamespace: GATEWAY.namespace, accepted, resolvedRefs: { status: 'True', reason: 'ResolvedRefs', message: '' } }] },
  proxies: [proxy()],
  ...over,
});

const T0 = 1_000_000;
const NOW = { now: T0 };

const condition = (status: Condition['status'], reason: string): Condition => ({ type: 'Programmed', status, reason, message: '', lastTransitionTime: '2026-12-04T00:00:00Z' });

describe('programmedCondition', () => {
  test('all served: Settling for SETTLE_MS from when it first looked so, then True', () => {
    const first = programmedCondition([endpoint()], undefined, { now: T0 });
    expect(first.condition).toMatchObject({ status: false, reason: 'Settling' });
    expect(first).toMatchObject({ requeueAfterMs: SETTLE_MS, settlingSince: T0 });
    // A look before SETTLE_MS has passed (an event) keeps settling, with the rest of the wait.
    const early = programmedCondition([endpoint()], condition('False', 'Settling'), { since: T0, now: T0 + 1_000 });
    expect(early).toMatchObject({ condition: { reason: 'Settling' }, requeueAfterMs: SETTLE_MS - 1_000, settlingSince: T0 });
    const second = programmedCondition([endpoint()], condition('False', 'Settling'), { since: T0, now: T0 + SETTLE_MS });
    expect(second.condition).toMatchObject({ status: true, reason: 'Serving' });
    expect(second.condition.message).toContain('HTTPRoute alpha-external on Gateway envoy-gateway-system/nebari-gateway');
    expect(second.requeueAfterMs).toBeUndefined();
    expect(second.settlingSince).toBeUndefined();
  });

  test('a problem seen while settling starts the settling over', () => {
    const rolling = programmedCondition([endpoint({ proxies: [proxy({ updatedReplicas: 1 })] })], condition('False', 'Settling'), { since: T0, now: T0 + 1_000 });
    expect(rolling.condition).toMatchObject({ status: false, reason: 'ProxyRollingOut' });
    expect(rolling.settlingSince).toBeUndefined();
    expect(programmedCondition([endpoint()], condition('False', 'ProxyRollingOut'), { now: T0 + 2_000 })).toMatchObject({ condition: { reason: 'Settling' }, settlingSince: T0 + 2_000 });
  });

  test('no HTTPRoute yet, or not accepted by the Gateway yet: RoutePending', () => {
    expect(programmedCondition([endpoint({ route: undefined })], undefined, NOW).condition).toMatchObject({ status: false, reason: 'RoutePending' });
    const unaccepted = programmedCondition([endpoint({ route: { name: 'alpha-external', generation: 1, parents: [] } })], undefined, NOW).condition;
    expect(unaccepted).toMatchObject({ status: false, reason: 'RoutePending' });
    expect(unaccepted.message).toContain('external endpoint: waiting for Envoy Gateway to accept HTTPRoute alpha-external on Gateway envoy-gateway-system/nebari-gateway');
  });

  test('an acceptance of an older generation of the route does not count', () => {
    const stale = endpoint({ route: { name: 'alpha-external', generation: 2, parents: [{ gatewayName: GATEWAY.name, gatewayNamespace: GATEWAY.namespace, accepted }] } });
    expect(programmedCondition([stale], undefined, NOW).condition).toMatchObject({ status: false, reason: 'RoutePending' });
  });

  test('refused by the Gateway: RouteNotAccepted with the Gateway\'s reason', () => {
    const refused = endpoint({ route: { name: 'alpha-external', generation: 1, parents: [{ gatewayName: GATEWAY.name, gatewayNamespace: GATEWAY.namespace, accepted: { status: 'False', reason: 'NotAllowedByListeners', message: 'no listener allows this route', observedGeneration: 1 } }] } });
    const c = programmedCondition([refused], condition('True', 'Serving'), NOW).condition;
    expect(c).toMatchObject({ status: false, reason: 'RouteNotAccepted' });
    expect(c.message).toContain('NotAllowedByListeners: no listener allows this route');
  });

  test('an acceptance by another Gateway does not count', () => {
    const other = endpoint({ route: { name: 'alpha-external', generation: 1, parents: [{ gatewayName: 'other', gatewayNamespace: GATEWAY.namespace, accepted }] } });
    expect(programmedCondition([other], undefined, NOW).condition).toMatchObject({ status: false, reason: 'RoutePending' });
  });

  test('a proxy without the AI Gateway sidecar, or still rolling: ProxyRollingOut', () => {
    expect(programmedCondition([endpoint({ proxies: [proxy({ withSidecar: false })] })], undefined, NOW).condition).toMatchObject({ status: false, reason: 'ProxyRollingOut' });
    for (const rolling of [{ observedGeneration: 2 }, { updatedReplicas: 1 }, { podsTotal: 3 }, { availableReplicas: 1 }]) {
      const c = programmedCondition([endpoint({ proxies: [proxy(rolling)] })], undefined, NOW).condition;
      expect(c).toMatchObject({ status: false, reason: 'ProxyRollingOut' });
    }
  });

  test('once Programmed, a later roll (another model added) keeps it True; no available proxy turns it False', () => {
    const serving = condition('True', 'Serving');
    expect(programmedCondition([endpoint({ proxies: [proxy({ updatedReplicas: 1, podsTotal: 3 })] })], serving, NOW).condition).toMatchObject({ status: true, reason: 'Serving' });
    expect(programmedCondition([endpoint({ proxies: [proxy({ availableReplicas: 0 })] })], serving, NOW).condition).toMatchObject({ status: false, reason: 'ProxyUnavailable' });
  });

  test('no proxy Deployment of this Gateway: ProxyMissing; proxies not visible: Unknown, naming the chart value', () => {
    expect(programmedCondition([endpoint({ proxies: [proxy({ gatewayName: 'another' })] })], undefined, NOW).condition).toMatchObject({ status: false, reason: 'ProxyMissing' });
    const unseen = programmedCondition([endpoint({ proxies: undefined })], undefined, NOW);
    expect(unseen.condition).toMatchObject({ status: 'Unknown', reason: 'ProxyNotVisible' });
    expect(unseen.condition.message).toContain('platform.proxyStatus');
    expect(unseen.requeueAfterMs).toBe(UNSEEN_PROXIES_REQUEUE_MS);
    // After an operator restart, before the proxies' watch has listed: a Programmed model stays so.
    const kept = programmedCondition([endpoint({ proxies: undefined })], { ...condition('True', 'Serving'), message: 'as before' }, NOW);
    expect(kept.condition).toEqual({ type: 'Programmed', status: true, reason: 'Serving', message: 'as before' });
  });

  test('every enabled endpoint must be served: the internal one pending keeps it False', () => {
    const internal = endpoint({ endpoint: 'internal', routeName: 'alpha-internal', route: undefined });
    const c = programmedCondition([endpoint(), internal], condition('False', 'Settling'), NOW).condition;
    expect(c).toMatchObject({ status: false, reason: 'RoutePending' });
    expect(c.message).toMatch(/^internal endpoint: /);
  });
});

describe('what the watches cache', () => {
  test('a generated HTTPRoute keeps its parents\' Accepted and ResolvedRefs only', () => {
    const stored = routeViewOf({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name: 'alpha-external', namespace: 'models', generation: 4, uid: 'u', resourceVersion: '9' },
      spec: { rules: [{ backendRefs: [{ name: 'x' }] }] },
      status: { parents: [{ parentRef: { name: GATEWAY.name, namespace: GATEWAY.namespace }, controllerName: 'gateway.envoyproxy.io/gatewayclass-controller', conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted', message: 'ok', observedGeneration: 4, lastTransitionTime: 't' }, { type: 'ResolvedRefs', status: 'False', reason: 'BackendNotFound', message: 'gone', lastTransitionTime: 't' }] }] },
    } as never) as unknown as { view: unknown; spec?: unknown };
    expect(stored.spec).toBeUndefined();
    expect(stored.view).toEqual({
      name: 'alpha-external',
      generation: 4,
      parents: [{ gatewayName: GATEWAY.name, gatewayNamespace: GATEWAY.namespace, accepted: { status: 'True', reason: 'Accepted', message: 'ok', observedGeneration: 4 }, resolvedRefs: { status: 'False', reason: 'BackendNotFound', message: 'gone' } }],
    });
  });

  test('a proxy Deployment keeps its rollout counts, owning Gateway and whether the sidecar is on', () => {
    const stored = proxyViewOf({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'envoy-x', namespace: GATEWAY.namespace, generation: 5, labels: { 'gateway.envoyproxy.io/owning-gateway-name': GATEWAY.name, 'gateway.envoyproxy.io/owning-gateway-namespace': GATEWAY.namespace } },
      spec: { replicas: 2, template: { metadata: { annotations: { 'aigateway.envoyproxy.io/extproc-config-hash': 'abc' } }, spec: { containers: [{ name: 'envoy', env: [{ name: 'SECRET', value: 'not cached' }] }] } } },
      status: { observedGeneration: 4, replicas: 3, updatedReplicas: 1, availableReplicas: 2 },
    } as never) as unknown as { view: ProxyView; spec?: unknown };
    expect(stored.spec).toBeUndefined();
    expect(JSON.stringify(stored)).not.toContain('not cached');
    expect(stored.view).toEqual({ name: 'envoy-x', namespace: GATEWAY.namespace, gatewayName: GATEWAY.name, gatewayNamespace: GATEWAY.namespace, generation: 5, observedGeneration: 4, replicas: 2, updatedReplicas: 1, availableReplicas: 2, podsTotal: 3, withSidecar: true });
  });
});
