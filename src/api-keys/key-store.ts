// The Kubernetes side of API keys, shared by the operator and `nls keys`: reading the per-model key
// Secret and metadata ConfigMap, and minting, listing and revoking keys. Key data is written under
// its own field manager, so the operator's re-apply never touches a key. Every write touches only
// its own key's entry and needs no guard on the whole object, so concurrent writers never
// conflict: a mint adds an entry under a fresh random client ID (merge patch), a revoke removes
// one entry only while it holds the value read (JSON patch with a `test`). Each mint and revoke
// appends its audit entry (src/api-keys/audit-log.ts); a mint whose entry cannot be written is
// taken back, so no key exists that the audit log does not know. Mints may be bounded per user
// (src/translate/keys/limits.ts): live keys per model from the metadata ConfigMap, mints per hour
// from the audit log.
// (What a key is, and the objects' desired shape, are pure functions in src/translate/keys.)
import { randomBytes } from 'node:crypto';
import {
  ApiKeyRecord,
  GrantedBy,
  KeySource,
  KeyAgent,
  ModelRef,
  ApiKeyObjectNames,
  apiKeyObjectNames,
  desiredApiKeyMetadataConfigMap,
  desiredApiKeySecret,
  apiKeyRecordsOf,
  mintApiKey,
  checkKeyExpiry,
  parseApiKeyRecord,
  CLIENT_ID_RANDOM_BYTES,
} from '../translate/keys/api-keys';
import { AuditAction } from '../translate/keys/audit';
import { KeyLimits, KeyOwner, keyCountRefusal, liveKeysOf, mintRateRefusal, recentMintsOf, MINT_WINDOW_MS } from '../translate/keys/limits';
import { appendAuditEntry, readAuditEntries } from './audit-log';
import { retryTransient } from './retry';
import { API_GROUP_VERSION_V1BETA1, CLEANUP_FINALIZER } from '../api/common';
import { KubeRest, KubeObject, isConflict, isNotFound, objectRef } from '../kube/rest';

export interface SecretObject extends KubeObject {
  data?: Record<string, string>;
}
export interface ConfigMapObject extends KubeObject {
  data?: Record<string, string>;
}

/** Delete both key objects of a model, whoever owns them. */
export async function deleteKeyObjects(client: KubeRest, model: ModelRef, names: ApiKeyObjectNames = apiKeyObjectNames(model.name)): Promise<void> {
  await client.delete(objectRef('v1', 'Secret', names.secret, model.namespace));
  await client.delete(objectRef('v1', 'ConfigMap', names.metadata, model.namespace));
}

async function getSecret(client: KubeRest, model: ModelRef, names: ApiKeyObjectNames): Promise<SecretObject | undefined> {
  return client.get<SecretObject>(objectRef('v1', 'Secret', names.secret, model.namespace));
}
async function getMetadata(client: KubeRest, model: ModelRef, names: ApiKeyObjectNames): Promise<ConfigMapObject | undefined> {
  return client.get<ConfigMapObject>(objectRef('v1', 'ConfigMap', names.metadata, model.namespace));
}

/** Field manager of key data written by the CLI (distinct from the operator's). */
export const keysFieldManager = 'nls-keys';

/** Sets (or, with null, removes) one data entry; other entries, and concurrent writes of them, are untouched. */
async function patchEntry(client: KubeRest, obj: KubeObject, kindPath: 'secrets' | 'configmaps', clientId: string, value: string | null): Promise<void> {
  await client.request('PATCH', `/api/v1/namespaces/${obj.metadata.namespace}/${kindPath}/${obj.metadata.name}`, {
    query: { fieldManager: keysFieldManager },
    body: { data: { [clientId]: value } },
    contentType: 'application/merge-patch+json',
  });
}

async function createIfMissing<T extends KubeObject>(client: KubeRest, obj: KubeObject): Promise<void> {
  try {
    await client.create<T>(obj, { fieldManager: keysFieldManager });
  } catch (err) {
    if (!isConflict(err)) throw err;
  }
}

