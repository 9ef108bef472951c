// API keys of a model, as pure data transformations. Storage (the seed's rule: keys survive
// re-apply, upgrade and restart, and go only with the model):
// - Secret `<model>-api-keys`: data key = client ID, value = the API key. Envoy Gateway's
//   `apiKeyAuth` reads this shape directly and forwards the client ID for authorization.
// - ConfigMap `<model>-api-key-metadata`: data key = client ID, value = JSON metadata
//   (who, when, description) — never the key itself.
// Neither has an owner reference: the operator's finalizer deletes both when the model is
// deleted, and nothing else ever does.
import { createHash } from 'node:crypto';
import { apiKeysSecretName, boundedName } from '../gateway/names';

export { apiKeysSecretName };

/** Every generated API key starts with this, so secret scanners and the log redactor spot it. */
export const API_KEY_PREFIX = 'sk-';
/** Random bytes per key: 32 bytes = 256 bits, 43 base64url characters. */
export const API_KEY_RANDOM_BYTES = 32;
/** Label on both key objects, so the operator can watch exactly these Secrets and ConfigMaps. */
export const LABEL_API_KEYS = 'llm.nebari.dev/api-keys';
export const LABEL_MODEL = 'llm.nebari.dev/model';
export const LABEL_MODEL_KIND = 'llm.nebari.dev/model-kind';
/** Annotation naming the model's full name (the label may be shortened). */
export const ANNOTATION_MODEL_NAME = 'llm.nebari.dev/model-name';
/**
 * A Secret's total size limit is 1 MiB; stay well below so one more key always fits (concurrent
 * mints may each pass the check and overshoot by their number: an entry is under 300 bytes).
 */
export const MAX_KEYS_PER_MODEL = 2000;

export type ModelKind = 'LLMModel' | 'PassthroughModel';

export interface ModelRef {
  readonly kind: ModelKind;
  readonly name: string;
  readonly namespace: string;
}

/** How a key's owner was entitled to the model at mint: CLI mints are 'admin' (or unrecorded). */
export type GrantedBy = 'public' | 'groups' | 'admin';
/** Which tool minted a key: `agent` is the operator, for an AgentDeployment bound by modelRef. */
export type KeySource = 'cli' | 'portal' | 'agent';

/** The AgentDeployment a key was minted for (its uid tells a re-created agent of the same name apart). */
export interface KeyAgent {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

/**
 * Metadata stored for each key (never the key). Records written before expiry and ownership
 * were recorded have only the first four fields; they stay valid and never expire.
 */
export interface ApiKeyRecord {
  readonly clientId: string;
  /** The owner's username. */
  readonly createdBy: string;
  readonly createdAt: string;
  readonly description?: string;
  /** The owner's OIDC `sub`. */
  readonly subject?: string;
  /** The owner's groups that granted access at mint (user groups ∩ the model's spec.access.groups). */
  readonly groups?: readonly string[];
  readonly grantedBy?: GrantedBy;
  /** ISO 8601; the operator revokes the key at this time. */
  readonly expiresAt?: string;
  /** Quota tier name. */
  readonly tier?: string;
  readonly source?: KeySource;
  /** Set on keys the operator minted for an AgentDeployment (source `agent`). */
  readonly agent?: KeyAgent;
}

/** The optional ownership, expiry and quota fields of a record, as minting takes them. */
export interface KeyGrant {
  readonly subject?: string;
  readonly groups?: readonly string[];
  readonly grantedBy?: GrantedBy;
  readonly expiresAt?: Date;
  readonly tier?: string;
  readonly source?: KeySource;
  readonly agent?: KeyAgent;
}

export function apiKeyMetadataConfigMapName(modelName: string): string {
  return boundedName(modelName, 'api-key-metadata');
}

/** The names of a model's two key objects: derived once per model on the mint and revoke paths, then passed down. */
export interface ApiKeyObjectNames {
  readonly secret: string;
  readonly metadata: string;
}

export function apiKeyObjectNames(modelName: string): ApiKeyObjectNames {
  return { secret: apiKeysSecretName(modelName), metadata: apiKeyMetadataConfigMapName(modelName) };
}

/** `sk-` + base64url of the given random bytes (the caller supplies randomness, so this is pure). */
export function formatApiKey(random: Uint8Array): string {
  if (random.length < API_KEY_RANDOM_BYTES) {
    throw new Error(`formatApiKey: need ${API_KEY_RANDOM_BYTES} random bytes, got ${random.length}`);
  }
  return API_KEY_PREFIX + Buffer.from(random.subarray(0, API_KEY_RANDOM_BYTES)).toString('base64url');
}

/** True for strings shaped like a key this project issues. */
export function looksLikeApiKey(value: string): boolean {
  return /^sk-[A-Za-z0-9_-]{43}$/.test(value);
}

function slug(text: string, max: number): string {
  const s = text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return (s || 'x').slice(0, max).replace(/-+$/, '');
}

/** Random bytes in a minted key's client ID: 8 bytes = 64 bits, 16 hex characters. */
export const CLIENT_ID_RANDOM_BYTES = 8;

/**
 * A client ID unique across every model of every namespace (Envoy Gateway pools the key Secrets
 * of a namespace, so two models must never share an ID): readable user and model parts, a hash
 * of the exact (namespace, kind, model, user) tuple, and a suffix unique per key of that tuple.
 * Minted keys take a random suffix (`randomClientIdSuffix`), so concurrent mints never pick the
 * same ID and each can add its entry without guarding the whole object; the operator's key for
 * an AgentDeployment uses the fixed suffix 0. Keys minted by earlier versions have sequence numbers
 * as their suffix and stay valid: nothing parses a client ID.
 */
export function clientIdFor(model: ModelRef, user: string, suffix: string | number): string {
  const hash = createHash('sha256').update(`${model.namespace}\0${model.kind}\0${model.name}\0${user}`).digest('hex').slice(0, 32);
  return `user-${slug(user, 40)}-${slug(model.name, 60)}-${hash}-${suffix}`;
}

/** The client-ID suffix of a minted key: hex of the given random bytes (so this stays pure). */
export function randomClientIdSuffix(random: Uint8Array): string {
  if (random.length < CLIENT_ID_RANDOM_BYTES) {
    throw new Error(`randomClientIdSuffix: need ${CLIENT_ID_RANDOM_BYTES} random bytes, got ${random.length}`);
  }
  return Buffer.from(random.subarray(0, CLIENT_ID_RANDOM_BYTES)).toString('hex');
}

/** Labels of both key objects. */
export function apiKeyLabels(model: ModelRef): Record<string, string> {
  return {
    'app.kubernetes.io/managed-by': 'nebari-llm-serving',
    'app.kubernetes.io/part-of': 'nebari-llm-serving',
    [LABEL_API_KEYS]: 'true',
    [LABEL_MODEL]: boundedName(model.name),
    [LABEL_MODEL_KIND]: model.kind,
  };
}

/**
 * The key Secret as the operator applies it: metadata and type only. With server-side apply
 * the operator then owns just these fields, so a re-apply can never remove a key that the CLI
 * added (the CLI writes `data` under its own field manager).
 */
export function desiredApiKeySecret(model: ModelRef, names: ApiKeyObjectNames = apiKeyObjectNames(model.name)) {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: names.secret,
      namespace: model.namespace,
      labels: apiKeyLabels(model),
      annotations: { [ANNOTATION_MODEL_NAME]: model.name },
    },
    type: 'Opaque',
  };
}

