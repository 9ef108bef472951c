// The Kubernetes side of API keys, shared by the operator and `nls keys`: reading the per-model key
// Secret and metadata ConfigMap, and minting, listing and revoking keys. Key data is written under
// its own field manager with optimistic concurrency, so the operator's re-apply never touches a key.
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
  revokeApiKey,
} from '../translate/keys/api-keys';
import { API_GROUP_VERSION, CLEANUP_FINALIZER } from '../api/common';
import { KubeRest, KubeObject, isConflict, isNotFound, objectRef } from '../kube/rest';

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

// Merge patch of `data` guarded by resourceVersion: a concurrent writer makes it fail with 409
// and the caller retries on fresh data, so two mints can never pick the same client ID.
async function writeData(client: KubeRest, obj: KubeObject, kindPath: 'secrets' | 'configmaps', data: Record<string, string | null>): Promise<void> {
  await client.request('PATCH', `/api/v1/namespaces/${obj.metadata.namespace}/${kindPath}/${obj.metadata.name}`, {
    query: { fieldManager: keysFieldManager },
    body: { metadata: { resourceVersion: obj.metadata.resourceVersion }, data },
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

/**
 * Mint a key for `model` as `user`; retries on concurrent writers. Keys are only written once the
 * operator has put its cleanup finalizer on the model, so a key can never outlive its model
 * (without the finalizer, deleting the model would leave the key Secret behind).
 */
export async function mintKey(client: KubeRest, model: ModelRef, user: string, description?: string, opts: { waitMs?: number } = {}): Promise<MintedKey> {
  const deadline = Date.now() + (opts.waitMs ?? 60_000);
  // Only lost write races count toward giving up; waiting for the operator does not.
  let conflicts = 0;
  for (;;) {
    const secret = await getSecret(client, model);
    const metadata = await getMetadata(client, model);
    if (!secret || !metadata) {
      const owner = await client.get(objectRef(API_GROUP_VERSION, model.kind, model.name, model.namespace));
      if (!owner || owner.metadata.deletionTimestamp) throw new Error(`${model.kind} ${model.namespace}/${model.name} does not exist or is being deleted; keys can only be minted for a live model`);
      if (!(owner.metadata.finalizers ?? []).includes(CLEANUP_FINALIZER)) {
        if (Date.now() > deadline) throw new Error(`${model.kind} ${model.namespace}/${model.name} has not been processed by the operator yet (no ${CLEANUP_FINALIZER} finalizer); check that the operator is running, then try again`);
        await new Promise((r) => setTimeout(r, 500));
        continue;
      }
      if (!secret) await createIfMissing(client, desiredApiKeySecret(model));
      if (!metadata) await createIfMissing(client, desiredApiKeyMetadataConfigMap(model));
      // Had the model been deleted (and its finalizer run) just before the create, the objects
      // just created would outlive it: check again and take them back.
      const after = await client.get(objectRef(API_GROUP_VERSION, model.kind, model.name, model.namespace));
      if (!after || after.metadata.uid !== owner.metadata.uid || after.metadata.deletionTimestamp) {
        if (!after || after.metadata.uid !== owner.metadata.uid) await deleteKeyObjects(client, model);
        throw new Error(`${model.kind} ${model.namespace}/${model.name} was deleted while minting; no key was issued`);
      }
      continue;
    }
    const minted = mintApiKey(secret.data, metadata.data, { model, user, description, now: new Date(), random: randomBytes(32) });
    try {
      // Metadata first: an entry without a key is ignored, a key without metadata is still listed.
      await writeData(client, metadata, 'configmaps', { [minted.clientId]: minted.metadataData[minted.clientId] });
      await writeData(client, secret, 'secrets', { [minted.clientId]: minted.secretData[minted.clientId] });
      return { clientId: minted.clientId, apiKey: minted.apiKey };
    } catch (err) {
      // NotFound: the model was deleted meanwhile and its keys went with it; a patch never re-creates them.
      if (isNotFound(err)) throw new Error(`${model.kind} ${model.namespace}/${model.name} was deleted while minting; no key was issued`);
      if (!isConflict(err)) throw err;
      if (++conflicts > 50) throw new Error(`could not mint a key for ${model.kind} ${model.namespace}/${model.name}: too many concurrent writers; try again`);
      await new Promise((r) => setTimeout(r, 20 * Math.min(conflicts, 10)));
    }
  }
}

/** List key metadata (never key values). */
export async function listKeys(client: KubeRest, model: ModelRef): Promise<ApiKeyRecord[]> {
  const [secret, metadata] = await Promise.all([getSecret(client, model), getMetadata(client, model)]);
  return listApiKeys(secret?.data, metadata?.data);
}

/** Revoke one key by client ID; false when it did not exist. */
export async function revokeKey(client: KubeRest, model: ModelRef, clientId: string): Promise<boolean> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const secret = await getSecret(client, model);
    if (!secret) return false;
    const { removed } = revokeApiKey(secret.data, undefined, clientId);
    if (!removed) return false;
    try {
      await writeData(client, secret, 'secrets', { [clientId]: null });
      const metadata = await getMetadata(client, model);
      if (metadata?.data?.[clientId] !== undefined) await writeData(client, metadata, 'configmaps', { [clientId]: null });
      return true;
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
  }
  throw new Error(`could not revoke ${clientId}: too many concurrent writers; try again`);
}
