// Each logged-in user's refresh token, kept so the group refresh can ask the issuer for their
// current groups while they are away. One Secret per user (labelled llm.nebari.dev/portal-user),
// the token sealed with the session key (AES-256-GCM), so reading the Secret alone does not give
// the token. The name derives from a hash of the OIDC subject: nothing about the user is in it.
// When the issuer refuses a refresh, the token is dropped and the Secret marked `refusedAt`: that
// user's sessions may not mint until they log in again (which stores a new token, clearing it).
// The same Secret is the server-side half of every session of the user (issue 29, Medium 5): the
// user's current groups (as of their login or the latest group refresh) and a session generation
// each session cookie carries. Logout and a refusal replace the generation, so every older cookie
// of the user stops working at its next request, on every replica.
// It also counts the user's consecutive failed group refreshes (issue 29, Medium 7): an issuer
// error other than a refusal, or no readable refresh token, since `refreshFailingSince`; after
// `portal.groupRefreshFailClosedSeconds` of that the group refresh treats the user as refused.
import { createHash, randomBytes } from 'node:crypto';
// Where the portal runs from the chart it holds no right on Secrets by kind (issue 29, Medium 6):
// it gets and patches a user's Secret once the operator has named it in the portal's Secret Role
// (src/operator/portal-secrets-role.ts). So a Secret it has just created is waited for until the
// API server says it may read it (a SelfSubjectAccessReview, never a refused request), and the
// group refresh walks the user Secrets that Role names instead of listing Secrets.
import { KubeObject, KubeRest, isConflict, isNotFound, objectRef } from '../kube/rest';
import { SessionKeys, seal, unsealWith } from './session';
import { LABEL_PORTAL_USER, PORTAL_USER_SECRET_PREFIX } from '../translate/keys/portal-users';
import { isPortalUserSecretName, secretNamesOfRole } from '../translate/keys/portal-secrets';

export { LABEL_PORTAL_USER };
const PURPOSE = 'refresh-token';
const FIELD_MANAGER = 'nls-portal';
/** Far beyond any refresh token's life; the issuer decides when it stops working. */
const STORE_SECONDS = 400 * 86_400;

export interface StoredUser {
  readonly secretName: string;
  readonly sub: string;
  readonly username: string;
  /** The issuer refused this user's refresh (or it failed closed) and they have not logged in since. */
  readonly refused: boolean;
  /** Who refused: the issuer (`invalid_grant`) or the portal, failing closed; absent in Secrets marked before it was stored. */
  readonly refusedBy?: RefusedBy;
  /** Absent once refused, when the issuer gave none, or when no session key opens it. */
  readonly refreshToken?: string;
  /** Whether a refresh token is stored but no session key opens it (the key it was sealed with is gone). */
  readonly refreshTokenUnreadable: boolean;
  /** Whether the token was sealed with an older session key (the group refresh re-seals it with the newest). */
  readonly refreshTokenOnOldKey: boolean;
  /** When the user's group refreshes started failing (no refusal, no success since); absent while they succeed. */
  readonly refreshFailingSince?: Date;
  /** Consecutive failed group refreshes. */
  readonly refreshFailures: number;
  /** The groups of the user's login or of the latest group refresh; absent in Secrets written before they were stored. */
  readonly groups?: readonly string[];
}

/** What every request of a session is checked against. */
export interface UserState {
  /** The issuer refused this user's refresh (or it failed closed) and they have not logged in since. */
  readonly refused: boolean;
  /** Who refused (see StoredUser.refusedBy). */
  readonly refusedBy?: RefusedBy;
  /** The generation a session cookie must carry; absent in Secrets written before it existed. */
  readonly generation?: string;
  /** The user's current groups (see StoredUser.groups). */
  readonly groups?: readonly string[];
}

type SecretObject = KubeObject & { data?: Record<string, string> };

export function userHash(sub: string): string {
  return createHash('sha256').update(sub).digest('hex').slice(0, 40);
}

export function userSecretName(sub: string): string {
  return `${PORTAL_USER_SECRET_PREFIX}${userHash(sub)}`;
}

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const unb64 = (s: string | undefined) => Buffer.from(s ?? '', 'base64').toString('utf8');
/** Random rather than a counter: a deleted and recreated Secret never brings an old cookie back to life. */
const newGeneration = () => randomBytes(18).toString('base64url');
const CLEAR_FAILURES = { refreshFailingSince: null, refreshFailures: null };