export interface MintedKey {
  clientId: string;
  apiKey: string;
}

const deletedWhileMinting = (model: ModelRef) => new Error(`${model.kind} ${model.namespace}/${model.name} was deleted while minting; no key was issued`);

/**
 * The model's key Secret and metadata ConfigMap, created if missing (unless `create` is false:
 * then only the operator's objects are waited for). Keys are only written once the operator has
 * put its cleanup finalizer on the model, so a key can never outlive its model (without the
 * finalizer, deleting the model would leave the key Secret behind).
 */
async function keyObjects(client: KubeRest, model: ModelRef, names: ApiKeyObjectNames, deadline: number, create: boolean): Promise<{ secret: SecretObject; metadata: ConfigMapObject }> {
  for (;;) {
    const [secret, metadata] = await Promise.all([getSecret(client, model, names), getMetadata(client, model, names)]);
    if (secret && metadata) return { secret, metadata };
    const owner = await client.get(objectRef(API_GROUP_VERSION_V1BETA1, model.kind, model.name, model.namespace));
    if (!owner || owner.metadata.deletionTimestamp) throw new Error(`${model.kind} ${model.namespace}/${model.name} does not exist or is being deleted; keys can only be minted for a live model`);
    if (Date.now() > deadline) throw new Error(`${model.kind} ${model.namespace}/${model.name} has not been processed by the operator yet (no ${CLEANUP_FINALIZER} finalizer, or no key objects); check that the operator is running, then try again`);
    if (!create || !(owner.metadata.finalizers ?? []).includes(CLEANUP_FINALIZER)) {
      await new Promise((r) => setTimeout(r, 500));
      continue;
    }
    if (!secret) await createIfMissing(client, desiredApiKeySecret(model, names));
    if (!metadata) await createIfMissing(client, desiredApiKeyMetadataConfigMap(model, names));
    // Had the model been deleted (and its finalizer run) just before the create, the objects
    // just created would outlive it: check again and take them back.
    const after = await client.get(objectRef(API_GROUP_VERSION_V1BETA1, model.kind, model.name, model.namespace));
    if (!after || after.metadata.uid !== owner.metadata.uid || after.metadata.deletionTimestamp) {
      if (!after || after.metadata.uid !== owner.metadata.uid) await deleteKeyObjects(client, model, names);
      throw deletedWhileMinting(model);
    }
  }
}

/**
 * Mint a key for `model` as `user`. Contention cannot make it fail: the key gets a fresh random
 * client ID, so its two writes (metadata first: a record without a key authorizes nothing, and the
 * operator ignores it) each add one entry no one else writes, with no resourceVersion
 * guard to lose. Repeating a write is harmless (same entry, same value), so transient failures
 * are retried until `waitMs` (which also bounds waiting for the operator) has passed.
 */
export interface MintOptions {
  /** How long to retry and to wait for the operator (default 60 s). */
  waitMs?: number;
  /** The owner's OIDC `sub`. */
  subject?: string;
  /** The owner's groups that granted access (user groups ∩ spec.access.groups). */
  groups?: readonly string[];
  grantedBy?: GrantedBy;
  expiresAt?: Date;
  tier?: string;
  source?: KeySource;
  /** The AgentDeployment the operator mints this key for. */
  agent?: KeyAgent;
  /** Who minted, for the audit log (default: `user`). */
  actor?: string;
  /** The actor's OIDC `sub`, for the audit log. */
  actorSubject?: string;
  /** Per-user limits to enforce (the portal always passes them; `nls keys mint` unless --over-limit). */
  limits?: KeyLimits;
  /** Recorded in the mint's audit entry (e.g. that the limits were bypassed). */
  reason?: string;
  /**
   * Create the model's key objects when the operator has not yet (default true). The portal
   * passes false: it may not create key objects (docs/key-portal-install.md "The portal's
   * rights"), so it waits for the operator's, within `waitMs`.
   */
  createKeyObjects?: boolean;
}

