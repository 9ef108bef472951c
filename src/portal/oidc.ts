// The OIDC relying party (openid-client 6): discovery, the authorization code flow with PKCE
// (S256), state and nonce, the code exchange (which validates the ID token's claims: issuer,
// audience, expiry, nonce; not its signature, as the token comes from the token endpoint over
// verified TLS, OIDC Core 3.1.3.7) and refresh. Plain-http issuers are accepted only on loopback (tests).
import * as https from 'node:https';
import * as fs from 'node:fs';
import * as oidc from 'openid-client';
import { PortalConfig, isLoopbackUrl } from './config';
import { PendingLogin, LOGIN_MAX_SECONDS } from './session';

export interface OidcUser {
  readonly sub: string;
  readonly username: string;
  readonly groups: string[];
  readonly refreshToken?: string;
}

export class RefreshRefusedError extends Error {}

/** Only the strings of a groups claim (some issuers send `/team-a`, which is kept as is). */
export function groupsFromClaim(value: unknown): string[] {
  if (Array.isArray(value)) return [...new Set(value.filter((g): g is string => typeof g === 'string' && g.length > 0))].sort();
  if (typeof value === 'string' && value) return [value];
  return [];
}

/**
 * The name the portal shows and records as `createdBy` and as audit actor: `preferred_username`,
 * else `email` only when the issuer says it is verified (`email_verified: true`; an unverified
 * address is whatever the user typed), else `sub`. Never `name`, which users edit freely. Names
 * are for people to read: ownership and the audit log's `subject`/`actorSubject` use `sub`.
 */
export function usernameFromClaims(claims: Record<string, unknown>): string {
  const candidates = [claims.preferred_username, claims.email_verified === true ? claims.email : undefined];
  for (const v of candidates) {
    if (typeof v === 'string' && v.trim()) return v.trim();
  }
  return String(claims.sub);
}

/** fetch through node:https trusting `ca` (the issuer's private CA), for openid-client's customFetch. */
function fetchTrusting(ca: string): oidc.CustomFetch {
  return async (url, options) => {
    // The body may be a string, URLSearchParams or bytes: let Response serialize it.
    const body = options.body === undefined || options.body === null ? undefined : Buffer.from(await new Response(options.body as ConstructorParameters<typeof Response>[0]).arrayBuffer());
    return new Promise<Response>((resolve, reject) => {
      const headers = { ...options.headers, ...(body ? { 'content-length': String(body.length) } : {}) };
      const req = https.request(url, { method: options.method, headers, ca, signal: options.signal }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const out = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) out.set(k, Array.isArray(v) ? v.join(', ') : v);
          const status = res.statusCode ?? 500;
          resolve(new Response(status === 204 || status === 304 || chunks.length === 0 ? null : Buffer.concat(chunks), { status, headers: out }));
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  };
}

export class OidcClient {
  private constructor(
    private readonly config: oidc.Configuration,
    private readonly portal: PortalConfig,
  ) {}

  /** Discovery against the issuer; throws (and the portal stays unready) until it answers. */
  static async discover(portal: PortalConfig): Promise<OidcClient> {
    const issuer = new URL(portal.issuer);
    const ca = portal.caFile ? fs.readFileSync(portal.caFile, 'utf8') : undefined;
    const auth = portal.clientSecret ? oidc.ClientSecretBasic(portal.clientSecret) : oidc.None();
    const options: oidc.DiscoveryRequestOptions = {
      ...(issuer.protocol === 'http:' && isLoopbackUrl(issuer) ? { execute: [oidc.allowInsecureRequests] } : {}),
      ...(ca ? { [oidc.customFetch]: fetchTrusting(ca) } : {}),
    };
    const config = await oidc.discovery(issuer, portal.clientId, undefined, auth, options);
    if (ca) config[oidc.customFetch] = fetchTrusting(ca);
    return new OidcClient(config, portal);
  }

  /** Where to send the browser, and what the pre-login cookie must remember. */
  async startLogin(returnTo: string, nowSeconds = Date.now() / 1000): Promise<{ url: URL; pending: PendingLogin }> {
    const verifier = oidc.randomPKCECodeVerifier();
    const pending: PendingLogin = { state: oidc.randomState(), nonce: oidc.randomNonce(), verifier, returnTo, exp: Math.floor(nowSeconds + LOGIN_MAX_SECONDS) };
    const url = oidc.buildAuthorizationUrl(this.config, {
      redirect_uri: this.portal.redirectUri,
      scope: this.portal.scopes,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: pending.state,
      nonce: pending.nonce,
      // Some issuers (oidc-provider, Keycloak offline sessions) issue refresh tokens for offline_access only after consent.
      ...(this.portal.scopes.split(/\s+/).includes('offline_access') ? { prompt: 'consent' } : {}),
    });
    return { url, pending };
  }

  /** Exchanges the callback's code (checking state, nonce and PKCE) and returns who logged in. */
  async finishLogin(callbackUrl: URL, pending: PendingLogin): Promise<OidcUser> {
    const tokens = await oidc.authorizationCodeGrant(this.config, callbackUrl, { pkceCodeVerifier: pending.verifier, expectedState: pending.state, expectedNonce: pending.nonce, idTokenExpected: true });
    return this.userFrom(tokens);
  }

  /** Refreshes a stored refresh token; RefreshRefusedError when the issuer answers invalid_grant (user gone, session revoked). */
  async refresh(refreshToken: string, expectedSub: string): Promise<OidcUser> {
    let tokens: Awaited<ReturnType<typeof oidc.refreshTokenGrant>>;
    try {
      tokens = await oidc.refreshTokenGrant(this.config, refreshToken);
    } catch (err) {
      if (err instanceof oidc.ResponseBodyError && err.error === 'invalid_grant') throw new RefreshRefusedError(`the issuer refused the refresh token (invalid_grant)`);
      throw err;
    }
    const user = await this.userFrom(tokens, expectedSub);
    return { ...user, refreshToken: user.refreshToken ?? refreshToken };
  }

  private async userFrom(tokens: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers, expectedSub?: string): Promise<OidcUser> {
    let claims: Record<string, unknown> = { ...(tokens.claims() ?? {}) };
    const sub = String(claims.sub ?? expectedSub ?? '');
    if (!sub) throw new Error('the issuer returned no ID token subject');
    if (expectedSub && sub !== expectedSub) throw new Error('the refreshed ID token is for another subject');
    // Issuers that put groups only in userinfo: ask there.
    if (claims[this.portal.groupsClaim] === undefined && tokens.access_token) {
      claims = { ...claims, ...(await oidc.fetchUserInfo(this.config, tokens.access_token, sub)) };
    }
    return { sub, username: usernameFromClaims(claims), groups: groupsFromClaim(claims[this.portal.groupsClaim]), ...(tokens.refresh_token ? { refreshToken: tokens.refresh_token } : {}) };
  }
}
