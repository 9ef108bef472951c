// Each logged-in user's refresh token, kept so the group refresh can ask the issuer for their
// current groups while they are away. One Secret per user (labelled llm.nebari.dev/portal-user),
// the token sealed with the session key (AES-256-GCM), so reading the Secret alone does not give
// the token. The name derives from a hash of the OIDC subject: nothing about the user is in it.
// When the issuer refuses a refresh, the token is dropped and the Secret marked `refusedAt`: that
// user's sessions may not mint until they log in again (which stores a new token, clearing it).
import { createHash } from 'node:crypto';
import { KubeObject, KubeRest, isConflict, objectRef } from '../kube/rest';
import { seal, unseal } from './session';

export const LABEL_PORTAL_USER = 'llm.nebari.dev/portal-user';
const PURPOSE = 'refresh-token';
const FIELD_MANAGER = 'nls-portal';
/** Far beyond any refresh token's life; the issuer decides when it stops working. */
const STORE_SECONDS = 400 * 86_400;

export interface StoredUser {
  readonly secretName: string;
  readonly sub: string;
  readonly username: string;
  /** The issuer refused this user's refresh and they have not logged in since. */
  readonly refused: boolean;
  /** Absent once refused, or when sealed with an older session key. */
  readonly refreshToken?: string;
}

type SecretObject = KubeObject & { data?: Record<string, string> };

export function userHash(sub: string): string {
  return createHash('sha256').update(sub).digest('hex').slice(0, 40);
}

export function userSecretName(sub: string): string {
  return `nls-portal-user-${userHash(sub)}`;
}

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const unb64 = (s: string | undefined) => Buffer.from(s ?? '', 'base64').toString('utf8');

export async function saveRefreshToken(client: KubeRest, namespace: string, key: Buffer, user: { sub: string; username: string; refreshToken: string }): Promise<void> {
  const data = {
    subject: b64(user.sub),
    username: b64(user.username),
    refreshToken: b64(seal(key, PURPOSE, { token: user.refreshToken, exp: Math.floor(Date.now() / 1000) + STORE_SECONDS })),
  };
  const name = userSecretName(user.sub);
  // Logging in again lifts a refusal.
  const patch = { data: { ...data, refusedAt: null } };
  try {
    await client.create(
      { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace, labels: { [LABEL_PORTAL_USER]: userHash(user.sub), 'app.kubernetes.io/part-of': 'nebari-llm-serving', 'app.kubernetes.io/component': 'key-portal' } }, type: 'Opaque', data } as KubeObject,
      { fieldManager: FIELD_MANAGER },
    );
  } catch (err) {
    if (!isConflict(err)) throw err;
    await client.mergePatch(objectRef('v1', 'Secret', name, namespace), patch, { fieldManager: FIELD_MANAGER });
  }
}

/**
 * Every user the portal stored: refused ones (their token dropped) with `refused` set, the others
 * with the token when it still opens with `key` (a token sealed with an older key is left out).
 */
export async function listStoredUsers(client: KubeRest, namespace: string, key: Buffer): Promise<StoredUser[]> {
  const { items } = await client.list<SecretObject>('v1', 'Secret', { namespace, labelSelector: LABEL_PORTAL_USER });
  const users: StoredUser[] = [];
  for (const s of items) {
    const sub = unb64(s.data?.subject);
    if (!sub) continue;
    const opened = unseal<{ token: string; exp: number }>(key, PURPOSE, unb64(s.data?.refreshToken));
    users.push({ secretName: s.metadata.name, sub, username: unb64(s.data?.username), refused: !!s.data?.refusedAt, ...(opened ? { refreshToken: opened.token } : {}) });
  }
  return users;
}

/** The issuer refused this user's refresh: forget the token, remember the refusal. */
export async function markRefused(client: KubeRest, namespace: string, sub: string, at = new Date()): Promise<void> {
  await client.mergePatch(objectRef('v1', 'Secret', userSecretName(sub), namespace), { data: { refreshToken: null, refusedAt: b64(at.toISOString()) } }, { fieldManager: FIELD_MANAGER });
}

/** Whether the issuer refused this user's last refresh (they must log in again before minting). */
export async function isRefused(client: KubeRest, namespace: string, sub: string): Promise<boolean> {
  const secret = await client.get<SecretObject>(objectRef('v1', 'Secret', userSecretName(sub), namespace));
  return !!secret?.data?.refusedAt;
}
