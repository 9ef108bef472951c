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

function guardedReplace(obj: KubeObject, next: string[]): unknown[] {
  const current = obj.metadata.finalizers;
  return [
    { op: 'test', path: '/metadata/uid', value: obj.metadata.uid },
    ...(current === undefined ? [] : [{ op: 'test', path: '/metadata/finalizers', value: current }]),
    { op: current === undefined ? 'add' : 'replace', path: '/metadata/finalizers', value: next },
  ];
}

/** Adds the finalizer; returns the updated object (unchanged if already present). */
export async function addFinalizer<T extends KubeObject>(client: KubeRest, obj: T, finalizer = cleanupFinalizer): Promise<T> {
  if (hasFinalizer(obj, finalizer)) return obj;
  const next = [...(obj.metadata.finalizers ?? []), finalizer];
  const updated = await client.jsonPatch<T>(obj, guardedReplace(obj, next), { fieldManager });
  return { ...updated, apiVersion: obj.apiVersion, kind: obj.kind };
}

/** Removes the finalizer; after this the API server may delete the object at once. */
export async function removeFinalizer(client: KubeRest, obj: KubeObject, finalizer = cleanupFinalizer): Promise<void> {
  if (!hasFinalizer(obj, finalizer)) return;
  const next = (obj.metadata.finalizers ?? []).filter((f) => f !== finalizer);
  await client.jsonPatch(obj, guardedReplace(obj, next), { fieldManager });
}
