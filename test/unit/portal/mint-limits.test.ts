// The portal's refusals of issue 29, Medium 8, through its HTTP API against an in-memory API
// server: a user at `portal.keyLimits.keysPerUserPerModel` live keys on a model gets 403, one at
// `mintsPerUserPerHour` mints gets 429, each naming the limit and the fix; a tier that names
// groups is refused (403, naming the tier and its groups) to users outside them and left out of
// their mint form; a tier without groups stays open to everyone.
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
const key = randomBytes(32);
const TIERS = { default: 'standard', tiers: [{ name: 'standard' }, { name: 'large', description: 'batch jobs', groups: ['batch', 'ml-admins'] }] };

async function portal(limits: { keys: number; mints: number }) {
  const kube = new MemoryKube();
  await kube.put({
    apiVersion: 'llm.nebari.dev/v1beta1',
    kind: 'PassthroughModel',
    metadata: { name: 'gpt', namespace: 'llm', uid: 'u1', finalizers: [CLEANUP_FINALIZER] },
    spec: { access: { groups: ['team-a', 'batch'] } },
  } as never);
  // The operator's key objects: the portal writes to them, never creates them (issue 29, Medium 6).
  const model = { kind: 'PassthroughModel' as const, name: 'gpt', namespace: 'llm' };
  await kube.put(desiredApiKeySecret(model));
  await kube.put(desiredApiKeyMetadataConfigMap(model));
  const config = portalConfigFromEnv({
    NLS_PORTAL_NAMESPACE: 'llm',
    NLS_PORTAL_URL: ORIGIN,
    NLS_PORTAL_OIDC_ISSUER: 'https://sso.example.com',
    NLS_PORTAL_OIDC_CLIENT_ID: 'p',
    NLS_PORTAL_QUOTA_TIERS: JSON.stringify(TIERS),
    NLS_PORTAL_KEYS_PER_USER_PER_MODEL: String(limits.keys),
    NLS_PORTAL_MINTS_PER_USER_PER_HOUR: String(limits.mints),
  });
  // The users' server-side session state (issue 29, Medium 5), kept in memory: logged in, not refused.
  const states = new Map<string, UserState>();
  const users: PortalUsers = {
    recordLogin: async () => {
      throw new Error('no logins in this test');
    },
    state: async (sub) => states.get(sub),
    endSessions: async () => undefined,
  };
  const app = createPortalApp({ config, client: kube, sessionKey: key, login: () => undefined, ready: () => true, log: createLogger({ write: () => undefined }), users });
  const as = (username: string, groups: string[]) => {
    const session = newSession({ sub: `sub-${username}`, username, groups, generation: `g-${username}` });
    states.set(session.sub, { refused: false, generation: session.generation, groups });
    const cookie = `${SESSION_COOKIE}=${seal(key, 'session', session)}`;
    // Their login stored a refresh token (issue 29, Medium 7: no mint without one).
    const stored = kube.put({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: userSecretName(session.sub), namespace: 'llm', labels: { [LABEL_PORTAL_USER]: userHash(session.sub) } },
      data: { subject: Buffer.from(session.sub).toString('base64'), refreshToken: Buffer.from(seal(key, 'refresh-token', { token: 'rt', exp: Date.now() / 1000 + 3600 })).toString('base64') },
    } as never);
    return {
      mint: async (body: Record<string, unknown>) => {
        await stored;
        const res = await app.request('/api/keys', {
          method: 'POST',
          headers: { cookie, origin: ORIGIN, [CSRF_HEADER]: session.csrf, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'PassthroughModel/gpt', description: 'a key', days: 1, ...body }),
        });
        return { status: res.status, body: (await res.json()) as { error?: string; clientId?: string } };
      },
      revoke: async (clientId: string) =>
        (await app.request(`/api/keys/PassthroughModel/gpt/${clientId}`, { method: 'DELETE', headers: { cookie, origin: ORIGIN, [CSRF_HEADER]: session.csrf } })).status,
      home: async () => (await app.request('/', { headers: { cookie } })).text(),
    };
  };
  return { kube, as };
}

describe('portal per-user limits', () => {
  it('refuses a mint at the live-key limit with 403, naming the limit and the fix; revoking a key makes room', async () => {
    const { as } = await portal({ keys: 2, mints: 100 });
    const alice = as('alice', ['team-a']);
    const first = await alice.mint({});
    expect(first.status).toBe(201);
    expect((await alice.mint({})).status).toBe(201);
    const third = await alice.mint({});
    expect(third).toEqual({
      status: 403,
      body: { error: 'alice already has 2 live API keys for PassthroughModel gpt (limit 2 per user per model, chart value portal.keyLimits.keysPerUserPerModel); revoke a key you no longer use, or ask an administrator to raise the limit' },
    });
    // Another user has their own count.
    expect((await as('bob', ['team-a']).mint({})).status).toBe(201);
    expect(await alice.revoke(first.body.clientId!)).toBe(204);
    expect((await alice.mint({})).status).toBe(201);
  });

  it('refuses a mint at the hourly mint limit with 429, even after the keys were revoked', async () => {
    const { as } = await portal({ keys: 100, mints: 2 });
    const alice = as('alice', ['team-a']);
    for (let i = 0; i < 2; i++) {
      const minted = await alice.mint({});
      expect(minted.status).toBe(201);
      expect(await alice.revoke(minted.body.clientId!)).toBe(204);
    }
    const refused = await alice.mint({});
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatch(/^alice minted 2 API keys in the last hour \(limit 2 per user per hour, chart value portal\.keyLimits\.mintsPerUserPerHour\); wait until .*Z, or ask an administrator$/);
  });
});

describe('quota tiers restricted to groups', () => {
  it('refuses a tier to users outside its groups, naming the tier and its groups, and does not offer it to them', async () => {
    const { kube, as } = await portal({ keys: 10, mints: 20 });
    const alice = as('alice', ['team-a']);
    const refused = await alice.mint({ tier: 'large' });
    expect(refused).toEqual({
      status: 403,
      body: { error: 'tier: "large" is only for members of groups batch, ml-admins; pick another tier, or ask an administrator to add you to one of them' },
    });
    // Nothing was written for the refused mint.
    expect(kube.requests.filter((r) => r.method !== 'GET')).toEqual([]);
    // A tier without groups is open to everyone (the default tier here).
    expect((await alice.mint({})).status).toBe(201);
    const home = await alice.home();
    expect(home).toContain('<option value="standard"');
    expect(home).not.toContain('<option value="large"');
    // A member of one of the tier's groups may mint in it and is offered it.
    const batch = as('bea', ['batch']);
    expect((await batch.mint({ tier: 'large' })).status).toBe(201);
    expect(await batch.home()).toContain('<option value="large"');
  });
});
