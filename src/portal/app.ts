// The portal's HTTP surface (Hono). Pages are server-rendered HTML with plain forms; /api/* is the
// same functionality as JSON. No session: pages redirect to the login, /api/* answers 401. Every
// state change passes the CSRF check (csrf.ts). A user only ever sees and revokes their own keys
// (someone else's key id answers 404, as if it did not exist); admin-group members see and revoke
// all keys and read the audit log. Every request with a session is checked against the user's
// server-side state first (user-tokens.ts): a session of a user who logged out or whom the issuer
// refused is no session, and authorization uses the user's current groups (those of the latest
// group refresh), not the ones sealed into the cookie at login.
import { Context, Hono } from 'hono';
import { getCookie, setCookie, deleteCookie } from 'hono/cookie';
import { secureHeaders } from 'hono/secure-headers';
import { bodyLimit } from 'hono/body-limit';
import { KubeRest } from '../kube/rest';
import { Logger } from '../runtime/log';
import { ModelRef } from '../translate/keys/api-keys';
import { PortalConfig } from './config';
import { CSRF_FIELD, CSRF_HEADER, checkStateChange, isStateChange } from './csrf';
import { MintRefusedError, ModelKey, listAllKeys, mintPortalKey, modelGrant, ownedBy, readAudit, revokePortalKey } from './keys';
import { PortalModel, listModels } from './models';
import { OidcUser } from './oidc';
import { LOGIN_COOKIE, LOGIN_MAX_SECONDS, PendingLogin, SESSION_COOKIE, Session, SessionKeys, newSession, seal, unseal } from './session';
import { UserState, endSessions, mintStanding, readUserState, recordLogin } from './user-tokens';
import { tierRefusal, tiersFor } from './tiers';
import { KeyLimitError } from '../translate/keys/limits';
import { STYLE_HASH, Viewer, page } from './pages/layout';
import { modelsPage } from './pages/models';
import { COPY_SCRIPT, mintedPage } from './pages/minted';
import { adminKeysPage, myKeysPage } from './pages/keys';
import { usagePage, usageUnavailablePage } from './pages/usage';
import { adminTotals, NO_PROMETHEUS, readKeyUsage } from './usage';
import { PrometheusError } from '../usage/prometheus-usage';
import { auditPage, errorPage } from './pages/audit';
import { html } from './pages/html';
import type { PortalMetrics } from './metrics';

export interface PortalLogin {
  startLogin(returnTo: string): Promise<{ url: URL; pending: PendingLogin }>;
  finishLogin(callbackUrl: URL, pending: PendingLogin): Promise<OidcUser>;
}

export interface PortalDeps {
  readonly config: PortalConfig;
  readonly client: KubeRest;
  /** The session keys, oldest first (the newest seals). */
  readonly sessionKey: SessionKeys;
  /** Undefined until OIDC discovery has succeeded (the portal is not ready before). */
  readonly login: () => PortalLogin | undefined;
  readonly ready: () => boolean;
  readonly log: Logger;
  /** The server-side session state; defaults to the per-user Secrets (`storedUsers`). */
  readonly users?: PortalUsers;
  /** Login and mint counters (src/portal/metrics.ts); absent in tests that do not read them. */
  readonly metrics?: Pick<PortalMetrics, 'logins' | 'keysMinted'>;
}

/** The server-side half of sessions: per user, a session generation, a refusal mark and the current groups. */
export interface PortalUsers {
  /** Stores the login and returns the session generation the new cookie carries. */
  recordLogin(user: OidcUser): Promise<string>;
  state(sub: string): Promise<UserState | undefined>;
  /** Logout: every session of the user ends. */
  endSessions(sub: string): Promise<void>;
}

export function storedUsers(client: KubeRest, namespace: string, sessionKey: SessionKeys): PortalUsers {
  return {
    recordLogin: (user) => recordLogin(client, namespace, sessionKey, user),
    state: (sub) => readUserState(client, namespace, sub),
    endSessions: (sub) => endSessions(client, namespace, sub),
  };
}

/** Why a session that opens is still refused, or undefined when it is live. */
export function sessionEnded(session: Pick<Session, 'generation'>, state: UserState | undefined): string | undefined {
  if (!state) return 'the portal has no record of this login';
  if (state.refused) return state.refusedBy === 'fail-closed' ? 'the identity provider could not confirm your access for too long' : 'the identity provider refused the login';
  if (!session.generation || state.generation !== session.generation) return 'logged out (or ended by the identity provider)';
  return undefined;
}

