import { isConverged, primaryEventDelay, watchRestartReason } from '../../../../src/operator/runtime/controller';
import { KubeApiError, type KubeObject } from '../../../../src/kube/rest';
import { WatchIdleError } from '../../../../src/kube/watch';

const obj = (over: Partial<KubeObject['metadata']> = {}, status?: Record<string, unknown>): KubeObject => ({
  apiVersion: 'llm.nebari.dev/v1alpha1',
  kind: 'PassthroughModel',
  metadata: { name: 'm', namespace: 'ns', generation: 2, finalizers: ['llm.nebari.dev/cleanup'], ...over },
  ...(status ? { status } : {}),
});

describe('which primary events reconcile, and when', () => {
  const ready = { phase: 'Ready', observedGeneration: 2 };

  it('treats Ready-at-this-generation objects with the finalizer as converged', () => {
    expect(isConverged(obj({}, ready))).toBe(true);
    expect(isConverged(obj({ generation: 3 }, ready))).toBe(false);
    expect(isConverged(obj({ finalizers: [] }, ready))).toBe(false);
    expect(isConverged(obj({ deletionTimestamp: '2026-01-01T00:00:00Z' }, ready))).toBe(false);
    expect(isConverged(obj({}, { phase: 'Error', observedGeneration: 2 }))).toBe(false);
  });

  it('reconciles objects that need work at once and spreads converged ones over the window', () => {
    expect(primaryEventDelay('add', obj(), undefined, 5000)).toBe(0);
    const d = primaryEventDelay('resync', obj({}, ready), undefined, 5000)!;
    expect(d).toBeGreaterThan(0);
    expect(d).toBeLessThanOrEqual(5000);
  });

  it('ignores updates that only touch status or add our finalizer, and reacts to spec and deletion changes', () => {
    expect(primaryEventDelay('update', obj({ resourceVersion: '2' }, ready), obj({ resourceVersion: '1' }), 5000)).toBeUndefined();
    expect(primaryEventDelay('update', obj({ generation: 3 }), obj(), 5000)).toBe(0);
    expect(primaryEventDelay('update', obj({ deletionTimestamp: 'now' }), obj(), 5000)).toBe(0);
    expect(primaryEventDelay('update', obj({ finalizers: ['llm.nebari.dev/cleanup'] }), obj({ finalizers: [] }), 5000)).toBeUndefined();
    expect(primaryEventDelay('update', obj({ deletionTimestamp: 'now', finalizers: [] }), obj({ deletionTimestamp: 'now' }), 5000)).toBe(0);
    expect(primaryEventDelay('delete', obj(), undefined, 5000)).toBe(0);
  });
});

describe('watch restart reasons (nls_watch_restarts_total)', () => {
  it('tells an expired version, a silent connection and other failures apart', () => {
    expect(watchRestartReason(new KubeApiError(410, '', 'Expired', 'too old'))).toBe('gone');
    expect(watchRestartReason(new WatchIdleError('/api/v1/configmaps', 150_000))).toBe('idle');
    expect(watchRestartReason(new KubeApiError(503, '', '', 'unavailable'))).toBe('error');
    expect(watchRestartReason(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }))).toBe('error');
  });
});