function groupsOf(secret: SecretObject): string[] | undefined {
  if (secret.data?.groups === undefined) return undefined;
  try {
    const groups: unknown = JSON.parse(unb64(secret.data.groups));
    // Unreadable groups grant nothing rather than falling back to the (older) cookie's.
    return Array.isArray(groups) ? groups.filter((g): g is string => typeof g === 'string') : [];
  } catch {
    return [];
  }
}

function stateOf(secret: SecretObject): UserState {
  const generation = unb64(secret.data?.sessionGeneration);
  const groups = groupsOf(secret);
  const refusedBy = secret.data?.refusedAt && secret.data.refusedBy ? (unb64(secret.data.refusedBy) as RefusedBy) : undefined;
  return { refused: !!secret.data?.refusedAt, ...(refusedBy ? { refusedBy } : {}), ...(generation ? { generation } : {}), ...(groups ? { groups } : {}) };
}

/**
 * A login: stores the user's groups and refresh token (when the issuer gave one), lifts a refusal,
 * and returns the session generation the new session cookie carries (the current one, so a login
 * does not end the user's other sessions; a new one when the Secret is new or predates generations).
 */
export async function recordLogin(client: KubeRest, namespace: string, key: SessionKeys, user: { sub: string; username: string; groups: readonly string[]; refreshToken?: string }): Promise<string> {
  const name = userSecretName(user.sub);
  const ref = objectRef('v1', 'Secret', name, namespace);
  const data: Record<string, string> = { subject: b64(user.sub), username: b64(user.username), groups: b64(JSON.stringify(user.groups)) };
  if (user.refreshToken) data.refreshToken = b64(seal(key, PURPOSE, { token: user.refreshToken, exp: Math.floor(Date.now() / 1000) + STORE_SECONDS }));
  for (let attempt = 0; attempt < 5; attempt++) {
    const generation = newGeneration();
    try {
      await client.create(
        { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace, labels: { [LABEL_PORTAL_USER]: userHash(user.sub), 'app.kubernetes.io/part-of': 'nebari-llm-serving', 'app.kubernetes.io/component': 'key-portal' } }, type: 'Opaque', data: { ...data, sessionGeneration: b64(generation) } } as KubeObject,
        { fieldManager: FIELD_MANAGER },
      );
      await untilReadable(client, namespace, name);
      return generation;
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
    // It exists: it may have been created a moment ago (another replica, another tab).
    await untilReadable(client, namespace, name);
    // Logging in again lifts a refusal, and proves the user to the issuer: the failure count restarts.
    const patched = await client.mergePatch<SecretObject>(ref, { data: { ...data, refusedAt: null, refusedBy: null, refusedReason: null, ...CLEAR_FAILURES } }, { fieldManager: FIELD_MANAGER });
    const current = stateOf(patched).generation;
    if (current) return current;
    try {
      // The resourceVersion makes two first logins racing here agree on one generation.
      await client.mergePatch(ref, { metadata: { resourceVersion: patched.metadata.resourceVersion }, data: { sessionGeneration: b64(generation) } }, { fieldManager: FIELD_MANAGER });
      return generation;
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
  }
  throw new Error(`Secret ${namespace}/${name}: could not record the login`);
}

/** The user's server-side session state; undefined when the portal stores nothing for them. */
export async function readUserState(client: KubeRest, namespace: string, sub: string): Promise<UserState | undefined> {
  const secret = await client.get<SecretObject>(objectRef('v1', 'Secret', userSecretName(sub), namespace)).catch(unlessForbidden);
  return secret && stateOf(secret);
}

/**
 * A refused read of a user's Secret means the portal's Secret Role does not name it, so no such
 * Secret stands (the operator names every one, and a login waits for that): nothing is stored for
 * the user, and their session ends, as for a deleted Secret.
 */
function unlessForbidden(err: unknown): undefined {
  if ((err as { code?: number }).code === 403) return undefined;
  throw err;
}

/** Ends every session of the user (logout): their cookies carry the old generation. */
export async function endSessions(client: KubeRest, namespace: string, sub: string): Promise<void> {
  try {
    await client.mergePatch(objectRef('v1', 'Secret', userSecretName(sub), namespace), { data: { sessionGeneration: b64(newGeneration()) } }, { fieldManager: FIELD_MANAGER });
  } catch (err) {
    // Nothing stored for the user (gone, or never named in the portal's Role): no session of
    // theirs can pass the generation check anyway.
    if (!isNotFound(err)) unlessForbidden(err);
  }
}

/** The user's current groups, as the group refresh just read them from the issuer. */
export async function saveGroups(client: KubeRest, namespace: string, sub: string, groups: readonly string[]): Promise<void> {
  await client.mergePatch(objectRef('v1', 'Secret', userSecretName(sub), namespace), { data: { groups: b64(JSON.stringify(groups)) } }, { fieldManager: FIELD_MANAGER });
}

/** A refresh token the issuer handed out: the failure count restarts. */
export async function saveRefreshToken(client: KubeRest, namespace: string, key: SessionKeys, user: { sub: string; username: string; refreshToken: string }): Promise<void> {
  const data = {
    subject: b64(user.sub),
    username: b64(user.username),
    refreshToken: b64(seal(key, PURPOSE, { token: user.refreshToken, exp: Math.floor(Date.now() / 1000) + STORE_SECONDS })),
  };
  const name = userSecretName(user.sub);
  // Logging in again lifts a refusal.
  const patch = { data: { ...data, refusedAt: null, refusedBy: null, refusedReason: null, ...CLEAR_FAILURES } };
  try {
    await client.create(
      { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace, labels: { [LABEL_PORTAL_USER]: userHash(user.sub), 'app.kubernetes.io/part-of': 'nebari-llm-serving', 'app.kubernetes.io/component': 'key-portal' } }, type: 'Opaque', data } as KubeObject,
      { fieldManager: FIELD_MANAGER },
    );
  } catch (err) {
    if (!isConflict(err)) throw err;
    await client.mergePatch(objectRef('v1', 'Secret', name, namespace), patch, { fieldManager: FIELD_MANAGER });
    return;
  }
  await untilReadable(client, namespace, name);
}