/**
 * Refuses (KeyLimitError) when `owner` is at a limit: live keys on this model from the metadata
 * ConfigMap, mints of the last hour from the audit log (only the shards of the days it spans).
 */
async function checkLimits(client: KubeRest, model: ModelRef, owner: KeyOwner, metadata: Record<string, string> | undefined, limits: KeyLimits, deadline: number): Promise<void> {
  const now = new Date();
  const tooMany = keyCountRefusal(model, owner, liveKeysOf(apiKeyRecordsOf(metadata), owner, now).length, limits);
  if (tooMany) throw tooMany;
  const entries = await retryTransient(deadline, () => readAuditEntries(client, model.namespace, { since: new Date(now.getTime() - MINT_WINDOW_MS) }));
  const tooFast = mintRateRefusal(owner, recentMintsOf(entries, owner, now), limits);
  if (tooFast) throw tooFast;
}

export async function mintKey(client: KubeRest, model: ModelRef, user: string, description?: string, opts: MintOptions = {}): Promise<MintedKey> {
  const deadline = Date.now() + (opts.waitMs ?? 60_000);
  const grant = { subject: opts.subject, groups: opts.groups, grantedBy: opts.grantedBy, expiresAt: opts.expiresAt, tier: opts.tier, source: opts.source, agent: opts.agent };
  const now = new Date();
  // Checked before any write: a bad expiry must not leave objects behind.
  if (opts.expiresAt) checkKeyExpiry(opts.expiresAt, now);
  const names = apiKeyObjectNames(model.name);
  const { secret, metadata } = await retryTransient(deadline, () => keyObjects(client, model, names, deadline, opts.createKeyObjects ?? true));
  const owner: KeyOwner = { user, ...(opts.subject ? { subject: opts.subject } : {}) };
  if (opts.limits) await checkLimits(client, model, owner, metadata.data, opts.limits, deadline);
  const minted = mintApiKey(secret.data, metadata.data, { model, user, description, now: new Date(), random: randomBytes(32), idRandom: randomBytes(CLIENT_ID_RANDOM_BYTES), grant });
  try {
    await retryTransient(deadline, () => patchEntry(client, metadata, 'configmaps', minted.clientId, minted.metadataData[minted.clientId]));
    // Concurrent mints of one user may all pass the check above: counted again once this record is
    // written, so of any two the later check sees the other and live keys never exceed the limit.
    // (Both may step back under a tie; the user mints again.) Before the Secret write, so a key
    // taken back here never existed and has no audit entry.
    if (opts.limits) {
      const limits = opts.limits;
      const after = await retryTransient(deadline, () => getMetadata(client, model, names));
      const others = liveKeysOf(apiKeyRecordsOf(after?.data), owner, new Date()).filter((r) => r.clientId !== minted.clientId);
      const tooMany = keyCountRefusal(model, owner, others.length, limits);
      if (tooMany) {
        await retryTransient(deadline, () => patchEntry(client, metadata, 'configmaps', minted.clientId, null));
        throw tooMany;
      }
    }
    await retryTransient(deadline, () => patchEntry(client, secret, 'secrets', minted.clientId, minted.secretData[minted.clientId]));
  } catch (err) {
    // NotFound: the model was deleted meanwhile and its keys went with it; a patch never re-creates them.
    if (isNotFound(err)) throw deletedWhileMinting(model);
    throw err;
  }
  try {
    await audit(client, model, 'mint', { name: opts.actor ?? user, subject: opts.actorSubject }, minted.record, opts.reason, deadline);
  } catch (err) {
    // A key the audit log does not know must not stay usable: take it back before reporting.
    await patchEntry(client, secret, 'secrets', minted.clientId, null).catch(() => undefined);
    await patchEntry(client, metadata, 'configmaps', minted.clientId, null).catch(() => undefined);
    throw new Error(`no key was issued: the key audit log in namespace ${model.namespace} could not be written (${(err as Error).message}); check the rights on ConfigMaps there and try again`);
  }
  return { clientId: minted.clientId, apiKey: minted.apiKey };
}

