// Server-side apply with the operator's single field manager, owner references, and the adoption
// rule: the operator writes only objects it created. An object of the desired name that someone
// else created is reported as a conflict, never taken over (SSA with force would silently do so).
import { KubeRest, KubeObject, OwnerReference, isConflict, objectRef } from '../../kube/rest';
import { createHash } from 'node:crypto';
import { ANNOTATION_APPLIED_DIGEST, ANNOTATION_APPLIED_GENERATION } from '../../translate/applied-digest';
import { cachedLookup } from './cached-lookups';
import { controllerOf } from './object-key';

/** The one field manager every operator write uses, so SSA can tell our fields from others'. */
export const fieldManager = 'nebari-llm-serving-operator';

/** A controller owner reference to `owner`, so garbage collection removes what it generated. */
export function ownerReferenceTo(owner: KubeObject): OwnerReference {
  if (!owner.metadata.uid) throw new Error(`${owner.kind} ${owner.metadata.name} has no uid; fetch it from the API server first`);
  return { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name, uid: owner.metadata.uid, controller: true, blockOwnerDeletion: true };
}

/** An object of the desired name exists and was not created by the operator for this owner. */
export class AdoptionConflict extends Error {
  constructor(object: KubeObject, owner: OwnerReference, managers: string[]) {
    const where = `${object.kind} ${object.metadata.namespace}/${object.metadata.name}`;
    super(
      `${where} already exists and was not created by the operator for ${owner.kind} ${owner.name}` +
        `${managers.length ? ` (its fields are managed by ${managers.join(', ')})` : ''}; the operator never takes over objects it did not create: ` +
        `delete or rename ${where}, or give the ${owner.kind} another name`,
    );
    this.name = 'AdoptionConflict';
  }
}

// Who wrote the object's spec and metadata (controllers that only write status are not its owners).
const managersOf = (obj: KubeObject) =>
  ((obj.metadata.managedFields ?? []) as { manager?: string; subresource?: string }[]).filter((f) => f.subresource !== 'status').map((f) => f.manager ?? 'unknown');

/**
 * Whether an existing object was created for `owner`: it names `owner` as controller, or an earlier
 * object of the same kind and name (the model was deleted and created again before garbage
 * collection caught up; two live objects never share a name), or it carries our field manager
 * without any controller (written by this operator before it set owner references).
 */
function createdFor(existing: KubeObject, owner: OwnerReference): boolean {
  const controller = controllerOf(existing);
  if (controller) return controller.uid === owner.uid || (controller.kind === owner.kind && controller.name === owner.name && controller.apiVersion.split('/')[0] === owner.apiVersion.split('/')[0]);
  return managersOf(existing).includes(fieldManager);
}

// Objects this process already checked (or created), by object → owner uid: each is looked up once
// per owner, not on every reconcile. Per client, so test processes with several clients stay apart.
const checked = new WeakMap<KubeRest, Map<string, string>>();
const checkedBy = (client: KubeRest) => {
  let map = checked.get(client);
  if (!map) checked.set(client, (map = new Map()));
  return map;
};
/** An object's key in this file's records: `<apiVersion>/<kind>/<namespace>/<name>`. */
const refKey = (ref: { apiVersion: string; kind: string; namespace?: string; name?: string }) => `${ref.apiVersion}/${ref.kind}/${ref.namespace ?? ''}/${ref.name}`;
const checkedKey = (o: KubeObject) => refKey({ apiVersion: o.apiVersion, kind: o.kind, namespace: o.metadata.namespace, name: o.metadata.name });

/**
 * Refuses (AdoptionConflict) when `obj`'s name is taken by an object not created for its owner.
 * Answers `unverified` when only an informer's cache said the name is free: the cache can lag a
 * create by someone else, so the caller must not force its apply (see applyObject).
 */
