// The Kubernetes side of API keys, shared by the operator and `nls keys`: reading the per-model key
// Secret and metadata ConfigMap, and minting, listing and revoking keys. Key data is written under
// its own field manager, so the operator's re-apply never touches a key. Every write touches only
// its own key's entry and needs no guard on the whole object, so concurrent writers never
// conflict: a mint adds an entry under a fresh random client ID (merge patch), a revoke removes
// one entry only while it holds the value read (JSON patch with a `test`).
// (What a key is, and the objects' desired shape, are pure functions in src/translate/keys.)
import { randomBytes } from 'node:crypto';
import {
  ApiKeyRecord,
  ModelRef,
  apiKeyMetadataConfigMapName,
  apiKeysSecretName,
  desiredApiKeyMetadataConfigMap,
  desiredApiKeySecret,
  listApiKeys,
  mintApiKey,
  CLIENT_ID_RANDOM_BYTES,
} from '../translate/keys/api-keys';
import { API_GROUP_VERSION_V1BETA1, CLEANUP_FINALIZER } from '../api/common';
import { KubeApiError, KubeRest, KubeObject, isConflict, isNotFound, objectRef } from '../kube/rest';

export interface SecretObject extends KubeObject {
  data?: Record<string, string>;
}
export interface ConfigMapObject extends KubeObject {
  data?: Record<string, string>;
}

/** Delete both key objects of a model, whoever owns them. */
export async function deleteKeyObjects(client: KubeRest, model: ModelRef): Promise<void> {
  await client.delete(objectRef('v1', 'Secret', apiKeysSecretName(model.name), model.namespace));
  await client.delete(objectRef('v1', 'ConfigMap', apiKeyMetadataConfigMapName(model.name), model.namespace));
}

async function getSecret(client: KubeRest, model: ModelRef): Promise<SecretObject | undefined> {
  return client.get<SecretObject>(objectRef('v1', 'Secret', apiKeysSecretName(model.name), model.namespace));
}
async function getMetadata(client: KubeRest, model: ModelRef): Promise<ConfigMapObject | undefined> {
  return client.get<ConfigMapObject>(objectRef('v1', 'ConfigMap', apiKeyMetadataConfigMapName(model.name), model.namespace));
}

/** Field manager of key data written by the CLI (distinct from the operator's). */
export const keysFieldManager = 'nls-keys';

/** Answers worth another try: conflicts, overload and server errors, dropped connections. */
function isTransient(err: unknown): boolean {
  if (err instanceof KubeApiError) return err.code === 409 || err.code === 429 || err.code >= 500;
  const code = (err as NodeJS.ErrnoException)?.code;
  return code === 'ECONNRESET' || code === 'ECONNREFUSED' || code === 'EPIPE' || /timed out/.test(String((err as Error)?.message));
}

/**
 * Runs `attempt` until it succeeds, retrying transient failures with jittered exponential backoff
 * (so retries of many writers spread out) until `deadline`; bounded by time, not by a count.
 */
async function retryTransient<T>(deadline: number, attempt: () => Promise<T>): Promise<T> {
  for (let n = 0; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      if (!isTransient(err) || Date.now() >= deadline) throw err;
      const delay = Math.random() * Math.min(2000, 50 * 2 ** Math.min(n, 6));
      await new Promise((r) => setTimeout(r, Math.min(delay, Math.max(0, deadline - Date.now()))));
    }
  }
}

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
 * The model's key Secret and metadata ConfigMap, created if missing. Keys are only written once
 * the operator has put its cleanup finalizer on the model, so a key can never outlive its model
 * (without the finalizer, deleting the model would leave the key Secret behind).
 */
