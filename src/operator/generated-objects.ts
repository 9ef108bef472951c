// Applying a model's gateway translation, shared by the LLMModel and PassthroughModel
// reconcilers: check every upstream kind is served (a missing CRD is a condition, never a
// crash), apply the desired objects in the translation's order, and carry out its ordered
// deletions (route first; an auth policy only once the generated HTTPRoute is gone).
import type { DeletionStep, GeneratedGatewayObject, TranslationError } from '../translate/gateway';
import { AdoptionConflict, type ApplyFailure, applyObject, forgetApplied } from './runtime/apply';
import { cachedLookup } from './runtime/cached-lookups';
import { controllerOf } from './runtime/object-key';
import { KindNotServedError, KubeRest, KubeObject, objectRef } from '../kube/rest';

export interface GatewaySyncResult {
  /** Kinds the API server does not serve (their CRDs are not installed). */
  missingKinds: string[];
  /** Objects that failed to apply, with the API server's message (or the adoption conflict). */
  failed: ApplyFailure[];
  /** Applied objects, as the API server stored them. */
  applied: KubeObject[];
  /** A deletion step is waiting (for a generated HTTPRoute to go): requeue soon. */
  waiting?: DeletionStep;
  /** Deletion steps done (or already satisfied). */
  deletionsDone: number;
}

/** Kinds (`Kind.group/version`) among `objects` and `deletions` that are not served now. */
export async function unservedKinds(client: KubeRest, refs: ReadonlyArray<{ apiVersion: string; kind: string }>): Promise<string[]> {
  const seen = new Map<string, { apiVersion: string; kind: string }>();
  for (const r of refs) seen.set(`${r.kind}.${r.apiVersion}`, r);
  const missing: string[] = [];
  for (const [label, r] of seen) if (!(await client.isServed(r.apiVersion, r.kind))) missing.push(label);
  return missing.sort();
}

/**
 * Deletes `ref` if it exists and is controlled by `owner` (uid + resourceVersion preconditions,
 * so an object replaced meanwhile is left alone). Returns false if it was not ours.
 */
export async function deleteIfControlled(client: KubeRest, ref: { apiVersion: string; kind: string; name: string; namespace: string }, ownerUid: string | undefined, propagationPolicy?: 'Foreground'): Promise<boolean> {
  let existing: KubeObject | undefined;
  try {
    const cached = cachedLookup(client, ref.apiVersion, ref.kind, ref.namespace, ref.name);
    existing = cached ? cached.object : await client.get(objectRef(ref.apiVersion, ref.kind, ref.name, ref.namespace));
  } catch (err) {
    if (err instanceof KindNotServedError) return true;
    throw err;
  }
  if (!existing) return true;
  const controller = controllerOf(existing);
  if (!controller || controller.uid !== ownerUid) return false;
  if (existing.metadata.deletionTimestamp) return true;
  forgetApplied(client, ref);
  await client.delete(existing, { preconditions: { uid: existing.metadata.uid, resourceVersion: existing.metadata.resourceVersion }, propagationPolicy: propagationPolicy ?? 'Background' });
  return true;
}

/** Carry out deletion steps in order; stops at the first `awaitAbsence` whose object still exists. */
export async function runDeletions(client: KubeRest, steps: readonly DeletionStep[], ownerUid: string | undefined): Promise<{ waiting?: DeletionStep; done: number }> {
  let done = 0;
  for (const step of steps) {
    if (step.action === 'awaitAbsence') {
      let present = false;
      try {
        present = (await client.get(objectRef(step.object.apiVersion, step.object.kind, step.object.name, step.object.namespace))) !== undefined;
      } catch (err) {
        if (!(err instanceof KindNotServedError)) throw err;
      }
      if (present) return { waiting: step, done };
    } else {
      await deleteIfControlled(client, step.object, ownerUid, step.propagationPolicy);
    }
    done++;
  }
  return { done };
}

/** Apply `objects` in order, then run `deletions`; failures are collected, not thrown. */
export async function syncGatewayObjects(
  client: KubeRest,
  objects: readonly GeneratedGatewayObject[],
  deletions: readonly DeletionStep[],
  ownerUid: string | undefined,
): Promise<GatewaySyncResult> {
  const missingKinds = await unservedKinds(client, objects);
  const result: GatewaySyncResult = { missingKinds, failed: [], applied: [], deletionsDone: 0 };
  if (missingKinds.length > 0) return result;
  for (const obj of objects) {
    try {
      result.applied.push(await applyObject(client, obj as unknown as KubeObject));
    } catch (err) {
      if (err instanceof KindNotServedError) {
        result.missingKinds.push(`${obj.kind}.${obj.apiVersion}`);
        client.forgetDiscovery(obj.apiVersion);
      } else {
        result.failed.push({ kind: obj.kind, name: obj.metadata.name, message: (err as Error).message, conflict: err instanceof AdoptionConflict });
      }
    }
  }
  if (result.failed.length === 0 && result.missingKinds.length === 0) {
    const d = await runDeletions(client, deletions, ownerUid);
    result.waiting = d.waiting;
    result.deletionsDone = d.done;
  }
  return result;
}

/** One readable sentence from translation errors (they already name field and fix). */
export function describeErrors(errors: readonly TranslationError[]): string {
  return errors.map((e) => e.message).join('; ');
}