async function checkNotAdopting(client: KubeRest, obj: KubeObject, useCache = true): Promise<'verified' | 'unverified'> {
  const owner = controllerOf(obj);
  if (!owner) return 'verified';
  const key = checkedKey(obj);
  if (checkedBy(client).get(key) === owner.uid) return 'verified';
  // A whole-kind informer's cache answers without a request.
  const cached = useCache ? cachedLookup(client, obj.apiVersion, obj.kind, obj.metadata.namespace, obj.metadata.name) : undefined;
  if (cached && !cached.object) return 'unverified';
  const existing = cached ? cached.object : await client.get(objectRef(obj.apiVersion, obj.kind, obj.metadata.name, obj.metadata.namespace));
  if (existing && !createdFor(existing, owner)) {
    const managers = [...new Set(managersOf(existing))];
    throw new AdoptionConflict(existing, owner, managers);
  }
  return 'verified';
}

interface HorizontalPodAutoscaler extends KubeObject {
  spec?: { scaleTargetRef?: { apiVersion?: string; kind?: string; name?: string } };
}

/**
 * Leaves `spec.replicas` out of a Deployment that a HorizontalPodAutoscaler targets, so the
 * operator gives that field up to the autoscaler instead of resetting it on every reconcile.
 */
async function withoutAutoscaledReplicas(client: KubeRest, obj: KubeObject): Promise<KubeObject> {
  const spec = obj.spec as { replicas?: number } | undefined;
  if (obj.kind !== 'Deployment' || spec?.replicas === undefined) return obj;
  const hpas = await client.list<HorizontalPodAutoscaler>('autoscaling/v2', 'HorizontalPodAutoscaler', { namespace: obj.metadata.namespace });
  const targeted = hpas.items.some((h) => h.spec?.scaleTargetRef?.kind === 'Deployment' && h.spec.scaleTargetRef.name === obj.metadata.name);
  if (!targeted) return obj;
  const { replicas: _replicas, ...rest } = spec;
  return { ...obj, spec: rest };
}

// What this process last applied, by object: a digest of the body and the resourceVersion the
// API server answered with. While the informer's copy still has that resourceVersion nobody has
// written the object since, so applying the same body again would change nothing.
const lastApplied = new WeakMap<KubeRest, Map<string, { digest: string; resourceVersion: string }>>();
const lastAppliedBy = (client: KubeRest) => {
  let map = lastApplied.get(client);
  if (!map) lastApplied.set(client, (map = new Map()));
  return map;
};

/**
 * Server-side apply as the operator, taking over conflicting fields of an object it created (a
 * hand edit is drift and is put back), never an object someone else created (AdoptionConflict).
 * Skipped when the informer's copy is still the one our last apply of this same body produced;
 * the cached copy (metadata only) is returned then.
 */
export async function applyObject<T extends KubeObject = KubeObject>(client: KubeRest, obj: KubeObject): Promise<T> {
  const body = await withoutAutoscaledReplicas(client, stripServerFields(obj));
  const storedDigest = body.metadata.annotations?.[ANNOTATION_APPLIED_DIGEST];
  if (storedDigest !== undefined) return applyDigested<T>(client, body, storedDigest);
  const key = checkedKey(body);
  const digest = createHash('sha256').update(JSON.stringify(body)).digest('base64');
  const last = lastAppliedBy(client).get(key);
  if (last?.digest === digest) {
    const cached = cachedLookup(client, body.apiVersion, body.kind, body.metadata.namespace, body.metadata.name)?.object;
    if (cached && cached.metadata.resourceVersion === last.resourceVersion && !cached.metadata.deletionTimestamp) return cached as T;
  }
  const applied = await applyChecked<T>(client, body);
  const owner = controllerOf(body);
  if (owner) checkedBy(client).set(key, owner.uid);
  if (applied?.metadata?.resourceVersion) lastAppliedBy(client).set(key, { digest, resourceVersion: applied.metadata.resourceVersion });
  return applied;
}

/**
 * Whether the cached copy (metadata) of an object is exactly what applying `body` would leave, so
 * that a process which has never applied it (a restart) may skip the apply. The digest says the
 * body we last applied equals this one; the generation recorded with it says nobody changed the
 * spec since (a spec edit by anyone raises metadata.generation, a field removal too, which leaves
 * no trace in managedFields); labels and the owner reference are compared directly (metadata
 * edits do not raise the generation). What others added beside our fields (a finalizer, a label)
 * does not matter: our apply would not remove it either.
 */
