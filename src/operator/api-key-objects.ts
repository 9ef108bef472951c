// The per-model API-key Secret and metadata ConfigMap as the operator keeps them: created (metadata
// only) while the model exists, watched without their data, deleted only by the model's cleanup
// finalizer. Minting and revoking are in src/api-keys/key-store.ts, shared with `nls keys`.
import {
  ANNOTATION_MODEL_NAME,
  LABEL_API_KEYS,
  ModelRef,
  desiredApiKeyMetadataConfigMap,
  desiredApiKeySecret,
} from '../translate/keys/api-keys';
import { deleteKeyObjects, type SecretObject } from '../api-keys/key-store';
import { applyObject } from './runtime/apply';
import type { SecondaryWatch } from './runtime/controller';
import { KubeRest, KubeObject, isNotFound, objectRef } from '../kube/rest';

/** Label selector matching every operator-managed key Secret and metadata ConfigMap. */
export const apiKeyObjectsSelector = `${LABEL_API_KEYS}=true`;

/** The model a key object belongs to (from its annotation), as a queue key. */
export function modelKeyOfApiKeyObject(obj: KubeObject): string[] {
  const name = obj.metadata.annotations?.[ANNOTATION_MODEL_NAME];
  return name && obj.metadata.namespace ? [`${obj.metadata.namespace}/${name}`] : [];
}

/**
 * Secondary-watch mapping for key Secrets: re-render the model's SecurityPolicy only when the set
 * of client IDs changed (a key minted or revoked), not for the empty Secret the operator creates.
 */
export function modelKeyOnClientIdChange(obj: KubeObject, event: string, old?: KubeObject): string[] {
  const ids = (o?: KubeObject) => JSON.stringify((o as { clientIds?: string[] } | undefined)?.clientIds ?? []);
  if (event === 'add' && ids(obj) === '[]') return [];
  if (event === 'update' && ids(obj) === ids(old)) return [];
  return modelKeyOfApiKeyObject(obj);
}

/** A key object without its data, only the client IDs: what informers cache (key values never sit in memory). */
export function withoutData(obj: KubeObject): KubeObject {
  const { data, ...rest } = obj as SecretObject;
  return { ...rest, clientIds: Object.keys(data ?? {}).sort() } as KubeObject;
}

/**
 * The secondary watch both model controllers put on their kind's key Secrets: in the operator
 * namespace only (models live there, and RBAC grants Secrets nowhere wider), data never cached.
 */
export function apiKeySecretWatch(modelKind: string, namespace: string): SecondaryWatch {
  return { apiVersion: 'v1', kind: 'Secret', namespace, labelSelector: `${apiKeyObjectsSelector},llm.nebari.dev/model-kind=${modelKind}`, map: modelKeyOnClientIdChange, transform: withoutData };
}

/** Create or refresh both key objects (metadata only) and return them as stored (the metadata's data holds each key's record). */
export async function ensureApiKeyObjects(client: KubeRest, model: ModelRef): Promise<{ secret: SecretObject; metadata: KubeObject & { data?: Record<string, string> } }> {
  const secret = await applyObject<SecretObject>(client, desiredApiKeySecret(model));
  const metadata = await applyObject<KubeObject & { data?: Record<string, string> }>(client, desiredApiKeyMetadataConfigMap(model));
  return { secret, metadata };
}

/**
 * Delete both key objects; called only from the cleanup finalizer. If a model of the other kind
 * with the same name exists (the webhook forbids it, but it may have been down), the keys are
 * theirs too and stay.
 */
export async function deleteApiKeyObjects(client: KubeRest, model: ModelRef, apiVersion: string): Promise<'deleted' | 'kept-shared'> {
  const otherKind = model.kind === 'LLMModel' ? 'PassthroughModel' : 'LLMModel';
  const other = await client.get(objectRef(apiVersion, otherKind, model.name, model.namespace)).catch((err) => {
    // The other kind's CRD may not be installed: then nobody else can own the keys.
    if (isNotFound(err) || (err as Error).name === 'KindNotServedError') return undefined;
    throw err;
  });
  if (other && !other.metadata.deletionTimestamp) return 'kept-shared';
  await deleteKeyObjects(client, model);
  return 'deleted';
}