/**
 * Every user the portal stored: refused ones (their token dropped) with `refused` set, the others
 * with the token when a session key still opens it (`refreshTokenUnreadable` when none does).
 */
export async function listStoredUsers(client: KubeRest, namespace: string, key: SessionKeys, secretsRole?: string): Promise<StoredUser[]> {
  const items = secretsRole ? await userSecretsNamedBy(client, namespace, secretsRole) : (await client.list<SecretObject>('v1', 'Secret', { namespace, labelSelector: LABEL_PORTAL_USER })).items;
  const users: StoredUser[] = [];
  for (const s of items) {
    const sub = unb64(s.data?.subject);
    if (!sub) continue;
    const sealed = unb64(s.data?.refreshToken);
    const opened = unsealWith<{ token: string; exp: number }>(key, PURPOSE, sealed);
    const groups = groupsOf(s);
    const since = new Date(unb64(s.data?.refreshFailingSince));
    users.push({
      secretName: s.metadata.name,
      sub,
      username: unb64(s.data?.username),
      refused: !!s.data?.refusedAt,
      ...(s.data?.refusedBy ? { refusedBy: unb64(s.data.refusedBy) as RefusedBy } : {}),
      ...(opened ? { refreshToken: opened.payload.token } : {}),
      refreshTokenUnreadable: !!sealed && !opened,
      refreshTokenOnOldKey: !!opened && !opened.newest,
      ...(Number.isNaN(since.getTime()) ? {} : { refreshFailingSince: since }),
      refreshFailures: Number(unb64(s.data?.refreshFailures)) || 0,
      ...(groups ? { groups } : {}),
    });
  }
  return users;
}

export type RefusedBy = 'issuer' | 'fail-closed';

/**
 * The user Secrets the portal's Secret Role names, read one by one: the operator names every
 * stored user there (it lists them; the portal may not), including those of earlier releases.
 */
async function userSecretsNamedBy(client: KubeRest, namespace: string, secretsRole: string): Promise<SecretObject[]> {
  const role = await client.get<KubeObject & { rules?: [] }>(objectRef('rbac.authorization.k8s.io/v1', 'Role', secretsRole, namespace));
  if (!role) throw new Error(`Role ${namespace}/${secretsRole} is missing: the operator writes it (with portal.enabled); is the operator running?`);
  const secrets: SecretObject[] = [];
  for (const name of secretNamesOfRole(role).filter(isPortalUserSecretName)) {
    // Deleted since the operator last wrote the Role: nothing stored for that user any more.
    const secret = await client.get<SecretObject>(objectRef('v1', 'Secret', name, namespace));
    if (secret) secrets.push(secret);
  }
  return secrets;
}

