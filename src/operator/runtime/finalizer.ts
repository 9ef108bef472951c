// The cleanup finalizer. Adding and removing use JSON patches guarded by `test` operations on the
// uid and the current list, so a stale copy (or an object deleted and re-created under the same
// name) is never modified: the API server answers 409/422 and the key is simply retried.
import { KubeRest, KubeObject } from '../../kube/rest';
import { fieldManager } from './apply';
import { CLEANUP_FINALIZER } from '../../api/common';

export const cleanupFinalizer = CLEANUP_FINALIZER;

export function hasFinalizer(obj: KubeObject, finalizer = cleanupFinalizer): boolean {
  return (obj.metadata.finalizers ?? []).includes(finalizer);
}

export function isBeingDeleted(obj: KubeObject): boolean {
  return Boolean(obj.metadata.deletionTimestamp);
}

/**
 * The JSON patch that sets `metadata.finalizers` to `next`, guarded by `test` operations: it
 * applies only to the same object (uid) with the finalizer list this copy saw.
 */
export function finalizersPatch(obj: KubeObject, next: string[]): unknown[] {
  const current = obj.metadata.finalizers;
  return [
    { op: 'test', path: '/metadata/uid', value: obj.metadata.uid },
    ...(current === undefined ? [] : [{ op: 'test', path: '/metadata/finalizers', value: current }]),
    { op: current === undefined ? 'add' : 'replace', path: '/metadata/finalizers', value: next },
  ];
}

/** The guarded patch that adds the finalizer; undefined when it is already there. */
export function addFinalizerPatch(obj: KubeObject, finalizer = cleanupFinalizer): unknown[] | undefined {
  if (hasFinalizer(obj, finalizer)) return undefined;
  return finalizersPatch(obj, [...(obj.metadata.finalizers ?? []), finalizer]);
}

/** The guarded patch that removes the finalizer (others stay, in order); undefined when it is absent. */
export function removeFinalizerPatch(obj: KubeObject, finalizer = cleanupFinalizer): unknown[] | undefined {
  if (!hasFinalizer(obj, finalizer)) return undefined;
  return finalizersPatch(obj, (obj.metadata.finalizers ?? []).filter((f) => f !== finalizer));
}

/** Adds the finalizer; returns the updated object (unchanged if already present). */
export async function addFinalizer<T extends KubeObject>(client: KubeRest, obj: T, finalizer = cleanupFinalizer): Promise<T> {
  const patch = addFinalizerPatch(obj, finalizer);
  if (!patch) return obj;
  const updated = await client.jsonPatch<T>(obj, patch, { fieldManager });
  return { ...updated, apiVersion: obj.apiVersion, kind: obj.kind };
}

/** Removes the finalizer; after this the API server may delete the object at once. */
export async function removeFinalizer(client: KubeRest, obj: KubeObject, finalizer = cleanupFinalizer): Promise<void> {
  const patch = removeFinalizerPatch(obj, finalizer);
  if (patch) await client.jsonPatch(obj, patch, { fieldManager });
}
