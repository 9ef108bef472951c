// Server-side apply with the operator's single field manager, and owner references.
import { KubeRest, KubeObject, OwnerReference } from '../../kube/rest';

/** The one field manager every operator write uses, so SSA can tell our fields from others'. */
export const fieldManager = 'nebari-llm-serving-operator';

/** A controller owner reference to `owner`, so garbage collection removes what it generated. */
export function ownerReferenceTo(owner: KubeObject): OwnerReference {
  if (!owner.metadata.uid) throw new Error(`${owner.kind} ${owner.metadata.name} has no uid; fetch it from the API server first`);
  return { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name, uid: owner.metadata.uid, controller: true, blockOwnerDeletion: true };
}

/** Server-side apply as the operator, taking over conflicting fields. */
export function applyObject<T extends KubeObject = KubeObject>(client: KubeRest, obj: KubeObject): Promise<T> {
  return client.apply<T>(stripServerFields(obj), { fieldManager, force: true });
}

/**
 * Applies every object, continuing past failures (one bad object must not stop the others);
 * returns one `Kind name: message` line per failure.
 */
export async function applyEach(client: KubeRest, objects: readonly { kind: string; metadata: { name?: string } }[]): Promise<string[]> {
  const failures: string[] = [];
  for (const obj of objects) {
    try {
      await applyObject(client, obj as unknown as KubeObject);
    } catch (err) {
      failures.push(`${obj.kind} ${obj.metadata.name}: ${(err as Error).message}`);
    }
  }
  return failures;
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
