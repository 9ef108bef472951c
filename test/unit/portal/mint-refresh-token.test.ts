// Issue 29, Medium 7: a key is only as revocable as its owner is checkable. The group refresh can
// take a key back only from a user whose refresh token it can use, so the portal refuses (403) to
// mint for a user with no stored refresh token (the issuer gave none at login), naming why and the
// fix, or with one no session key opens any more; a token sealed with an older key of the ring
// still counts. Through the HTTP API against an in-memory API server (test/unit/api-keys/memory-kube.ts).
import { randomBytes } from 'node:crypto';
import { PortalUsers, createPortalApp } from '../../../src/portal/app';
import { LABEL_PORTAL_USER, UserState, userHash, userSecretName } from '../../../src/portal/user-tokens';
import { portalConfigFromEnv } from '../../../src/portal/config';
import { SESSION_COOKIE, newSession, seal } from '../../../src/portal/session';
import { CSRF_HEADER } from '../../../src/portal/csrf';
import { CLEANUP_FINALIZER } from '../../../src/api/common';
import { createLogger } from '../../../src/runtime/log';
import { MemoryKube } from '../api-keys/memory-kube';
import { desiredApiKeyMetadataConfigMap, desiredApiKeySecret } from '../../../src/translate/keys/api-keys';

const ORIGIN = 'https://keys.example.com';
const oldKey = randomBytes(32);
const newKey = randomBytes(32);
const droppedKey = randomBytes(32);
const b64 = (s: string) => Buffer.from(s).toString('base64');

async function setup(sessionKey: Buffer | Buffer[] = [oldKey, newKey]) {
  const kube = new MemoryKube();
  await kube.put({
    apiVersion: 'llm.nebari.dev/v1beta1',
    kind: 'PassthroughModel',
    metadata: { name: 'gpt', namespace: 'llm', uid: 'u1', finalizers: [CLEANUP_FINALIZER] },
    spec: { access: { groups: ['team-a'] } },
  } as never);
  // The operator's key objects: the portal writes to them, never creates them (issue 29, Medium 6).
  const model = { kind: 'PassthroughModel' as const, name: 'gpt', namespace: 'llm' };
  await kube.put(desiredApiKeySecret(model));
  await kube.put(desiredApiKeyMetadataConfigMap(model));
  const config = portalConfigFromEnv({ NLS_PORTAL_NAMESPACE: 'llm', NLS_PORTAL_URL: ORIGIN, NLS_PORTAL_OIDC_ISSUER: 'https://sso.example.com', NLS_PORTAL_OIDC_CLIENT_ID: 'p' });
  const states = new Map<string, UserState>();
  const users: PortalUsers = {
    recordLogin: async () => {
      throw new Error('no logins in this test');
    },
    state: async (sub) => states.get(sub),
    endSessions: async () => undefined,
  };
  // By default the ring after a rotation: the old key still opens, the new one seals.
  const app = createPortalApp({ config, client: kube, sessionKey, login: () => undefined, ready: () => true, log: createLogger({ write: () => undefined }), users });
  /** A logged-in user whose Secret holds `refreshToken` (sealed, or absent). */
  const as = async (username: string, refreshToken: string | undefined) => {
    const session = newSession({ sub: `sub-${username}`, username, groups: ['team-a'], generation: `g-${username}` });
    states.set(session.sub, { refused: false, generation: session.generation, groups: ['team-a'] });
    await kube.put({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: userSecretName(session.sub), namespace: 'llm', labels: { [LABEL_PORTAL_USER]: userHash(session.sub) } },
      data: { subject: b64(session.sub), username: b64(username), ...(refreshToken ? { refreshToken: b64(refreshToken) } : {}) },
    } as never);
    const res = await app.request('/api/keys', {
      method: 'POST',
      headers: { cookie: `${SESSION_COOKIE}=${seal(newKey, 'session', session)}`, origin: ORIGIN, [CSRF_HEADER]: session.csrf, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'PassthroughModel/gpt', description: 'a key', days: 1 }),
    });
    return { status: res.status, body: (await res.json()) as { error?: string; clientId?: string } };
  };
  return { kube, as };
}

const token = (key: Buffer) => seal(key, 'refresh-token', { token: 'rt', exp: Date.now() / 1000 + 3600 });

describe('minting needs a refresh token the group refresh can use', () => {
  it('refuses a user without a stored refresh token with 403, naming why and the fix, and writes nothing', async () => {
    const { kube, as } = await setup(newKey);
    const refused = await as('alice', undefined);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatch(/^the identity provider gave the portal no refresh token at your login, so your keys could not be revoked when you lose access;/);
    expect(refused.body.error).toContain('offline_access');
    expect(kube.requests.filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it('refuses a user whose stored refresh token no session key opens (log in again)', async () => {
    const { as } = await setup(newKey);
    const refused = await as('bob', token(droppedKey));
    expect(refused).toEqual({ status: 403, body: { error: "the refresh token stored at your login can no longer be read (the portal's session key was replaced); log out and log in again" } });
  });

  it('mints for users whose token opens with the newest key or an older key of the ring', async () => {
    const { as } = await setup();
    expect((await as('carol', token(newKey))).status).toBe(201);
    expect((await as('dave', token(oldKey))).status).toBe(201);
  });
});
