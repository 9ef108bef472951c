// Server-side apply with the operator's single field manager, and owner references.
import { KubeRest, KubeObject, OwnerReference } from '../../kube/rest';

/** The one field manager every operator write uses, so SSA can tell our fields from others'. */
export const fieldManager = 'nebari-llm-serving-operator';

/** A controller owner reference to `owner`, so garbage collection removes what it generated. */
export function ownerReferenceTo(owner: KubeObject): OwnerReference {
  if (!owner.metadata.uid) throw new Error(`${owner.kind} ${owner.metadata.name} has no uid; fetch it from the API server first`);
  return { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name, uid: owner.metadata.uid, controller: true, blockOwnerDeletion: true };
}

/** `obj` with a controller owner reference to `owner` (replacing any other controller reference). */
export function withOwner<T extends KubeObject>(obj: T, owner: KubeObject): T {
  const others = (obj.metadata.ownerReferences ?? []).filter((r) => !r.controller);
  return { ...obj, metadata: { ...obj.metadata, ownerReferences: [...others, ownerReferenceTo(owner)] } };
}

/** Server-side apply as the operator, taking over conflicting fields. */
export function applyObject<T extends KubeObject = KubeObject>(client: KubeRest, obj: KubeObject): Promise<T> {
  return client.apply<T>(stripServerFields(obj), { fieldManager, force: true });
}

/** Server-side apply of the status subresource. */
export function applyStatus<T extends KubeObject = KubeObject>(client: KubeRest, obj: KubeObject): Promise<T> {
  return client.apply<T>(obj, { fieldManager, force: true, subresource: 'status' });
}

// An apply body must not carry server-owned metadata (resourceVersion would make it conditional).
function stripServerFields(obj: KubeObject): KubeObject {
  const { resourceVersion: _rv, uid: _uid, creationTimestamp: _ct, managedFields: _mf, generation: _g, ...metadata } = obj.metadata;
  return { ...obj, metadata: metadata as KubeObject['metadata'] };
}