function storedAsApplied(cached: KubeObject, body: KubeObject, digest: string): boolean {
  const m = cached.metadata;
  const annotations = (m.annotations ?? {}) as Record<string, string>;
  if (m.deletionTimestamp || m.generation === undefined) return false;
  if (annotations[ANNOTATION_APPLIED_DIGEST] !== digest || annotations[ANNOTATION_APPLIED_GENERATION] !== String(m.generation)) return false;
  const labels = (m.labels ?? {}) as Record<string, string>;
  if (Object.entries((body.metadata.labels ?? {}) as Record<string, string>).some(([k, v]) => labels[k] !== v)) return false;
  const owner = controllerOf(body);
  return !owner || controllerOf(cached)?.uid === owner.uid;
}

/**
 * Apply of a body that carries its digest (the generated gateway objects): skipped when the
 * cached metadata shows it stored as applied (storedAsApplied), so a restart writes nothing.
 * Otherwise applied with the generation it is expected to produce; if the server's differs (the
 * spec did not change after all, or someone else wrote meanwhile), applied once more with the
 * generation of our first apply (an annotation does not raise it), so the record never vouches
 * for a write that was not ours.
 */
async function applyDigested<T extends KubeObject>(client: KubeRest, body: KubeObject, digest: string): Promise<T> {
  const key = checkedKey(body);
  // A deletion a watch reported may not have reached the cache that answers here yet (watches of
  // one kind with another cache shape): the repair must reach the server.
  const deletedSince = deletedBy(client).has(key);
  const lookup = cachedLookup(client, body.apiVersion, body.kind, body.metadata.namespace, body.metadata.name);
  let cached: KubeObject | undefined;
  if (lookup) {
    const stored = storedCopy(client, key, lookup.object);
    cached = stored === 'unknown' ? lookup.object : stored;
    if (stored !== 'unknown' && stored && !deletedSince && storedAsApplied(stored, body, digest)) return stored as T;
  } else {
    // No watch lists this kind (the provider objects of LLMModels, polled every minute): one read
    // instead of a write, and the whole stored object says whether the apply would change it.
    cached = await client.get(objectRef(body.apiVersion, body.kind, body.metadata.name, body.metadata.namespace));
    if (cached && !deletedSince && storesBody(cached, body, digest)) return cached as T;
  }
  const withGeneration = (generation: number) => ({
    ...body,
    metadata: { ...body.metadata, annotations: { ...body.metadata.annotations, [ANNOTATION_APPLIED_GENERATION]: String(generation) } },
  });
  // The spec changes (generation + 1) when our last body differs or someone edited it; an object
  // without a digest yet (written before this annotation existed) most likely holds this spec.
  const stored = cached?.metadata.generation;
  const annotations = (cached?.metadata.annotations ?? {}) as Record<string, string>;
  const specChanges = annotations[ANNOTATION_APPLIED_DIGEST] !== undefined && (annotations[ANNOTATION_APPLIED_DIGEST] !== digest || annotations[ANNOTATION_APPLIED_GENERATION] !== String(stored));
  const expected = stored === undefined ? 1 : stored + (specChanges ? 1 : 0);
  const applied = await applyChecked<T>(client, withGeneration(expected));
  deletedBy(client).delete(key);
  const owner = controllerOf(body);
  if (owner) checkedBy(client).set(key, owner.uid);
  const produced = applied.metadata?.generation;
  const final = produced === undefined || produced === expected ? applied : await client.apply<T>(withGeneration(produced), { fieldManager, force: true });
  // Remembered for the watched kinds only (the others are read from the server), unless the watch was quicker.
  const seen = lookup && cachedLookup(client, body.apiVersion, body.kind, body.metadata.namespace, body.metadata.name)?.object;
  if (lookup && final?.metadata?.uid && !(seen && reports(seen, final))) unseenBy(client).set(key, lookupMetadata(final));
  return final;
}