/** Append the audit entry of a key's mint or removal (never its value). */
async function audit(client: KubeRest, model: ModelRef, action: AuditAction, actor: { name: string; subject?: string }, record: ApiKeyRecord, reason: string | undefined, deadline: number): Promise<void> {
  await appendAuditEntry(
    client,
    model.namespace,
    {
      at: new Date().toISOString(),
      action,
      actor: actor.name,
      ...(actor.subject ? { actorSubject: actor.subject } : {}),
      model: { kind: model.kind, name: model.name },
      clientId: record.clientId,
      owner: record.createdBy,
      ...(record.subject ? { subject: record.subject } : {}),
      ...(reason ? { reason } : {}),
    },
    { waitMs: Math.max(5_000, deadline - Date.now()) },
  );
}

/**
 * List key metadata from the metadata ConfigMap only: the key Secret, and so any key value, is
 * never read to list. A record whose key is gone is listed until its removal completes; a key
 * written by hand without a record is not listed (revoke it by client ID).
 */
export async function listKeys(client: KubeRest, model: ModelRef): Promise<ApiKeyRecord[]> {
  return apiKeyRecordsOf((await getMetadata(client, model, apiKeyObjectNames(model.name)))?.data);
}

/** A JSON Pointer to one data entry (RFC 6901 escaping). */
function dataPointer(clientId: string): string {
  return `/data/${clientId.replace(/~/g, '~0').replace(/\//g, '~1')}`;
}

/**
 * Revoke one key by client ID; false when it did not exist. The Secret entry is removed by a JSON
 * patch that first tests it still holds the value read: concurrent mints and revokes of other
 * keys never conflict with it, and of two concurrent revokes of one key exactly one answers true
 * (the other's test fails, it reads again and finds the key gone).
 */
export interface RevokeOptions {
  waitMs?: number;
  /** Who revoked, for the audit log (default `unknown`). */
  actor?: string;
  /** The actor's OIDC `sub`, for the audit log. */
  actorSubject?: string;
  reason?: string;
  /** The audit action (default `revoke`); the operator records `expire` and `access-revoked`. */
  action?: AuditAction;
}

export async function revokeKey(client: KubeRest, model: ModelRef, clientId: string, opts: RevokeOptions = {}): Promise<boolean> {
  const deadline = Date.now() + (opts.waitMs ?? 60_000);
  const names = apiKeyObjectNames(model.name);
  // The record before removal names the owner in the audit entry.
  const record = parseApiKeyRecord(clientId, (await retryTransient(deadline, () => getMetadata(client, model, names)))?.data?.[clientId]);
  const removed = await retryTransient(deadline, async () => {
    for (;;) {
      const secret = await getSecret(client, model, names);
      const value = secret?.data?.[clientId];
      if (!secret || value === undefined) return false;
      const path = dataPointer(clientId);
      try {
        await client.jsonPatch(secret, [{ op: 'test', path, value }, { op: 'remove', path }], { fieldManager: keysFieldManager });
        return true;
      } catch (err) {
        if (isNotFound(err)) return false; // the model, and its keys, went meanwhile
        // 422: the test failed, the entry changed or went since it was read: read again. Bounded:
        // each round needs another writer to have changed this very entry.
        if ((err as { code?: number }).code !== 422 || Date.now() >= deadline) throw err;
      }
    }
  });
  if (!removed) return false;
  await retryTransient(deadline, async () => {
    const metadata = await getMetadata(client, model, names);
    if (metadata?.data?.[clientId] !== undefined) await patchEntry(client, metadata, 'configmaps', clientId, null);
  }).catch((err) => {
    if (!isNotFound(err)) throw err;
  });
  try {
    await audit(client, model, opts.action ?? 'revoke', { name: opts.actor ?? 'unknown', subject: opts.actorSubject }, record, opts.reason, deadline);
  } catch (err) {
    throw new Error(`key ${clientId} was revoked, but its audit entry could not be written in namespace ${model.namespace} (${(err as Error).message})`);
  }
  return true;
}
