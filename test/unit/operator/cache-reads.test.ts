// What the operator keeps of generated objects, the registry that lets a whole-kind informer
// answer lookups, and how one pass's condition changes become Events.
import { KubeRest, type KubeObject } from '../../../src/kube/rest';
import { StaticConnection } from '../../../src/kube/connection';
import { lookupMetadata } from '../../../src/operator/runtime/apply';
import { cachedLookup, registerCachedKind } from '../../../src/operator/runtime/cached-lookups';
import { recordTransitions } from '../../../src/operator/reconcile-context';
import type { EventRecorder } from '../../../src/runtime/events';

const route: KubeObject = {
  apiVersion: 'aigateway.envoyproxy.io/v1beta1',
  kind: 'AIGatewayRoute',
  metadata: {
    name: 'gpt-external',
    namespace: 'llm',
    uid: 'u1',
    resourceVersion: '42',
    generation: 3,
    labels: { 'llm.nebari.dev/model-kind': 'PassthroughModel' },
    annotations: { big: 'x'.repeat(10_000), 'llm.nebari.dev/applied-digest': 'd1', 'llm.nebari.dev/applied-generation': '3' },
    ownerReferences: [
      { apiVersion: 'llm.nebari.dev/v1alpha1', kind: 'PassthroughModel', name: 'gpt', uid: 'm1', controller: true },
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'other', uid: 'c1' },
    ],
    managedFields: [
      { manager: 'nebari-llm-serving-operator', operation: 'Apply', fieldsV1: { 'f:spec': {} } },
      { manager: 'envoy-gateway', operation: 'Update', subresource: 'status', fieldsV1: { 'f:status': {} } },
      { manager: 'nebari-llm-serving-operator', operation: 'Update', fieldsV1: { 'f:metadata': {} } },
    ],
  },
  spec: { rules: [] },
};

describe('lookupMetadata', () => {
  it('keeps identity, version, generation, labels, our digest annotations, the controller and the names of spec managers; drops spec, other annotations and field sets', () => {
    expect(lookupMetadata(route)).toEqual({
      apiVersion: 'aigateway.envoyproxy.io/v1beta1',
      kind: 'AIGatewayRoute',
      metadata: {
        name: 'gpt-external',
        namespace: 'llm',
        uid: 'u1',
        resourceVersion: '42',
        generation: 3,
        labels: { 'llm.nebari.dev/model-kind': 'PassthroughModel' },
        annotations: { 'llm.nebari.dev/applied-digest': 'd1', 'llm.nebari.dev/applied-generation': '3' },
        ownerReferences: [{ apiVersion: 'llm.nebari.dev/v1alpha1', kind: 'PassthroughModel', name: 'gpt', uid: 'm1', controller: true }],
        managedFields: [{ manager: 'nebari-llm-serving-operator' }],
      },
    });
  });

  it('keeps a deletion timestamp', () => {
    expect(lookupMetadata({ ...route, metadata: { ...route.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } }).metadata.deletionTimestamp).toBe('2026-01-01T00:00:00Z');
  });
});

describe('cachedLookup', () => {
  const client = () => new KubeRest(new StaticConnection({ server: 'https://127.0.0.1:1' }));

  it('answers only for a registered, synced kind in that namespace; a miss there is "absent"', () => {
    const c = client();
    const cache = { hasSynced: false, get: (_ns: string | undefined, name: string) => (name === 'gpt-external' ? route : undefined) };
    registerCachedKind(c, route.apiVersion, route.kind, 'llm', cache);
    expect(cachedLookup(c, route.apiVersion, route.kind, 'llm', 'gpt-external')).toBeUndefined(); // not listed yet
    cache.hasSynced = true;
    expect(cachedLookup(c, route.apiVersion, route.kind, 'llm', 'gpt-external')).toEqual({ object: route });
    expect(cachedLookup(c, route.apiVersion, route.kind, 'llm', 'absent')).toEqual({ object: undefined });
    expect(cachedLookup(c, route.apiVersion, route.kind, 'elsewhere', 'gpt-external')).toBeUndefined();
    expect(cachedLookup(c, route.apiVersion, 'SecurityPolicy', 'llm', 'gpt-external')).toBeUndefined();
    expect(cachedLookup(client(), route.apiVersion, route.kind, 'llm', 'gpt-external')).toBeUndefined(); // another client
  });
});

describe('recordTransitions', () => {
  const recorded: Array<[string, string, string]> = [];
  const events = { record: async (_o: KubeObject, type: string, reason: string, message: string) => void recorded.push([type, reason, message]) } as unknown as EventRecorder;
  beforeEach(() => (recorded.length = 0));

  it('folds the good news of one pass into one Normal Event and keeps one Warning per problem', async () => {
    await recordTransitions(events, route, [
      { type: 'CredentialResolved', status: false, reason: 'SecretNotFound', message: 'Secret x does not exist' },
      { type: 'BackendConfigured', status: true, reason: 'Applied', message: 'backend configured' },
      { type: 'ExternalEndpointReady', status: true, reason: 'Applied', message: 'served' },
      { type: 'CleanupBlocked', status: true, reason: 'ForeignFinalizer', message: 'held' },
    ]);
    expect(recorded).toEqual([
      ['Warning', 'SecretNotFound', 'CredentialResolved: Secret x does not exist'],
      ['Warning', 'ForeignFinalizer', 'CleanupBlocked: held'],
      ['Normal', 'Reconciled', 'BackendConfigured: backend configured; ExternalEndpointReady: served'],
    ]);
  });

  it('folds an Unknown condition into the Normal Event: Unknown is not a problem state', async () => {
    await recordTransitions(events, route, [
      { type: 'BackendConfigured', status: true, reason: 'Applied', message: 'backend configured' },
      { type: 'Programmed', status: 'Unknown', reason: 'ProxyStatusOff', message: 'not watched' },
      { type: 'CleanupBlocked', status: 'Unknown', reason: 'Checking', message: 'looking' },
    ]);
    await recordTransitions(events, route, [{ type: 'Programmed', status: 'Unknown', reason: 'ProxyNotVisible', message: 'no Role' }]);
    expect(recorded).toEqual([
      ['Normal', 'Reconciled', 'BackendConfigured: backend configured; Programmed: not watched; CleanupBlocked: looking'],
      ['Normal', 'ProxyNotVisible', 'Programmed: no Role'],
    ]);
  });

  it('keeps the reason of a single good transition, and records nothing when nothing changed', async () => {
    await recordTransitions(events, route, [{ type: 'Ready', status: 'True', reason: 'Applied', message: 'ok' }]);
    await recordTransitions(events, route, []);
    expect(recorded).toEqual([['Normal', 'Applied', 'Ready: ok']]);
  });
});
