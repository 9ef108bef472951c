// The per-model API-key Secret and metadata ConfigMap as the operator keeps them: created (metadata
// only) while the model exists, watched without their data, deleted only by the model's cleanup
// finalizer. Minting and revoking are in src/api-keys/key-store.ts, shared with `nls keys`.
import {
  ANNOTATION_MODEL_NAME,
  LABEL_API_KEYS,
  ModelRef,
  clientIdsOf,
  desiredApiKeyMetadataConfigMap,
  desiredApiKeySecret,
} from '../translate/keys/api-keys';
import { deleteKeyObjects, type ConfigMapObject, type SecretObject } from '../api-keys/key-store';
import { applyObject } from './runtime/apply';
import { KubeRest, KubeObject, isNotFound, objectRef } from '../kube/rest';

/** What a pass reads of a model's key objects, from the server or from the watches (key-object-cache.ts). */
export interface KeyObjectsRead {
  /** The key Secret's name (the SecurityPolicy references it). */
  readonly secretName: string;
  /** The client IDs in the key Secret, sorted. */
  readonly clientIds: string[];
  /** The metadata ConfigMap's data (one JSON record per client ID). */
  readonly metadataData: Record<string, string> | undefined;
}

/** Where a pass may find both key objects without a request: the controller's watches (KeyObjectCache). */
export interface KeyObjectsSource {
  /** Both objects as the operator applies them; undefined when the server must be asked. */
  current(model: ModelRef): KeyObjectsRead | undefined;
}

/** Label selector matching every operator-managed key Secret and metadata ConfigMap. */
export const apiKeyObjectsSelector = `${LABEL_API_KEYS}=true`;

/**
 * Label selector matching everything else: the watches that must never see a key object (credential
 * Secrets, the provider CA ConfigMap) use it, so their caches cannot answer the key apply path.
 */
export const notApiKeyObjectsSelector = `!${LABEL_API_KEYS}`;

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

/** A key object of the model's name exists but is not the model's: it is never taken over. */
export class KeyObjectConflict extends Error {
  constructor(object: KubeObject, model: ModelRef) {
    const where = `${object.kind} ${object.metadata.namespace}/${object.metadata.name}`;
    const owner = object.metadata.annotations?.[ANNOTATION_MODEL_NAME];
    super(
      `${where} already exists and is not the API-key object of ${model.kind} ${model.name} ` +
        `(${owner ? `it belongs to the model "${owner}"` : `it lacks the label ${LABEL_API_KEYS}=true and the annotation ${ANNOTATION_MODEL_NAME}: ${model.name}`}); ` +
        `the operator never adopts key objects it did not create: delete or rename ${where}, or give the ${model.kind} another name`,
    );
    this.name = 'KeyObjectConflict';
  }
}

/** Whether an existing key object was created for this model (by name: the other kind of the same name shares it). */
function isKeyObjectOf(obj: KubeObject, model: ModelRef): boolean {
  return obj.metadata.labels?.[LABEL_API_KEYS] === 'true' && obj.metadata.annotations?.[ANNOTATION_MODEL_NAME] === model.name;
}

/**
 * The conflict when a key object's name is taken by an object that is not this model's: server-side
 * apply would otherwise adopt a Secret someone pre-created (with keys of their choosing) or that of
 * another model whose name cuts to the same bounded name.
 */
async function keyObjectConflict(client: KubeRest, model: ModelRef): Promise<KeyObjectConflict | undefined> {
  // Read from the server: the key watch caches labelled objects only, and a planted one is not.
  for (const desired of [desiredApiKeySecret(model), desiredApiKeyMetadataConfigMap(model)]) {
    const existing = await client.get(objectRef('v1', desired.kind, desired.metadata.name, model.namespace));
    if (existing && !isKeyObjectOf(existing, model)) return new KeyObjectConflict(existing, model);
  }
  return undefined;
}

