/* global process, console */
// A real OpenID Provider for the key portal's integration test: panva's oidc-provider (ESM-only,
// so it runs as its own small Node process rather than inside Jest) on 127.0.0.1. Accounts come
// from a JSON file the test rewrites, read on every lookup, so a user's groups can change (or the
// user can disappear) between logins and refreshes, as at a real issuer.
// Usage: node oidc-test-provider.mjs  (env: ACCOUNTS_FILE, REDIRECT_URI, CLIENT_ID, CLIENT_SECRET;
// TLS_CERT_FILE and TLS_KEY_FILE to serve https instead, as an issuer with a private CA does;
// HOST to listen elsewhere than 127.0.0.1)
// Prints {"issuer":"http(s)://<HOST>:<port>"} on its first stdout line.
import { readFileSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import Provider from 'oidc-provider';

const { ACCOUNTS_FILE, REDIRECT_URI, CLIENT_ID, CLIENT_SECRET, TLS_CERT_FILE, TLS_KEY_FILE } = process.env;
// The end-to-end suite serves it on the node address, where the portal pod reaches it.
const HOST = process.env.HOST || '127.0.0.1';
const accounts = () => JSON.parse(readFileSync(ACCOUNTS_FILE, 'utf8'));

const tls = TLS_CERT_FILE && TLS_KEY_FILE;
const server = tls ? https.createServer({ cert: readFileSync(TLS_CERT_FILE), key: readFileSync(TLS_KEY_FILE) }) : http.createServer();
await new Promise((resolve) => server.listen(0, HOST, resolve));
const issuer = `${tls ? 'https' : 'http'}://${HOST}:${server.address().port}`;

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  async findAccount(_ctx, id) {
    const account = accounts()[id];
    if (!account) return undefined;
    return { accountId: id, claims: async () => ({ sub: id, preferred_username: account.username, email: `${account.username}@example.com`, groups: account.groups }) };
  },
  claims: { openid: ['sub'], profile: ['preferred_username', 'groups'], email: ['email'] },
  // Scope claims in the ID token too (otherwise only userinfo has them).
  conformIdTokenClaims: false,
  features: { devInteractions: { enabled: true } },
  pkce: { required: () => true },
  // Refresh tokens whatever the prompt, as Keycloak does for offline_access.
  issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  // The refresh must fail once the account is gone (invalid_grant), as at a real issuer.
  // Consent is implied: every scope and claim asked for is granted.
  async loadExistingGrant(ctx) {
    const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
    grant.addOIDCScope(ctx.oidc.params?.scope ?? 'openid');
    grant.addOIDCClaims(['preferred_username', 'groups', 'email']);
    await grant.save();
    return grant;
  },
  cookies: { keys: ['nls-portal-test-provider-cookie-key'] },
  ttl: { AccessToken: 300, IdToken: 300, RefreshToken: 86400, Session: 3600, Grant: 86400, Interaction: 600 },
});
provider.on('server_error', (_ctx, err) => console.error(`provider server_error: ${err.message}`));
server.on('request', provider.callback());
console.log(JSON.stringify({ issuer }));