/** The metadata ConfigMap as the operator applies it (metadata only, for the same reason). */
export function desiredApiKeyMetadataConfigMap(model: ModelRef, names: ApiKeyObjectNames = apiKeyObjectNames(model.name)) {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: names.metadata,
      namespace: model.namespace,
      labels: apiKeyLabels(model),
      annotations: { [ANNOTATION_MODEL_NAME]: model.name },
    },
  };
}

/** Client IDs in a key Secret's `data`, sorted (stable SecurityPolicy output). */
export function clientIdsOf(secretData: Record<string, string> | undefined): string[] {
  return Object.keys(secretData ?? {}).sort();
}

const GRANTED_BY: readonly GrantedBy[] = ['public', 'groups', 'admin'];
const SOURCES: readonly KeySource[] = ['cli', 'portal', 'agent'];

/**
 * Parse one metadata entry; a damaged entry still yields a record so the key stays listed.
 * Optional fields of the wrong shape are dropped, except an unreadable `expiresAt`, which is kept
 * as written: the revocation check treats it as already expired rather than as "never expires".
 */
export function parseApiKeyRecord(clientId: string, json: string | undefined): ApiKeyRecord {
  let v: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(json ?? '{}');
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return { clientId, createdBy: 'unknown', createdAt: '' };
    v = parsed as Record<string, unknown>;
  } catch {
    return { clientId, createdBy: 'unknown', createdAt: '' };
  }
  const str = (x: unknown) => (typeof x === 'string' && x !== '' ? x : undefined);
  const groups = Array.isArray(v.groups) ? v.groups.filter((g): g is string => typeof g === 'string' && g !== '') : undefined;
  const grantedBy = GRANTED_BY.find((g) => g === v.grantedBy);
  const source = SOURCES.find((s) => s === v.source);
  const agent = parseKeyAgent(v.agent);
  return {
    clientId,
    createdBy: String(v.createdBy ?? 'unknown'),
    createdAt: String(v.createdAt ?? ''),
    ...(v.description ? { description: String(v.description) } : {}),
    ...(str(v.subject) ? { subject: str(v.subject) } : {}),
    ...(groups ? { groups } : {}),
    ...(grantedBy ? { grantedBy } : {}),
    ...(v.expiresAt !== undefined && v.expiresAt !== null ? { expiresAt: String(v.expiresAt) } : {}),
    ...(str(v.tier) ? { tier: str(v.tier) } : {}),
    ...(source ? { source } : {}),
    ...(agent ? { agent } : {}),
  };
}

