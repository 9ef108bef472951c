// The portal's HTTP rules that hold before any Kubernetes call: probes, security headers, no
// session (redirect for pages, 401 for the API), tampered cookies, CSRF refusals, and the
// server-side session state (issue 29, Medium 5: logout, refusal and demotion end what a cookie
// may do), here kept in memory. The client points at a closed loopback port, so a request that
// reached the API server would fail the test.
import { randomBytes } from 'node:crypto';
import { PortalUsers, createPortalApp } from '../../../src/portal/app';
import { portalConfigFromEnv } from '../../../src/portal/config';
import { SESSION_COOKIE, newSession, seal } from '../../../src/portal/session';
import { KubeRest } from '../../../src/kube/rest';
import { StaticConnection } from '../../../src/kube/connection';
import { createLogger } from '../../../src/runtime/log';
import { UserState } from '../../../src/portal/user-tokens';
import { portalMetrics } from '../../../src/portal/metrics';
import { NO_PROMETHEUS } from '../../../src/portal/usage';

const key = randomBytes(32);
const config = portalConfigFromEnv({ NLS_PORTAL_NAMESPACE: 'llm', NLS_PORTAL_URL: 'https://keys.example.com', NLS_PORTAL_OIDC_ISSUER: 'https://sso.example.com', NLS_PORTAL_OIDC_CLIENT_ID: 'p', NLS_PORTAL_ADMIN_GROUPS: 'admins' });
const logs: string[] = [];
const client = new KubeRest(new StaticConnection({ server: 'https://127.0.0.1:1' }));
/** What the per-user Secrets hold, by subject. */
const states = new Map<string, UserState>();
const users: PortalUsers = {
  recordLogin: async () => {
    throw new Error('no logins in this test');
  },
  state: async (sub) => states.get(sub),
  endSessions: async (sub) => {
    states.set(sub, { ...states.get(sub)!, generation: randomBytes(6).toString('hex') });
  },
};
const app = createPortalApp({ config, client, sessionKey: key, login: () => undefined, ready: () => false, log: createLogger({ write: (l) => logs.push(l) }), users });
const session = newSession({ sub: 'u1', username: 'alice', groups: ['team-a'], generation: 'g-alice' });
const cookie = `${SESSION_COOKIE}=${seal(key, 'session', session)}`;
states.set('u1', { refused: false, generation: 'g-alice', groups: ['team-a'] });

/** A fresh logged-in user: their state and a cookie of their session. */
function loggedIn(sub: string, groups: string[]) {
  const s = newSession({ sub, username: sub, groups, generation: `g-${sub}` });
  states.set(sub, { refused: false, generation: s.generation, groups });
  return { session: s, cookie: `${SESSION_COOKIE}=${seal(key, 'session', s)}` };
}
const sameOrigin = (s: { csrf: string }) => ({ origin: 'https://keys.example.com', 'x-csrf-token': s.csrf });

afterAll(() => client.close());