/** How long a login waits for the operator to name a new user Secret in the portal's Role. */
const READABLE_WAIT_MS = 15_000;
const READABLE_POLL_MS = 100;

/**
 * Waits until the portal may get the Secret it just created, asking the API server's authorizer
 * (a SelfSubjectAccessReview, which every authenticated client may create) rather than trying a
 * read that would be refused. Instant where the portal's rights are not by name.
 */
export async function untilReadable(client: KubeRest, namespace: string, name: string, timeoutMs = READABLE_WAIT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const review = await client.create<KubeObject & { status?: { allowed?: boolean } }>({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      metadata: {},
      spec: { resourceAttributes: { namespace, verb: 'get', group: '', version: 'v1', resource: 'secrets', name } },
    } as unknown as KubeObject);
    if (review.status?.allowed) return;
    if (Date.now() >= deadline) {
      throw new Error(`Secret ${namespace}/${name} was created, but the operator has not named it in the portal's Secret Role within ${timeoutMs / 1000} s; check that the operator is running (its log says "wrote the key portal's Secret Role")`);
    }
    await new Promise((r) => setTimeout(r, READABLE_POLL_MS));
  }
}

/**
 * The issuer refused this user's refresh, or it failed for longer than the portal allows
 * (`failedClosed`: why): forget the token, remember the refusal (by whom and why), end their sessions.
 */
export async function markRefused(client: KubeRest, namespace: string, sub: string, at = new Date(), failedClosed?: string): Promise<void> {
  const by: RefusedBy = failedClosed ? 'fail-closed' : 'issuer';
  const reason = failedClosed ?? 'the identity provider refused the refresh (invalid_grant)';
  await client.mergePatch(
    objectRef('v1', 'Secret', userSecretName(sub), namespace),
    { data: { refreshToken: null, refusedAt: b64(at.toISOString()), refusedBy: b64(by), refusedReason: b64(reason), sessionGeneration: b64(newGeneration()), ...CLEAR_FAILURES } },
    { fieldManager: FIELD_MANAGER },
  );
}

/** The same token sealed with the newest session key, so the older key can be dropped (rotation). */
export async function resealRefreshToken(client: KubeRest, namespace: string, key: SessionKeys, sub: string, refreshToken: string): Promise<void> {
  const sealed = seal(key, PURPOSE, { token: refreshToken, exp: Math.floor(Date.now() / 1000) + STORE_SECONDS });
  await client.mergePatch(objectRef('v1', 'Secret', userSecretName(sub), namespace), { data: { refreshToken: b64(sealed) } }, { fieldManager: FIELD_MANAGER });
}

/** One more failed group refresh of the user, failing since `since`. */
export async function recordRefreshFailure(client: KubeRest, namespace: string, sub: string, since: Date, failures: number): Promise<void> {
  await client.mergePatch(objectRef('v1', 'Secret', userSecretName(sub), namespace), { data: { refreshFailingSince: b64(since.toISOString()), refreshFailures: b64(String(failures)) } }, { fieldManager: FIELD_MANAGER });
}

/** The user's group refresh worked again. */
export async function clearRefreshFailures(client: KubeRest, namespace: string, sub: string): Promise<void> {
  await client.mergePatch(objectRef('v1', 'Secret', userSecretName(sub), namespace), { data: CLEAR_FAILURES }, { fieldManager: FIELD_MANAGER });
}

/** Whether the user's stored refresh token can be used: the group refresh can only take keys back from users with one. */
export type RefreshTokenState = 'readable' | 'missing' | 'unreadable';

/** What a mint checks first: the refusal mark, and whether the group refresh can track the user. */
export async function mintStanding(client: KubeRest, namespace: string, keys: SessionKeys, sub: string): Promise<{ refused: boolean; refreshToken: RefreshTokenState }> {
  const secret = await client.get<SecretObject>(objectRef('v1', 'Secret', userSecretName(sub), namespace));
  const sealed = unb64(secret?.data?.refreshToken);
  const refreshToken: RefreshTokenState = !sealed ? 'missing' : unsealWith(keys, PURPOSE, sealed) ? 'readable' : 'unreadable';
  return { refused: !!secret?.data?.refusedAt, refreshToken };
}

/** Whether the issuer refused this user's last refresh (they must log in again before minting). */
export async function isRefused(client: KubeRest, namespace: string, sub: string): Promise<boolean> {
  const secret = await client.get<SecretObject>(objectRef('v1', 'Secret', userSecretName(sub), namespace));
  return !!secret?.data?.refusedAt;
}