function parseKeyAgent(v: unknown): KeyAgent | undefined {
  if (!v || typeof v !== 'object') return undefined;
  const { namespace, name, uid } = v as Record<string, unknown>;
  return typeof namespace === 'string' && typeof name === 'string' && typeof uid === 'string' && uid !== '' ? { namespace, name, uid } : undefined;
}

/** Throws (naming the fix) unless `expiresAt` is a valid time after `now`. */
export function checkKeyExpiry(expiresAt: Date, now: Date): void {
  if (isNaN(expiresAt.getTime())) throw new Error('expiresAt is not a valid date; give an ISO 8601 time such as 2030-01-31T00:00:00Z');
  if (expiresAt.getTime() <= now.getTime()) throw new Error(`expiresAt ${expiresAt.toISOString()} is not in the future; choose an expiry after now`);
}

/** The record minting writes: only the fields given, in a stable order. */
export function newApiKeyRecord(clientId: string, user: string, now: Date, description: string | undefined, grant: KeyGrant = {}): ApiKeyRecord {
  if (grant.expiresAt) checkKeyExpiry(grant.expiresAt, now);
  return {
    clientId,
    createdBy: user,
    createdAt: now.toISOString(),
    ...(description ? { description } : {}),
    ...(grant.subject ? { subject: grant.subject } : {}),
    ...(grant.groups ? { groups: [...grant.groups] } : {}),
    ...(grant.grantedBy ? { grantedBy: grant.grantedBy } : {}),
    ...(grant.expiresAt ? { expiresAt: grant.expiresAt.toISOString() } : {}),
    ...(grant.tier ? { tier: grant.tier } : {}),
    ...(grant.source ? { source: grant.source } : {}),
    ...(grant.agent ? { agent: { namespace: grant.agent.namespace, name: grant.agent.name, uid: grant.agent.uid } } : {}),
  };
}

/**
 * Records of every key in the metadata ConfigMap's data, by client ID. What `nls keys list` and the
 * portal show: listing never needs the key Secret, so it never reads key values.
 */
export function apiKeyRecordsOf(metadata: Record<string, string> | undefined): ApiKeyRecord[] {
  return Object.keys(metadata ?? {})
    .sort()
    .map((id) => parseApiKeyRecord(id, metadata![id]));
}

/** Records of every key that exists in the Secret (metadata without a key is ignored): the operator's view. */
export function listApiKeys(secretData: Record<string, string> | undefined, metadata: Record<string, string> | undefined): ApiKeyRecord[] {
  return clientIdsOf(secretData).map((id) => parseApiKeyRecord(id, metadata?.[id]));
}

export interface MintInput {
  readonly model: ModelRef;
  readonly user: string;
  readonly description?: string;
  readonly now: Date;
  /** API_KEY_RANDOM_BYTES random bytes for the key. */
  readonly random: Uint8Array;
  /** CLIENT_ID_RANDOM_BYTES random bytes for the client ID. */
  readonly idRandom: Uint8Array;
  /** Owner, granting groups, expiry, tier and source to record. */
  readonly grant?: KeyGrant;
}

export interface MintResult {
  readonly clientId: string;
  /** Shown to the user once; stored only in the Secret. */
  readonly apiKey: string;
  /** The Secret's new `data` (base64 values, as the API expects). */
  readonly secretData: Record<string, string>;
  /** The ConfigMap's new `data`. */
  readonly metadataData: Record<string, string>;
  /** The stored record. */
  readonly record: ApiKeyRecord;
}

/**
 * Add one key to existing data; throws (with the fix) when the model is at its key limit, and
 * when the random client ID is already in use (64 random bits: practically never; mint again).
 */
export function mintApiKey(existingSecretData: Record<string, string> | undefined, existingMetadata: Record<string, string> | undefined, input: MintInput): MintResult {
  const ids = clientIdsOf(existingSecretData);
  if (ids.length >= MAX_KEYS_PER_MODEL) {
    throw new Error(`${input.model.kind} ${input.model.namespace}/${input.model.name} already has ${ids.length} API keys (limit ${MAX_KEYS_PER_MODEL}); revoke unused keys with \`nls keys revoke\``);
  }
  const clientId = clientIdFor(input.model, input.user, randomClientIdSuffix(input.idRandom));
  if (existingSecretData?.[clientId] !== undefined || existingMetadata?.[clientId] !== undefined) {
    throw new Error(`client ID ${clientId} is already in use (a random collision); mint again`);
  }
  const apiKey = formatApiKey(input.random);
  const record = newApiKeyRecord(clientId, input.user, input.now, input.description, input.grant);
  const { clientId: _id, ...stored } = record;
  return {
    clientId,
    apiKey,
    secretData: { ...(existingSecretData ?? {}), [clientId]: Buffer.from(apiKey).toString('base64') },
    metadataData: { ...(existingMetadata ?? {}), [clientId]: JSON.stringify(stored) },
    record,
  };
}