type Env = { Variables: { session: Session; form: Record<string, string> } };

const SESSION_PURPOSE = 'session';
/** A cookie's name, value and attributes must stay under 4096 bytes in browsers. */
const MAX_COOKIE_VALUE = 3800;
const LOGIN_PURPOSE = 'login';

/** A same-origin path to come back to after login; anything else means the home page. */
export function safeReturnTo(value: string | undefined): string {
  return value && /^\/(?![/\\])[^\s]*$/.test(value) ? value : '/';
}

export function isAdmin(config: Pick<PortalConfig, 'adminGroups'>, groups: readonly string[]): boolean {
  return config.adminGroups.some((g) => groups.includes(g));
}

/** Pure: the models a user may see (their groups, or public). */
export function visibleModels(models: readonly PortalModel[], groups: readonly string[]): PortalModel[] {
  return models.filter((m) => modelGrant(m, groups).allowed);
}

function parseModelRef(value: string | undefined, namespace: string): ModelRef | undefined {
  const m = /^(LLMModel|PassthroughModel)\/([a-z0-9]([-a-z0-9.]*[a-z0-9])?)$/.exec(value ?? '');
  return m ? { kind: m[1] as ModelRef['kind'], name: m[2], namespace } : undefined;
}

/**
 * Why a user may not mint with this refresh-token state, or undefined. A key is only as revocable
 * as its owner is checkable: without a readable refresh token the group refresh could never learn
 * that they left a group or were disabled, so the key would live until its expiry.
 */
export function noRefreshTokenRefusal(state: 'readable' | 'missing' | 'unreadable'): string | undefined {
  if (state === 'missing') {
    return 'the identity provider gave the portal no refresh token at your login, so your keys could not be revoked when you lose access; keys are minted only for logins with one. Ask the platform team to let the portal\'s OIDC client issue refresh tokens (scope offline_access, NLS_PORTAL_OIDC_SCOPES), then log out and log in again';
  }
  if (state === 'unreadable') return 'the refresh token stored at your login can no longer be read (the portal\'s session key was replaced); log out and log in again';
  return undefined;
}

export class RequestError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 429,
    message: string,
  ) {
    super(message);
  }
}

