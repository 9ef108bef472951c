// A model's deletion that cannot finish: the finalizer's teardown waits for a generated object to
// go (the HTTPRoute Envoy AI Gateway generates from a route), and something else holds it, most
// often a finalizer of a controller that is not running (Envoy AI Gateway's on the route). After a
// bound the model says so with `CleanupBlocked`, naming the object, the finalizers and the way out.
// The operator keeps waiting and never removes a finalizer it does not own: skipping another
// controller's cleanup is an administrator's decision.
import type { ObjectReference } from '../translate/gateway/objects';
import { ConditionInput } from './runtime/conditions';
import { controllerOf } from './runtime/object-key';
import { KindNotServedError, KubeRest, KubeObject, objectRef } from '../kube/rest';

/** How long a model may wait for a generated object in its deletion before it reports CleanupBlocked. */
export const DEFAULT_CLEANUP_BLOCKED_AFTER_MS = 120_000;

/** Finalizers of the garbage collector: it removes them itself once dependents are handled. */
const GC_FINALIZERS = new Set(['foregroundDeletion', 'orphan']);

/** An object as the blocked wait sees it. */
export interface Blocker {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  /** `kubectl` resource name: `<plural>.<group>` (or `<plural>` for the core group). */
  readonly resource: string;
  /** Being deleted (it has a deletionTimestamp). */
  readonly deleting: boolean;
  readonly finalizers: readonly string[];
}

/** The awaited object and its controller owner (`gone`: it names one that no longer exists). */
export interface BlockedWait {
  readonly object: Blocker;
  readonly owner?: Blocker | 'gone';
}

/** A JSON patch removing `remove` from `finalizers`, each tested first so a changed list is refused. */
export function removeFinalizersPatch(finalizers: readonly string[], remove: readonly string[]): unknown[] {
  const indexes = finalizers.map((f, i) => (remove.includes(f) ? i : -1)).filter((i) => i >= 0);
  // Highest index first: removing one shifts the ones after it.
  return indexes.reverse().flatMap((i) => [
    { op: 'test', path: `/metadata/finalizers/${i}`, value: finalizers[i] },
    { op: 'remove', path: `/metadata/finalizers/${i}` },
  ]);
}

const describe = (o: Blocker) => `${o.kind} ${o.namespace}/${o.name}`;

/** Controllers whose finalizers the operator meets on generated objects. */
const KNOWN_FINALIZERS: Record<string, string> = { 'aigateway.envoyproxy.io/finalizer': 'the Envoy AI Gateway controller' };

/** Why the deleting object `o` stays, and the way out. */
function deletingHeldBy(o: Blocker): { reason: string; message: string } {
  const foreign = o.finalizers.filter((f) => !GC_FINALIZERS.has(f));
  if (foreign.length === 0) {
    return { reason: 'GarbageCollectionPending', message: `is being deleted by the garbage collector (finalizers: ${o.finalizers.join(', ') || 'none'}): check that kube-controller-manager runs` };
  }
  const owners = [...new Set(foreign.map((f) => KNOWN_FINALIZERS[f] ?? 'the controller that set it'))].join(' and ');
  const patch = JSON.stringify(removeFinalizersPatch(o.finalizers, foreign));
  return {
    reason: 'ForeignFinalizer',
    message:
      `is being deleted but held by finalizer ${foreign.join(', ')}, which the operator never removes. ` +
      `Start ${owners} to finish its cleanup; or, accepting that this cleanup is skipped, remove the finalizer: kubectl patch ${o.resource} ${o.name} -n ${o.namespace} --type=json -p '${patch}'`,
  };
}

/**
 * The CleanupBlocked condition (status True) once a deletion has waited longer than `boundSeconds`
 * for `wait.object` to go. The message stays the same from pass to pass (no status churn).
 */
export function cleanupBlockedCondition(wait: BlockedWait, boundSeconds: number): ConditionInput {
  const { object, owner } = wait;
  const head = `deletion has waited more than ${boundSeconds} s for ${describe(object)} to go`;
  const blocked = (reason: string, message: string): ConditionInput => ({ type: 'CleanupBlocked', status: true, reason, message: `${head}; ${message}` });
  if (object.deleting) {
    const held = deletingHeldBy(object);
    return blocked(held.reason, `it ${held.message}`);
  }
  if (owner === 'gone') return blocked('GarbageCollectionPending', 'its owner is gone, so the garbage collector deletes it: check that kube-controller-manager runs');
  if (owner?.deleting && owner.finalizers.includes('foregroundDeletion')) {
    return blocked('GarbageCollectionPending', `its owner ${describe(owner)} is being deleted in the foreground, so the garbage collector deletes it first: check that kube-controller-manager runs`);
  }
  if (owner?.deleting) {
    // Background deletion: the object goes only once its owner is gone.
    const held = deletingHeldBy(owner);
    return blocked(held.reason, `it goes with its owner ${describe(owner)}, which ${held.message}`);
  }
  if (owner) return blocked('ObjectNotDeleted', `its owner ${describe(owner)} is not being deleted (it is not this model's): delete it (kubectl delete ${owner.resource} ${owner.name} -n ${owner.namespace})`);
  return blocked('ObjectNotDeleted', `it is not being deleted and has no owner: delete it (kubectl delete ${object.resource} ${object.name} -n ${object.namespace})`);
}

async function getServed(client: KubeRest, apiVersion: string, kind: string, name: string, namespace: string): Promise<KubeObject | undefined> {
  try {
    return await client.get(objectRef(apiVersion, kind, name, namespace));
  } catch (err) {
    if (err instanceof KindNotServedError) return undefined;
    throw err;
  }
}

async function blocker(client: KubeRest, apiVersion: string, kind: string, obj: KubeObject): Promise<Blocker> {
  const { plural } = await client.resource(apiVersion, kind);
  const group = apiVersion.includes('/') ? apiVersion.split('/')[0] : '';
  return {
    kind,
    namespace: obj.metadata.namespace ?? '',
    name: obj.metadata.name,
    resource: group ? `${plural}.${group}` : plural,
    deleting: Boolean(obj.metadata.deletionTimestamp),
    finalizers: obj.metadata.finalizers ?? [],
  };
}

/** The awaited object and its controller owner as they are now; undefined when the object is gone. */
export async function inspectBlockedWait(client: KubeRest, awaited: ObjectReference): Promise<BlockedWait | undefined> {
  const obj = await getServed(client, awaited.apiVersion, awaited.kind, awaited.name, awaited.namespace);
  if (!obj) return undefined;
  const object = await blocker(client, awaited.apiVersion, awaited.kind, obj);
  const ref = controllerOf(obj);
  if (!ref) return { object };
  const owner = await getServed(client, ref.apiVersion, ref.kind, ref.name, awaited.namespace);
  if (!owner || owner.metadata.uid !== ref.uid) return { object, owner: 'gone' };
  return { object, owner: await blocker(client, ref.apiVersion, ref.kind, owner) };
}