// Our own applies of digested objects that the watch has not reported yet, by object: what each
// left on the server, as a watch caches it (lookupMetadata). A watch event comes moments after the
// write, and a pass in between must not take the cache's earlier copy for the stored object: a
// body that went A, B, A would be skipped as stored on the third pass, and B would stay until the
// next resync. An entry goes when the watch reports the object (seenByWatch) or it is deleted.
const unseenApplies = new WeakMap<KubeRest, Map<string, KubeObject>>();
const unseenBy = (client: KubeRest) => {
  let map = unseenApplies.get(client);
  if (!map) unseenApplies.set(client, (map = new Map()));
  return map;
};

/**
 * What is cached of a generated object: the metadata the event mapping, the adoption check and
 * the unchanged-apply skip read (identity, resourceVersion, deletion, the controller owner, who
 * manages its fields; generation, labels and our digest annotations, which tell a restarted
 * process that the object is stored as it would apply it), nothing of its spec or field sets.
 */
export function lookupMetadata(obj: KubeObject): KubeObject {
  const m = obj.metadata;
  const controller = m.ownerReferences?.filter((o) => o.controller);
  const managers = [...new Set(((m.managedFields ?? []) as { manager?: string; subresource?: string }[]).filter((f) => f.subresource !== 'status').map((f) => f.manager ?? 'unknown'))];
  const annotations = (m.annotations ?? {}) as Record<string, string>;
  const digests = Object.fromEntries([ANNOTATION_APPLIED_DIGEST, ANNOTATION_APPLIED_GENERATION].filter((k) => k in annotations).map((k) => [k, annotations[k]]));
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    metadata: {
      name: m.name,
      namespace: m.namespace,
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      ...(m.generation !== undefined ? { generation: m.generation } : {}),
      ...(m.labels ? { labels: m.labels } : {}),
      ...(Object.keys(digests).length ? { annotations: digests } : {}),
      ...(m.deletionTimestamp ? { deletionTimestamp: m.deletionTimestamp } : {}),
      ...(controller?.length ? { ownerReferences: controller } : {}),
      ...(managers.length ? { managedFields: managers.map((manager) => ({ manager })) } : {}),
    },
  };
}

/** Whether the cached copy shows our last apply of the object, or a later write. */
function reports(cached: KubeObject, mine: KubeObject): boolean {
  const c = cached.metadata;
  const m = mine.metadata;
  if (c.uid !== m.uid) return false;
  if ((c.generation ?? 0) !== (m.generation ?? 0)) return (c.generation ?? 0) > (m.generation ?? 0);
  // The same generation: our apply may have changed only the recorded generation (applyDigested's second apply).
  const annotations = (o: KubeObject) => (o.metadata.annotations ?? {}) as Record<string, string>;
  return c.resourceVersion === m.resourceVersion || [ANNOTATION_APPLIED_DIGEST, ANNOTATION_APPLIED_GENERATION].every((k) => annotations(cached)[k] === annotations(mine)[k]);
}

/**
 * The stored object as far as this process knows: the cached copy, or what our own last apply
 * left while the watch has not reported it; 'unknown' when the cache shows another object of
 * that name (deleted and created again by someone, or the cache still holds the one our apply
 * replaced): then nothing is skipped.
 */
function storedCopy(client: KubeRest, key: string, cached: KubeObject | undefined): KubeObject | undefined | 'unknown' {
  const mine = unseenBy(client).get(key);
  if (!mine) return cached;
  if (!cached) return mine;
  if (reports(cached, mine)) {
    unseenBy(client).delete(key);
    return cached;
  }
  return cached.metadata.uid === mine.metadata.uid ? mine : 'unknown';
}

/** A watch reported `obj` (added or changed; list items carry no kind, so `ref` names it): our apply it shows needs no remembering. */
export function seenByWatch(client: KubeRest, ref: { apiVersion: string; kind: string }, obj: KubeObject): void {
  const map = unseenApplies.get(client);
  if (!map?.size) return;
  const key = refKey({ ...ref, namespace: obj.metadata.namespace, name: obj.metadata.name });
  const mine = map.get(key);
  if (mine && reports(obj, mine)) map.delete(key);
}