// Models whose key objects this process has checked and applied. The check guards against objects
// planted before the model's first pass (or between a deletion and a re-creation, which the
// finalizer's deleteApiKeyObjects forgets); once the operator's own objects stand, replacing them
// needs the right to delete Secrets there, which already reaches far more. So each model is checked
// once per process, not on every pass (two GETs per model per resync otherwise).
const checkedModels = new WeakMap<KubeRest, Set<string>>();
const modelKey = (model: ModelRef) => `${model.kind}/${model.namespace}/${model.name}`;
function checked(client: KubeRest): Set<string> {
  let set = checkedModels.get(client);
  if (!set) checkedModels.set(client, (set = new Set()));
  return set;
}

/**
 * Both key objects as read, when they are the model's (a missing metadata ConfigMap reads as
 * empty); undefined when the model has no key Secret of its own. Creates nothing. From the
 * controller's watches when they hold both objects (`cache`), else from the server.
 */
export async function readApiKeyObjects(client: KubeRest, model: ModelRef, cache?: KeyObjectsSource): Promise<KeyObjectsRead | undefined> {
  const cached = cache?.current(model);
  if (cached) return cached;
  const secretRef = desiredApiKeySecret(model);
  const metadataRef = desiredApiKeyMetadataConfigMap(model);
  const secret = await client.get<SecretObject>(objectRef('v1', 'Secret', secretRef.metadata.name, model.namespace));
  if (!secret || !isKeyObjectOf(secret, model)) return undefined;
  const metadata = await client.get<ConfigMapObject>(objectRef('v1', 'ConfigMap', metadataRef.metadata.name, model.namespace));
  return { secretName: secret.metadata.name, clientIds: clientIdsOf(secret.data), metadataData: metadata && isKeyObjectOf(metadata, model) ? metadata.data : undefined };
}

/**
 * The model's key objects, created or refreshed (metadata only) as needed. At steady state the
 * controller's watches hold both as the operator applies them (`cache`) and nothing is sent;
 * otherwise both are applied and read from the answers.
 */
export async function ensureApiKeyObjects(client: KubeRest, model: ModelRef, cache?: KeyObjectsSource): Promise<KeyObjectsRead> {
  const cached = cache?.current(model);
  if (cached) {
    // The watches hold them labelled and annotated as the model's: as good as the server check.
    checked(client).add(modelKey(model));
    return cached;
  }
  if (!checked(client).has(modelKey(model))) {
    const conflict = await keyObjectConflict(client, model);
    if (conflict) throw conflict;
  }
  const secret = await applyObject<SecretObject>(client, desiredApiKeySecret(model));
  const metadata = await applyObject<ConfigMapObject>(client, desiredApiKeyMetadataConfigMap(model));
  checked(client).add(modelKey(model));
  return { secretName: secret.metadata.name, clientIds: clientIdsOf(secret.data), metadataData: metadata.data };
}

/**
 * Delete both key objects; called only from the cleanup finalizer. If a model of the other kind
 * with the same name exists (the webhook forbids it, but it may have been down), the keys are
 * theirs too and stay.
 */
export async function deleteApiKeyObjects(client: KubeRest, model: ModelRef, apiVersion: string): Promise<'deleted' | 'kept-shared' | 'not-ours'> {
  const otherKind = model.kind === 'LLMModel' ? 'PassthroughModel' : 'LLMModel';
  const other = await client.get(objectRef(apiVersion, otherKind, model.name, model.namespace)).catch((err) => {
    // The other kind's CRD may not be installed: then nobody else can own the keys.
    if (isNotFound(err) || (err as Error).name === 'KindNotServedError') return undefined;
    throw err;
  });
  // A model of this name created later is checked afresh.
  checked(client).delete(modelKey(model));
  if (other && !other.metadata.deletionTimestamp) return 'kept-shared';
  // Objects of these names that are not the model's (the model never published) are not ours to delete.
  if (await keyObjectConflict(client, model)) return 'not-ours';
  await deleteKeyObjects(client, model);
  return 'deleted';
}