async function keyObjects(client: KubeRest, model: ModelRef, deadline: number): Promise<{ secret: SecretObject; metadata: ConfigMapObject }> {
  for (;;) {
    const [secret, metadata] = await Promise.all([getSecret(client, model), getMetadata(client, model)]);
    if (secret && metadata) return { secret, metadata };
    const owner = await client.get(objectRef(API_GROUP_VERSION_V1BETA1, model.kind, model.name, model.namespace));
    if (!owner || owner.metadata.deletionTimestamp) throw new Error(`${model.kind} ${model.namespace}/${model.name} does not exist or is being deleted; keys can only be minted for a live model`);
    if (Date.now() > deadline) throw new Error(`${model.kind} ${model.namespace}/${model.name} has not been processed by the operator yet (no ${CLEANUP_FINALIZER} finalizer, or no key objects); check that the operator is running, then try again`);
    if (!(owner.metadata.finalizers ?? []).includes(CLEANUP_FINALIZER)) {
      await new Promise((r) => setTimeout(r, 500));
      continue;
    }
    if (!secret) await createIfMissing(client, desiredApiKeySecret(model));
    if (!metadata) await createIfMissing(client, desiredApiKeyMetadataConfigMap(model));
    // Had the model been deleted (and its finalizer run) just before the create, the objects
    // just created would outlive it: check again and take them back.
    const after = await client.get(objectRef(API_GROUP_VERSION_V1BETA1, model.kind, model.name, model.namespace));
    if (!after || after.metadata.uid !== owner.metadata.uid || after.metadata.deletionTimestamp) {
      if (!after || after.metadata.uid !== owner.metadata.uid) await deleteKeyObjects(client, model);
      throw deletedWhileMinting(model);
    }
  }
}

/**
 * Mint a key for `model` as `user`. Contention cannot make it fail: the key gets a fresh random
 * client ID, so its two writes (metadata first: an entry without a key is ignored, a key without
 * metadata is still listed) each add one entry no one else writes, with no resourceVersion
 * guard to lose. Repeating a write is harmless (same entry, same value), so transient failures
 * are retried until `waitMs` (which also bounds waiting for the operator) has passed.
 */
export async function mintKey(client: KubeRest, model: ModelRef, user: string, description?: string, opts: { waitMs?: number } = {}): Promise<MintedKey> {
  const deadline = Date.now() + (opts.waitMs ?? 60_000);
  const { secret, metadata } = await retryTransient(deadline, () => keyObjects(client, model, deadline));
  const minted = mintApiKey(secret.data, metadata.data, { model, user, description, now: new Date(), random: randomBytes(32), idRandom: randomBytes(CLIENT_ID_RANDOM_BYTES) });
  try {
    await retryTransient(deadline, () => patchEntry(client, metadata, 'configmaps', minted.clientId, minted.metadataData[minted.clientId]));
    await retryTransient(deadline, () => patchEntry(client, secret, 'secrets', minted.clientId, minted.secretData[minted.clientId]));
  } catch (err) {
    // NotFound: the model was deleted meanwhile and its keys went with it; a patch never re-creates them.
    if (isNotFound(err)) throw deletedWhileMinting(model);
    throw err;
  }
  return { clientId: minted.clientId, apiKey: minted.apiKey };
}

/** List key metadata (never key values). */
export async function listKeys(client: KubeRest, model: ModelRef): Promise<ApiKeyRecord[]> {
  const [secret, metadata] = await Promise.all([getSecret(client, model), getMetadata(client, model)]);
  return listApiKeys(secret?.data, metadata?.data);
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
export async function revokeKey(client: KubeRest, model: ModelRef, clientId: string, opts: { waitMs?: number } = {}): Promise<boolean> {
  const deadline = Date.now() + (opts.waitMs ?? 60_000);
  const removed = await retryTransient(deadline, async () => {
    for (;;) {
      const secret = await getSecret(client, model);
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
    const metadata = await getMetadata(client, model);
    if (metadata?.data?.[clientId] !== undefined) await patchEntry(client, metadata, 'configmaps', clientId, null);
  }).catch((err) => {
    if (!isNotFound(err)) throw err;
  });
  return true;
}