/**
 * Whether a whole stored object (read, not cached metadata) is what applying `body` would leave:
 * our last apply was this same body (the digest: fields an earlier body had and this one lacks are
 * gone), and every field of the body is stored with the body's value (nobody edited or removed one
 * since; owner references and labels included). Fields the server defaults or others add beside
 * ours do not matter; a value the server stores in another form (a quantity, say) only costs the
 * apply it would have cost anyway.
 */
function storesBody(stored: KubeObject, body: KubeObject, digest: string): boolean {
  const annotations = (stored.metadata.annotations ?? {}) as Record<string, string>;
  return !stored.metadata.deletionTimestamp && annotations[ANNOTATION_APPLIED_DIGEST] === digest && holds(stored, body);
}

/** Whether `stored` holds every field of `wanted` with its value (lists: the same length, item by item). */
function holds(stored: unknown, wanted: unknown): boolean {
  if (wanted === undefined) return true; // not sent
  if (Array.isArray(wanted)) return Array.isArray(stored) && stored.length === wanted.length && wanted.every((item, i) => holds(stored[i], item));
  if (wanted !== null && typeof wanted === 'object') {
    if (stored === null || typeof stored !== 'object' || Array.isArray(stored)) return false;
    return Object.entries(wanted).every(([k, v]) => holds((stored as Record<string, unknown>)[k], v));
  }
  return stored === wanted;
}

// Applies after the adoption check. When only the cache said the name is free, the first apply is
// not forced: a new object is created as usual, while an object someone created since the cache
// last heard (with fields of its own) answers 409 Conflict instead of being taken over; then the
// server is asked, and the apply is forced only for an object created for this owner.
async function applyChecked<T extends KubeObject>(client: KubeRest, body: KubeObject): Promise<T> {
  if ((await checkNotAdopting(client, body)) === 'verified') return client.apply<T>(body, { fieldManager, force: true });
  try {
    return await client.apply<T>(body, { fieldManager, force: false });
  } catch (error) {
    if (!isConflict(error)) throw error;
  }
  await checkNotAdopting(client, body, false);
  return client.apply<T>(body, { fieldManager, force: true });
}

// Objects a watch saw deleted (or this process deleted) and no apply has re-created since.
const deleted = new WeakMap<KubeRest, Set<string>>();
const deletedBy = (client: KubeRest) => {
  let set = deleted.get(client);
  if (!set) deleted.set(client, (set = new Set()));
  return set;
};

/** Forget what was applied to an object (it is being deleted): the next apply goes to the server. */
export function forgetApplied(client: KubeRest, ref: { apiVersion: string; kind: string; namespace?: string; name: string }): void {
  const key = refKey(ref);
  lastAppliedBy(client).delete(key);
  unseenBy(client).delete(key);
  // A cache lags a deletion by moments: the oldest entries can go once the set grows large.
  const set = deletedBy(client);
  set.add(key);
  if (set.size > 10_000) set.delete(set.values().next().value!);
}

/** One object that failed to apply; `conflict` when it is someone else's object. */
export interface ApplyFailure {
  readonly kind: string;
  readonly name: string;
  readonly message: string;
  readonly conflict: boolean;
}

/** `Kind name: message; …` for a condition message. */
export const describeFailures = (failures: readonly ApplyFailure[]) => failures.map((f) => `${f.kind} ${f.name}: ${f.message}`).join('; ');

/** The condition reason for failed applies: `Conflict` when any object belongs to someone else. */
export const failureReason = (failures: readonly ApplyFailure[]) => (failures.some((f) => f.conflict) ? 'Conflict' : 'ApplyFailed');

/** Applies every object, continuing past failures (one bad object must not stop the others). */
export async function applyEach(client: KubeRest, objects: readonly { kind: string; metadata: { name?: string } }[]): Promise<ApplyFailure[]> {
  const failures: ApplyFailure[] = [];
  for (const obj of objects) {
    try {
      await applyObject(client, obj as unknown as KubeObject);
    } catch (err) {
      failures.push({ kind: obj.kind, name: obj.metadata.name ?? '', message: (err as Error).message, conflict: err instanceof AdoptionConflict });
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
