import { addFinalizerPatch, cleanupFinalizer, finalizersPatch, hasFinalizer, isBeingDeleted, removeFinalizerPatch } from '../../../../src/operator/runtime/finalizer';
import type { KubeObject } from '../../../../src/kube/rest';

const model = (finalizers?: string[], extra: Partial<KubeObject['metadata']> = {}): KubeObject => ({
  apiVersion: 'llm.nebari.dev/v1alpha1',
  kind: 'PassthroughModel',
  metadata: { name: 'm', namespace: 'ns', uid: 'uid-1', ...(finalizers ? { finalizers } : {}), ...extra },
});

describe('finalizer patches', () => {
  it('adds the finalizer to an object without any, guarded by the uid only (there is no list to test)', () => {
    expect(addFinalizerPatch(model())).toEqual([
      { op: 'test', path: '/metadata/uid', value: 'uid-1' },
      { op: 'add', path: '/metadata/finalizers', value: [cleanupFinalizer] },
    ]);
  });

  it('appends to an existing list, guarded by the uid and the list this copy saw', () => {
    expect(addFinalizerPatch(model(['other/keep']))).toEqual([
      { op: 'test', path: '/metadata/uid', value: 'uid-1' },
      { op: 'test', path: '/metadata/finalizers', value: ['other/keep'] },
      { op: 'replace', path: '/metadata/finalizers', value: ['other/keep', cleanupFinalizer] },
    ]);
  });

  it('removes only ours, keeping the others in order', () => {
    expect(removeFinalizerPatch(model(['a/first', cleanupFinalizer, 'b/last']))).toEqual([
      { op: 'test', path: '/metadata/uid', value: 'uid-1' },
      { op: 'test', path: '/metadata/finalizers', value: ['a/first', cleanupFinalizer, 'b/last'] },
      { op: 'replace', path: '/metadata/finalizers', value: ['a/first', 'b/last'] },
    ]);
  });

  it('has nothing to do when the finalizer is already there, or already gone', () => {
    expect(addFinalizerPatch(model([cleanupFinalizer]))).toBeUndefined();
    expect(removeFinalizerPatch(model(['other/keep']))).toBeUndefined();
    expect(removeFinalizerPatch(model())).toBeUndefined();
  });

  it('works for another finalizer name and an empty list', () => {
    expect(finalizersPatch(model([]), ['x/y'])).toEqual([
      { op: 'test', path: '/metadata/uid', value: 'uid-1' },
      { op: 'test', path: '/metadata/finalizers', value: [] },
      { op: 'replace', path: '/metadata/finalizers', value: ['x/y'] },
    ]);
    expect(addFinalizerPatch(model(['x/y']), 'x/y')).toBeUndefined();
    expect(hasFinalizer(model(['x/y']), 'x/y')).toBe(true);
    expect(hasFinalizer(model(['x/y']))).toBe(false);
  });

  it('tells an object being deleted', () => {
    expect(isBeingDeleted(model([cleanupFinalizer], { deletionTimestamp: '2026-01-01T00:00:00Z' }))).toBe(true);
    expect(isBeingDeleted(model([cleanupFinalizer]))).toBe(false);
  });
});
