// Sessions live in the browser, sealed: AES-256-GCM over a JSON payload with an expiry, so a
// tampered or expired cookie simply does not open. A sealed cookie alone cannot be taken back, so
// each carries its user's session generation, which every request compares with the one stored
// server-side (user-tokens.ts): logout and a refusal at the issuer replace it.
// The keys come from a Secret every replica reads (created with one random 32-byte key if missing).
// It may hold several (issue 29, Medium 7): entries `key` and `key-<suffix>`, ordered by name; the
// last (newest) seals, every one opens. Rotation adds a key and later drops the oldest, so the
// refresh tokens sealed under the old key stay readable until the group refresh re-seals them.
// Two cookies, both `__Host-` (Secure, Path=/, no Domain): the session (≤ 8 h) and a short-lived
// pre-login cookie holding the OIDC state, nonce and PKCE verifier between redirect and callback.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { KubeRest, isConflict, objectRef } from '../kube/rest';

export const SESSION_COOKIE = '__Host-nls-portal-session';
export const LOGIN_COOKIE = '__Host-nls-portal-login';
export const SESSION_MAX_SECONDS = 8 * 3600;
export const LOGIN_MAX_SECONDS = 600;
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface Session {
  readonly sub: string;
  readonly username: string;
  readonly groups: readonly string[];
  /** Per-session token every state-changing form and API call must echo. */
  readonly csrf: string;
  /** The user's session generation at login; the session ends when the stored one changes. */
  readonly generation: string;
  /** Unix seconds. */
  readonly exp: number;
}

export interface PendingLogin {
  readonly state: string;
  readonly nonce: string;
  readonly verifier: string;
  /** Path to return to after login (same-origin only). */
  readonly returnTo: string;
  readonly exp: number;
}

/** The session keys, oldest first: the last seals, every one opens. A single Buffer is a ring of one. */
export type SessionKeys = Buffer | readonly Buffer[];

const ring = (keys: SessionKeys): readonly Buffer[] => (Buffer.isBuffer(keys) ? [keys] : keys);

/** `purpose` is bound into the ciphertext, so a pre-login cookie can never be replayed as a session. */
export function seal(keys: SessionKeys, purpose: string, payload: object): string {
  const all = ring(keys);
  const key = all[all.length - 1];
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(purpose));
  const body = Buffer.concat([cipher.update(JSON.stringify(payload), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

/** The payload, or undefined when the value was tampered with, sealed for another purpose or under no key of the ring, or expired. */
export function unseal<T extends { exp: number }>(keys: SessionKeys, purpose: string, value: string | undefined, nowSeconds = Date.now() / 1000): T | undefined {
  return unsealWith<T>(keys, purpose, value, nowSeconds)?.payload;
}

/** As `unseal`, also saying whether the newest key sealed it (else the group refresh re-seals it). */
export function unsealWith<T extends { exp: number }>(keys: SessionKeys, purpose: string, value: string | undefined, nowSeconds = Date.now() / 1000): { payload: T; newest: boolean } | undefined {
  if (!value) return undefined;
  const raw = Buffer.from(value, 'base64url');
  if (raw.length <= IV_BYTES + TAG_BYTES) return undefined;
  const all = ring(keys);
  // Newest first: after a rotation almost everything is sealed under it.
  for (let i = all.length - 1; i >= 0; i--) {
    const payload = openWith<T>(all[i], purpose, raw, nowSeconds);
    if (payload) return { payload, newest: i === all.length - 1 };
  }
  return undefined;
}

function openWith<T extends { exp: number }>(key: Buffer, purpose: string, raw: Buffer, nowSeconds: number): T | undefined {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(purpose));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    const text = Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    const payload = JSON.parse(text) as T;
    if (typeof payload.exp !== 'number' || payload.exp <= nowSeconds) return undefined;
    return payload;
  } catch {
    return undefined;
  }
}

/** A session for a user who just logged in. */
export function newSession(user: { sub: string; username: string; groups: readonly string[]; generation: string }, nowSeconds = Date.now() / 1000, maxSeconds = SESSION_MAX_SECONDS): Session {
  return { sub: user.sub, username: user.username, groups: [...user.groups], generation: user.generation, csrf: randomBytes(24).toString('base64url'), exp: Math.floor(nowSeconds + Math.min(maxSeconds, SESSION_MAX_SECONDS)) };
}

/** Data entries of the session Secret that hold keys: `key` (the first one) and `key-<suffix>`. */
const KEY_ENTRY = /^key(-[A-Za-z0-9._-]+)?$/;

/**
 * The session keys from Secret `name` (entries `key` and `key-<suffix>`, 32 bytes each, base64),
 * oldest first by entry name, so `key-<UTC timestamp>` entries added later are newer. The Secret
 * is created with one random `key` if missing; replicas racing to create it all read the winner.
 */
export async function loadSessionKeys(client: KubeRest, namespace: string, name: string): Promise<Buffer[]> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const secret = await client.get<{ apiVersion: string; kind: string; metadata: { name: string }; data?: Record<string, string> }>(objectRef('v1', 'Secret', name, namespace));
    if (secret) {
      const entries = Object.keys(secret.data ?? {}).filter((k) => KEY_ENTRY.test(k)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      if (entries.length === 0) throw new Error(`Secret ${namespace}/${name}: no session key; add an entry key-<UTC timestamp> holding ${KEY_BYTES} random bytes (base64), see docs/key-portal.md "Rotating the session key"`);
      return entries.map((entry) => {
        const key = Buffer.from(secret.data?.[entry] ?? '', 'base64');
        if (key.length !== KEY_BYTES) throw new Error(`Secret ${namespace}/${name}: data.${entry} must hold ${KEY_BYTES} bytes (base64); replace or remove that entry (docs/key-portal.md "Rotating the session key")`);
        return key;
      });
    }
    try {
      await client.create(
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name, namespace, labels: { 'app.kubernetes.io/part-of': 'nebari-llm-serving', 'app.kubernetes.io/component': 'key-portal' } },
          type: 'Opaque',
          data: { key: randomBytes(KEY_BYTES).toString('base64') },
        } as never,
        { fieldManager: 'nls-portal' },
      );
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
  }
  throw new Error(`Secret ${namespace}/${name}: could not read or create the session key`);
}