describe('portal app', () => {
  it('answers the probes; not ready before OIDC discovery', async () => {
    expect((await app.request('/healthz')).status).toBe(200);
    expect((await app.request('/readyz')).status).toBe(503);
    expect((await app.request('/auth/login')).status).toBe(503);
  });

  it('sends a strict CSP and the other security headers', async () => {
    const res = await app.request('/healthz');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toMatch(/style-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('strict-transport-security')).toMatch(/max-age=/);
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('sends pages without a session to the login, and answers 401 to the API and to state changes', async () => {
    const res = await app.request('/admin/keys?user=bob');
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/auth/login?returnTo=%2Fadmin%2Fkeys%3Fuser%3Dbob');
    expect((await app.request('/api/keys')).status).toBe(401);
    expect((await app.request('/keys/revoke', { method: 'POST', headers: { origin: 'https://keys.example.com' } })).status).toBe(401);
    // A tampered cookie is no session.
    expect((await app.request('/api/keys', { headers: { cookie: cookie.slice(0, -2) + 'xx' } })).status).toBe(401);
  });

  const post = (headers: Record<string, string>, body: Record<string, string>) =>
    app.request('/keys/revoke', { method: 'POST', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(body).toString() });

  it('refuses state changes from another origin, without Origin, or with a missing or forged CSRF token', async () => {
    const form = { model: 'PassthroughModel/a', clientId: 'x' };
    expect((await post({ origin: 'https://evil.example.com' }, { ...form, csrf: session.csrf })).status).toBe(403);
    expect((await post({}, { ...form, csrf: session.csrf })).status).toBe(403);
    expect((await post({ 'sec-fetch-site': 'cross-site' }, { ...form, csrf: session.csrf })).status).toBe(403);
    expect((await post({ origin: 'https://keys.example.com' }, form)).status).toBe(403);
    expect((await post({ origin: 'https://keys.example.com' }, { ...form, csrf: 'forged' })).status).toBe(403);
    const api = await app.request('/api/keys/PassthroughModel/a/x', { method: 'DELETE', headers: { cookie, origin: 'https://keys.example.com', 'x-csrf-token': 'forged' } });
    expect(api.status).toBe(403);
    expect(await api.json()).toEqual({ error: 'request refused: the CSRF token does not match this session; reload the page and try again' });
    expect(logs.filter((l) => l.includes('state change refused')).length).toBe(6);
  });

  it('keeps non-admins out of the admin pages', async () => {
    const res = await app.request('/admin/audit', { headers: { cookie } });
    expect(res.status).toBe(403);
    expect(await res.text()).toContain('only members of the admin groups');
  });

  it('ends every session of a user at logout: a cookie captured before it is refused after it', async () => {
    const bob = loggedIn('bob', ['team-a']);
    const copied = bob.cookie;
    const logout = await app.request('/auth/logout', { method: 'POST', headers: { cookie: bob.cookie, 'content-type': 'application/x-www-form-urlencoded', origin: 'https://keys.example.com' }, body: new URLSearchParams({ csrf: bob.session.csrf }).toString() });
    expect(logout.status).toBe(303);
    expect(logout.headers.get('location')).toBe('/auth/logged-out');
    expect(await (await app.request('/auth/logged-out')).text()).toContain('You are logged out');
    const api = await app.request('/api/keys', { headers: { cookie: copied } });
    expect(api.status).toBe(401);
    expect(((await api.json()) as { error: string }).error).toMatch(/^your session has ended \(logged out/);
    expect(api.headers.get('set-cookie')).toMatch(/^__Host-nls-portal-session=;/);
    const pageRes = await app.request('/keys', { headers: { cookie: copied } });
    expect(pageRes.status).toBe(302);
    expect(pageRes.headers.get('location')).toBe('/auth/login?returnTo=%2Fkeys');
    expect((await app.request('/api/keys/PassthroughModel/a/x', { method: 'DELETE', headers: { cookie: copied, ...sameOrigin(bob.session) } })).status).toBe(401);
  });

  it('takes the admin views away from a demoted admin at their next request, whatever the cookie says', async () => {
    const root = loggedIn('root', ['admins', 'team-a']);
    // The group refresh stored root's current groups: no admin group any more.
    states.set('root', { ...states.get('root')!, groups: ['team-a'] });
    for (const path of ['/admin/keys', '/admin/audit', '/api/keys?all=true']) {
      const res = await app.request(path, { headers: { cookie: root.cookie } });
      expect(res.status).toBe(403);
    }
  });

  it('refuses every request of a session whose user the issuer refused, minting first', async () => {
    const carol = loggedIn('carol', ['team-a']);
    states.set('carol', { ...states.get('carol')!, refused: true });
    const mint = await app.request('/api/keys', { method: 'POST', headers: { cookie: carol.cookie, ...sameOrigin(carol.session), 'content-type': 'application/json' }, body: JSON.stringify({ model: 'PassthroughModel/a', description: 'x', days: 1 }) });
    expect(mint.status).toBe(401);
    expect(((await mint.json()) as { error: string }).error).toBe('your session has ended (the identity provider refused the login); log in again');
    expect((await app.request('/api/keys', { headers: { cookie: carol.cookie } })).status).toBe(401);
  });

  it('says why when the portal failed a session\'s user closed (issue 29, Medium 7)', async () => {
    const erin = loggedIn('erin', ['team-a']);
    states.set('erin', { ...states.get('erin')!, refused: true, refusedBy: 'fail-closed' });
    const res = await app.request('/api/keys', { headers: { cookie: erin.cookie } });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: string }).error).toBe('your session has ended (the identity provider could not confirm your access for too long); log in again');
  });

  it('refuses a session the portal has no record of, and one sealed before session generations existed', async () => {
    const dave = loggedIn('dave', ['team-a']);
    states.delete('dave');
    expect((await app.request('/api/keys', { headers: { cookie: dave.cookie } })).status).toBe(401);
    const { generation: _dropped, ...old } = newSession({ sub: 'u1', username: 'alice', groups: ['team-a'], generation: 'g-alice' });
    states.set('u1', { refused: false, groups: ['team-a'] });
    expect((await app.request('/api/keys', { headers: { cookie: `${SESSION_COOKIE}=${seal(key, 'session', old)}` } })).status).toBe(401);
    states.set('u1', { refused: false, generation: 'g-alice', groups: ['team-a'] });
  });

  it('serves the copy script, the only script', async () => {
    const res = await app.request('/static/copy.js');
    expect(res.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(await res.text()).toContain('navigator.clipboard.writeText');
  });

  it('says usage is not available without a configured Prometheus, in the JSON error and on the page, never zeros', async () => {
    const json = await app.request('/api/usage', { headers: { cookie } });
    expect(json.status).toBe(503);
    expect(await json.json()).toEqual({ error: NO_PROMETHEUS });
    const page = await app.request('/usage', { headers: { cookie } });
    expect(page.status).toBe(503);
    const text = await page.text();
    expect(text).toContain('set the chart value portal.prometheusURL');
    expect(text).not.toMatch(/<table/);
    // Without a session: 401, as the rest of the API; every key's usage: admins only.
    expect((await app.request('/api/usage')).status).toBe(401);
    const all = await app.request('/api/usage?all=true', { headers: { cookie } });
    expect(all.status).toBe(403);
    expect(await all.json()).toEqual({ error: 'only members of the admin groups may see this' });
  });
});

// Successful logins and mints are counted in test/integration/key-portal.test.ts, through a real provider.
test('a callback without a pending login answers 400 and counts a failed login; both outcomes exist from the start', async () => {
  const metrics = portalMetrics();
  const counted = createPortalApp({ config, client, sessionKey: key, login: () => undefined, ready: () => false, log: createLogger({ write: () => undefined }), users, metrics });
  const logins = async () => (await metrics.registry.getSingleMetricAsString('nls_portal_logins_total')).split('\n').filter((l) => l.startsWith('nls_portal_logins_total{'));
  expect(await logins()).toEqual(['nls_portal_logins_total{outcome="success"} 0', 'nls_portal_logins_total{outcome="failed"} 0']);
  const res = await counted.request('https://keys.example.com/auth/callback?code=c&state=s');
  expect(res.status).toBe(400);
  expect(await logins()).toEqual(['nls_portal_logins_total{outcome="success"} 0', 'nls_portal_logins_total{outcome="failed"} 1']);
});