export function createPortalApp(deps: PortalDeps): Hono<Env> {
  const { config, client, sessionKey, log } = deps;
  const users = deps.users ?? storedUsers(client, config.namespace, sessionKey);
  const origin = new URL(config.url).origin;
  const app = new Hono<Env>();

  app.use(
    '*',
    secureHeaders({
      contentSecurityPolicy: {
        defaultSrc: ["'none'"],
        scriptSrc: ["'self'"],
        styleSrc: [STYLE_HASH],
        imgSrc: ["'self'"],
        connectSrc: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
      },
      // Not no-referrer: with it Chromium sends `Origin: null` on the pages' own form posts, which the CSRF check refuses.
      referrerPolicy: 'same-origin',
      xFrameOptions: 'DENY',
    }),
  );
  app.use('*', async (c, next) => {
    await next();
    c.header('Cache-Control', 'no-store');
  });
  app.use('*', bodyLimit({ maxSize: 16 * 1024 }));

  app.get('/healthz', (c) => c.text('ok'));
  app.get('/readyz', (c) => (deps.ready() ? c.text('ready') : c.text('not ready', 503)));
  app.get('/static/copy.js', (c) => c.body(COPY_SCRIPT, 200, { 'Content-Type': 'text/javascript; charset=utf-8' }));

  const cookieOptions = (maxAge: number) => ({ secure: true, httpOnly: true, sameSite: 'Lax' as const, path: '/', maxAge });

  app.get('/auth/login', async (c) => {
    const login = deps.login();
    if (!login) return c.html(page('Not ready', undefined, errorPage('The identity provider is not reachable yet; try again in a moment.')), 503);
    const { url, pending } = await login.startLogin(safeReturnTo(c.req.query('returnTo')));
    setCookie(c, LOGIN_COOKIE, seal(sessionKey, LOGIN_PURPOSE, pending), cookieOptions(LOGIN_MAX_SECONDS));
    return c.redirect(url.toString(), 302);
  });

  /** Counts a failed login and passes its answer through. */
  const loginFailed = <T>(answer: T): T => {
    deps.metrics?.logins.inc({ outcome: 'failed' });
    return answer;
  };

  app.get('/auth/callback', async (c) => {
    const login = deps.login();
    const pending = unseal<PendingLogin>(sessionKey, LOGIN_PURPOSE, getCookie(c, LOGIN_COOKIE));
    deleteCookie(c, LOGIN_COOKIE, { secure: true, path: '/' });
    if (!login || !pending) return loginFailed(c.html(page('Login failed', undefined, html`<p class="error" role="alert">The login took too long or was started elsewhere.</p><p><a href="/auth/login">Log in again</a></p>`), 400));
    const callback = new URL(config.redirectUri);
    callback.search = new URL(c.req.url).search;
    let user: OidcUser;
    try {
      user = await login.finishLogin(callback, pending);
    } catch (err) {
      log.warn('login failed', { err });
      return loginFailed(c.html(page('Login failed', undefined, html`<p class="error" role="alert">The identity provider did not confirm the login.</p><p><a href="/auth/login">Log in again</a></p>`), 400));
    }
    let generation: string;
    try {
      generation = await users.recordLogin(user);
    } catch (err) {
      // Without the server-side record the session could not be checked (or ended): no session.
      log.warn('could not record the login', { user: user.username, err });
      return loginFailed(c.html(page('Login failed', undefined, html`<p class="error" role="alert">The login could not be recorded; try again in a moment.</p><p><a href="/auth/login">Log in again</a></p>`), 503));
    }
    let session = newSession({ ...user, generation });
    let sealed = seal(sessionKey, SESSION_PURPOSE, session);
    if (sealed.length > MAX_COOKIE_VALUE) {
      // Browsers drop cookies over 4 KB: keep only the groups that matter here (models' and admin groups).
      const relevant = new Set([...config.adminGroups, ...(await listModels(client, config.namespace)).flatMap((m) => m.access.groups ?? [])]);
      session = { ...session, groups: session.groups.filter((g) => relevant.has(g)) };
      sealed = seal(sessionKey, SESSION_PURPOSE, session);
      log.info('kept only the groups models and admin groups name in the session cookie', { user: user.username, groups: user.groups.length, kept: session.groups.length });
      if (sealed.length > MAX_COOKIE_VALUE) return loginFailed(c.html(page('Login failed', undefined, html`<p class="error" role="alert">You are in too many of the groups that grant models for a session cookie to hold them; ask the platform team.</p>`), 400));
    }
    setCookie(c, SESSION_COOKIE, sealed, cookieOptions(session.exp - Math.floor(Date.now() / 1000)));
    log.info('login', { user: user.username, groups: user.groups, admin: isAdmin(config, user.groups) });
    deps.metrics?.logins.inc({ outcome: 'success' });
    return c.redirect(pending.returnTo, 302);
  });

  // Where logout lands. Not the home page: without a session it redirects to the issuer, and the
  // CSP's form-action 'self' stops a form post's redirect chain at another origin.
  app.get('/auth/logged-out', (c) => c.html(page('Logged out', undefined, html`<p role="status">You are logged out, in every browser.</p><p><a href="/auth/login">Log in again</a></p>`)));

  // Everything below needs a live session.
  app.use('*', async (c, next) => {
    const notLoggedIn = (error: string) => {
      if (c.req.path.startsWith('/api/') || isStateChange(c.req.method)) return c.json({ error }, 401);
      return c.redirect(`/auth/login?returnTo=${encodeURIComponent(c.req.path + (new URL(c.req.url).search || ''))}`, 302);
    };
    const sealed = unseal<Session>(sessionKey, SESSION_PURPOSE, getCookie(c, SESSION_COOKIE));
    if (!sealed) return notLoggedIn('not logged in');
    // A cookie cannot be taken back: the server-side state decides whether it still counts.
    const state = await users.state(sealed.sub);
    const ended = sessionEnded(sealed, state);
    if (ended) {
      log.info('session refused', { user: sealed.username, path: c.req.path, reason: ended });
      deleteCookie(c, SESSION_COOKIE, { secure: true, path: '/' });
      return notLoggedIn(`your session has ended (${ended}); log in again`);
    }
    // The groups of the latest refresh, not of the login: a demoted admin is no admin any more.
    const session: Session = { ...sealed, groups: state?.groups ?? sealed.groups };
    c.set('session', session);
    if (isStateChange(c.req.method)) {
      const isForm = (c.req.header('content-type') ?? '').startsWith('application/x-www-form-urlencoded');
      const form = isForm ? ((await c.req.parseBody()) as Record<string, string>) : {};
      c.set('form', form);
      const decision = checkStateChange({ origin: c.req.header('origin'), secFetchSite: c.req.header('sec-fetch-site'), token: isForm ? form[CSRF_FIELD] : c.req.header(CSRF_HEADER) }, origin, session.csrf);
      if (!decision.ok) {
        log.warn('state change refused', { user: session.username, path: c.req.path, reason: decision.reason });
        return c.req.path.startsWith('/api/') ? c.json({ error: decision.reason }, 403) : c.html(page('Refused', viewer(session), errorPage(decision.reason)), 403);
      }
    }
    return next();
  });

  const viewer = (s: Session): Viewer => ({ username: s.username, isAdmin: isAdmin(config, s.groups), csrf: s.csrf });

  app.onError((err, c) => {
    const session = c.get('session');
    if (err instanceof RequestError) {
      return c.req.path.startsWith('/api/') ? c.json({ error: err.message }, err.status) : c.html(page(err.status === 404 ? 'Not found' : err.status === 403 || err.status === 401 ? 'Not allowed' : 'Cannot do that', session && viewer(session), errorPage(err.message)), err.status);
    }
    log.error('request failed', { path: c.req.path, err });
    return c.req.path.startsWith('/api/') ? c.json({ error: 'internal error' }, 500) : c.html(page('Something went wrong', session && viewer(session), errorPage('Something went wrong; try again.')), 500);
  });

  app.post('/auth/logout', async (c) => {
    // Ends every session of the user, not just this browser's cookie (a copied cookie stops working too).
    await users.endSessions(c.get('session').sub);
    deleteCookie(c, SESSION_COOKIE, { secure: true, path: '/' });
    return c.redirect('/auth/logged-out', 303);
  });

  const userModels = async (s: Session) => visibleModels(await listModels(client, config.namespace), s.groups);

  /** Validates and performs a mint; throws RequestError with a message naming the field. */
  async function mint(s: Session, input: { model?: string; description?: string; days?: string | number; tier?: string }) {
    const standing = await mintStanding(client, config.namespace, sessionKey, s.sub);
    // The issuer refused this user's refresh token since they logged in (disabled, deleted, logged out there).
    if (standing.refused) throw new RequestError(401, 'your login is no longer valid at the identity provider; log out and log in again');
    // Without a refresh token the group refresh cannot take the key back when the user loses access (issue 29, Medium 7).
    const untracked = noRefreshTokenRefusal(standing.refreshToken);
    if (untracked) throw new RequestError(403, untracked);
    const ref = parseModelRef(input.model, config.namespace);
    if (!ref) throw new RequestError(400, 'model: pick one of the listed models (Kind/name)');
    const model = (await listModels(client, config.namespace)).find((m) => m.ref.kind === ref.kind && m.ref.name === ref.name);
    const grant = model && modelGrant(model, s.groups);
    if (!model || !grant?.allowed) throw new RequestError(404, `model: ${ref.kind} ${ref.name} does not exist or your groups may not use it`);
    if (model.deleting || !model.externalEnabled) throw new RequestError(400, `model: ${ref.name} ${model.deleting ? 'is being deleted' : 'has no external (API key) endpoint'}; keys cannot be created for it`);
    const description = String(input.description ?? '').trim();
    if (!description || description.length > 200) throw new RequestError(400, 'description: give the key a name of 1 to 200 characters');
    const days = Number(input.days ?? config.keyExpiryDefaultDays);
    if (!Number.isInteger(days) || days < 1 || days > config.keyExpiryMaxDays) throw new RequestError(400, `days: the expiry must be a whole number of days from 1 to ${config.keyExpiryMaxDays}`);
    let tier: string | undefined;
    if (config.quotaTiers) {
      tier = input.tier ? String(input.tier) : config.quotaTiers.default;
      const chosen = config.quotaTiers.tiers.find((t) => t.name === tier);
      if (!chosen) throw new RequestError(400, `tier: "${tier}" is not one of ${config.quotaTiers.tiers.map((t) => t.name).join(', ')}`);
      const refusal = tierRefusal(chosen, s.groups);
      if (refusal) throw new RequestError(403, refusal);
    }
    const expiresAt = new Date(Date.now() + days * 86_400_000);
    const minted = await mintPortalKey(client, ref, { sub: s.sub, username: s.username, description, grant, expiresAt, tier, limits: config.keyLimits }).catch((err: unknown) => {
      if (err instanceof MintRefusedError) throw new RequestError(401, err.message);
      // Too many keys is the user's to fix (403); too many mints passes with time (429).
      if (err instanceof KeyLimitError) throw new RequestError(err.limit === 'mintsPerUserPerHour' ? 429 : 403, err.message);
      throw err;
    });
    log.info('minted key', { model: `${ref.kind}/${ref.name}`, clientId: minted.clientId, owner: s.username, expiresAt: expiresAt.toISOString(), tier });
    deps.metrics?.keysMinted.inc();
    return { model, minted, expiresAt };
  }

  /** Revokes a key the session may revoke; someone else's key is "not found" for a non-admin. */
  async function revoke(s: Session, modelValue: string | undefined, clientId: string | undefined): Promise<void> {
    const ref = parseModelRef(modelValue, config.namespace);
    if (!ref || !clientId) throw new RequestError(400, 'model and clientId are required');
    const admin = isAdmin(config, s.groups);
    const models = (await listModels(client, config.namespace)).filter((m) => m.ref.kind === ref.kind && m.ref.name === ref.name);
    const key = (await listAllKeys(client, models)).find((k) => k.record.clientId === clientId);
    if (!key || (!admin && !ownedBy(key.record, s))) throw new RequestError(404, `key ${clientId} of ${ref.name} not found`);
    const done = await revokePortalKey(client, ref, clientId, { actor: s.username, actorSubject: s.sub, reason: admin && !ownedBy(key.record, s) ? 'revoked by an administrator' : 'revoked by its owner' });
    if (!done) throw new RequestError(404, `key ${clientId} of ${ref.name} not found`);
    log.info('revoked key', { model: `${ref.kind}/${ref.name}`, clientId, owner: key.record.createdBy, by: s.username });
  }

  const ownKeys = async (s: Session): Promise<ModelKey[]> => (await listAllKeys(client, await listModels(client, config.namespace))).filter((k) => ownedBy(k.record, s));

  function requireAdmin(s: Session): void {
    if (!isAdmin(config, s.groups)) throw new RequestError(403, 'only members of the admin groups may see this');
  }

  // ---- pages
  // Only the tiers the user's groups allow are offered.
  const formOptions = (s: Session, error?: string) => ({
    csrf: s.csrf,
    defaultDays: config.keyExpiryDefaultDays,
    maxDays: config.keyExpiryMaxDays,
    tiers: config.quotaTiers && { default: config.quotaTiers.default, tiers: tiersFor(config.quotaTiers.tiers, s.groups) },
    error,
  });

  app.get('/', async (c) => {
    const s = c.get('session');
    return c.html(page('Models', viewer(s), modelsPage(await userModels(s), formOptions(s))));
  });

  app.post('/keys', async (c) => {
    const s = c.get('session');
    try {
      const { model, minted, expiresAt } = await mint(s, c.get('form'));
      return c.html(page('Your new key', viewer(s), mintedPage(model, minted.clientId, minted.apiKey, expiresAt, config.externalEndpoint)));
    } catch (err) {
      if (!(err instanceof RequestError)) throw err;
      return c.html(page('Models', viewer(s), modelsPage(await userModels(s), formOptions(s, err.message))), err.status);
    }
  });

  app.get('/keys', async (c) => {
    const s = c.get('session');
    return c.html(page('My keys', viewer(s), myKeysPage(await ownKeys(s), s.csrf, c.req.query('revoked') ? 'Key revoked.' : undefined)));
  });

  app.post('/keys/revoke', async (c) => {
    const s = c.get('session');
    const form = c.get('form');
    await revoke(s, form.model, form.clientId);
    const back = safeReturnTo(form.returnTo);
    return c.redirect(`${back}${back.includes('?') ? '&' : '?'}revoked=1`, 303);
  });

  app.get('/admin/keys', async (c) => {
    const s = c.get('session');
    requireAdmin(s);
    const models = await listModels(client, config.namespace);
    const user = c.req.query('user')?.trim() || undefined;
    const model = c.req.query('model')?.trim() || undefined;
    const keys = (await listAllKeys(client, model ? models.filter((m) => m.ref.name === model) : models)).filter((k) => !user || k.record.createdBy === user);
    return c.html(page('All keys', viewer(s), adminKeysPage(keys, s.csrf, { user, model }, [...new Set(models.map((m) => m.ref.name))], c.req.query('revoked') ? 'Key revoked.' : undefined)));
  });

  app.get('/admin/audit', async (c) => {
    const s = c.get('session');
    requireAdmin(s);
    const user = c.req.query('user')?.trim() || undefined;
    const model = c.req.query('model')?.trim() || undefined;
    const entries = await readAudit(client, config.namespace, { user, model });
    return c.html(page('Audit log', viewer(s), auditPage([...entries].reverse(), { user, model })));
  });

  /**
   * The viewer's usage (their own keys by subject) and, for admins asking for it, every key's, or
   * why usage cannot be shown: no Prometheus configured (503) or Prometheus unreadable or missing a
   * source (502). Never zeros in place of an answer.
   */
  async function usage(s: Session, all: boolean) {
    if (!config.prometheusUrl) return { error: NO_PROMETHEUS, status: 503 as const };
    const now = new Date();
    try {
      // Shares of the tiers only for the viewer's own keys: the admin totals do not show them.
      const own = await readKeyUsage(config.prometheusUrl, (await ownKeys(s)).map((k) => k.record.clientId), now, config.quotaTiers);
      const admin = all ? adminTotals((await readKeyUsage(config.prometheusUrl, undefined, now)).keys) : undefined;
      return { report: own, admin };
    } catch (err) {
      if (!(err instanceof PrometheusError)) throw err;
      log.warn('usage unavailable', { user: s.username, err: err.message });
      return { error: `usage is not available: ${err.message}`, status: 502 as const };
    }
  }

  app.get('/usage', async (c) => {
    const s = c.get('session');
    const u = await usage(s, isAdmin(config, s.groups));
    if ('error' in u) return c.html(page('Usage', viewer(s), usageUnavailablePage(u.error!)), u.status);
    return c.html(page('Usage', viewer(s), usagePage(u.report, u.admin)));
  });

  // ---- JSON API
  app.get('/api/models', async (c) => {
    const s = c.get('session');
    return c.json((await userModels(s)).map((m) => ({ kind: m.ref.kind, name: m.ref.name, servedName: m.servedName, access: m.access })));
  });

  app.get('/api/keys', async (c) => {
    const s = c.get('session');
    const all = c.req.query('all') === 'true';
    if (all) requireAdmin(s);
    const keys = all ? await listAllKeys(client, await listModels(client, config.namespace)) : await ownKeys(s);
    return c.json(keys.map((k) => ({ model: { kind: k.model.kind, name: k.model.name }, ...k.record })));
  });

  app.get('/api/usage', async (c) => {
    const s = c.get('session');
    const all = c.req.query('all') === 'true';
    if (all) requireAdmin(s);
    const u = await usage(s, all);
    if ('error' in u) return c.json({ error: u.error }, u.status);
    return c.json({ ...u.report, ...(u.admin ?? {}) });
  });

  app.post('/api/keys', async (c) => {
    const s = c.get('session');
    if (!(c.req.header('content-type') ?? '').startsWith('application/json')) throw new RequestError(400, 'send a JSON body (Content-Type: application/json)');
    const body = (await c.req.json().catch(() => ({}))) as Record<string, string | number>;
    const { model, minted, expiresAt } = await mint(s, body as never);
    return c.json({ model: { kind: model.ref.kind, name: model.ref.name }, servedName: model.servedName, clientId: minted.clientId, apiKey: minted.apiKey, expiresAt: expiresAt.toISOString() }, 201);
  });

  app.delete('/api/keys/:kind/:name/:clientId', async (c) => {
    const s = c.get('session');
    await revoke(s, `${c.req.param('kind')}/${c.req.param('name')}`, c.req.param('clientId'));
    return c.body(null, 204);
  });

  return app;
}

/** Re-exported for tests: the context type of handlers. */
export type PortalContext = Context<Env>;
