// The portal's HTTP rules that hold before any Kubernetes call: probes, security headers, no
// session (redirect for pages, 401 for the API), tampered cookies, CSRF refusals. The client points
// at a closed loopback port, so a request that reached the API server would fail the test.
import { randomBytes } from 'node:crypto';
import { createPortalApp } from '../../../src/portal/app';
import { portalConfigFromEnv } from '../../../src/portal/config';
import { SESSION_COOKIE, newSession, seal } from '../../../src/portal/session';
import { KubeRest } from '../../../src/kube/rest';
import { StaticConnection } from '../../../src/kube/connection';
import { createLogger } from '../../../src/runtime/log';

const key = randomBytes(32);
const config = portalConfigFromEnv({ NLS_PORTAL_NAMESPACE: 'llm', NLS_PORTAL_URL: 'https://keys.example.com', NLS_PORTAL_OIDC_ISSUER: 'https://sso.example.com', NLS_PORTAL_OIDC_CLIENT_ID: 'p', NLS_PORTAL_ADMIN_GROUPS: 'admins' });
const logs: string[] = [];
const client = new KubeRest(new StaticConnection({ server: 'https://127.0.0.1:1' }));
const app = createPortalApp({ config, client, sessionKey: key, login: () => undefined, ready: () => false, log: createLogger({ write: (l) => logs.push(l) }) });
const session = newSession({ sub: 'u1', username: 'alice', groups: ['team-a'] });
const cookie = `${SESSION_COOKIE}=${seal(key, 'session', session)}`;

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

  it('serves the copy script, the only script', async () => {
    const res = await app.request('/static/copy.js');
    expect(res.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(await res.text()).toContain('navigator.clipboard.writeText');
  });
});
