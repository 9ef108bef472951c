// Cache and work-queue keys of objects: "namespace/name", or "name" for cluster-scoped ones.
import type { KubeObject, OwnerReference } from '../../kube/rest';
export function objectKey(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

export function splitKey(key: string): { namespace?: string; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

/** The object's controller owner reference, if it has one. */
export function controllerOf(obj: KubeObject): OwnerReference | undefined {
  return obj.metadata.ownerReferences?.find((o) => o.controller);
}

/** The queue key of the object's controlling owner of `kind` (none when another kind controls it). */
export function controllerOwnerKey(obj: KubeObject, kind: string): string[] {
  const owner = obj.metadata.ownerReferences?.find((o) => o.controller && o.kind === kind);
  return owner && obj.metadata.namespace ? [objectKey(obj.metadata.namespace, owner.name)] : [];
}
