import { Blocker, cleanupBlockedCondition, removeFinalizersPatch } from '../../../src/operator/cleanup-blocked';

const AI_GW = 'aigateway.envoyproxy.io/finalizer';
const httpRoute: Blocker = { kind: 'HTTPRoute', namespace: 'ns', name: 'gpt-external', resource: 'httproutes.gateway.networking.k8s.io', deleting: false, finalizers: [] };
const route: Blocker = { kind: 'AIGatewayRoute', namespace: 'ns', name: 'gpt-external', resource: 'aigatewayroutes.aigateway.envoyproxy.io', deleting: true, finalizers: [AI_GW] };

describe('removeFinalizersPatch', () => {
  it('removes only the named finalizers, highest index first, each tested first', () => {
    expect(removeFinalizersPatch(['foregroundDeletion', AI_GW, 'x.example/keep', 'y.example/f'], [AI_GW, 'y.example/f'])).toEqual([
      { op: 'test', path: '/metadata/finalizers/3', value: 'y.example/f' },
      { op: 'remove', path: '/metadata/finalizers/3' },
      { op: 'test', path: '/metadata/finalizers/1', value: AI_GW },
      { op: 'remove', path: '/metadata/finalizers/1' },
    ]);
    expect(removeFinalizersPatch(['a'], ['b'])).toEqual([]);
  });
});

describe('cleanupBlockedCondition', () => {
  it('names the owner held by the AI Gateway finalizer (background deletion), its controller and the kubectl patch that removes only that finalizer', () => {
    const c = cleanupBlockedCondition({ object: httpRoute, owner: route }, 120);
    expect(c).toMatchObject({ type: 'CleanupBlocked', status: true, reason: 'ForeignFinalizer' });
    expect(c.message).toContain('deletion has waited more than 120 s for HTTPRoute ns/gpt-external to go');
    expect(c.message).toContain(`its owner AIGatewayRoute ns/gpt-external, which is being deleted but held by finalizer ${AI_GW}, which the operator never removes`);
    expect(c.message).toContain('Start the Envoy AI Gateway controller');
    expect(c.message).toContain(`kubectl patch aigatewayroutes.aigateway.envoyproxy.io gpt-external -n ns --type=json -p '[{"op":"test","path":"/metadata/finalizers/0","value":"${AI_GW}"},{"op":"remove","path":"/metadata/finalizers/0"}]'`);
    expect(c.message!.length).toBeLessThanOrEqual(1024); // mergeConditions cuts longer messages
  });

  it('names a finalizer on the awaited object itself, leaving the garbage collector\'s own alone', () => {
    const c = cleanupBlockedCondition({ object: { ...httpRoute, deleting: true, finalizers: ['foregroundDeletion', 'policy.example.com/cleanup'] } }, 5);
    expect(c.reason).toBe('ForeignFinalizer');
    expect(c.message).toContain('HTTPRoute ns/gpt-external to go; it is being deleted but held by finalizer policy.example.com/cleanup');
    expect(c.message).toContain('Start the controller that set it');
    expect(c.message).toContain('"path":"/metadata/finalizers/1"');
    expect(c.message).not.toContain('"value":"foregroundDeletion"');
  });

  it('points at the garbage collector when only it holds the object', () => {
    expect(cleanupBlockedCondition({ object: { ...httpRoute, deleting: true, finalizers: ['foregroundDeletion'] } }, 5).reason).toBe('GarbageCollectionPending');
    expect(cleanupBlockedCondition({ object: httpRoute, owner: 'gone' }, 5).reason).toBe('GarbageCollectionPending');
    expect(cleanupBlockedCondition({ object: httpRoute, owner: { ...route, finalizers: ['foregroundDeletion', AI_GW] } }, 5)).toMatchObject({
      reason: 'GarbageCollectionPending',
      message: expect.stringContaining('being deleted in the foreground'),
    });
  });

  it('asks for a delete when nothing deletes the object', () => {
    expect(cleanupBlockedCondition({ object: httpRoute }, 5)).toMatchObject({
      reason: 'ObjectNotDeleted',
      message: expect.stringContaining('kubectl delete httproutes.gateway.networking.k8s.io gpt-external -n ns'),
    });
    expect(cleanupBlockedCondition({ object: httpRoute, owner: { ...route, deleting: false } }, 5)).toMatchObject({
      reason: 'ObjectNotDeleted',
      message: expect.stringContaining('its owner AIGatewayRoute ns/gpt-external is not being deleted'),
    });
  });
});
