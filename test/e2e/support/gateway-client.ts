// A client of the gateway as users call it: HTTPS with SNI and Host set to the endpoint's host
// name, sent to the Envoy Service address (the run has no DNS outside the cluster), trusting the
// suite's CA, one connection per request (a kept-alive connection would pin a request to a proxy
// pod that a rollout is replacing). And a JWKS issuer for the internal endpoint's tokens.
import * as crypto from 'crypto';
import * as https from 'https';
import { issueServingCertificate, type KeyPair } from '../../../src/webhook/certificates';
import { NODE_ADDRESS } from '../../support/node';

export interface GatewayResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
  /** Milliseconds from sending the request until the first byte of the response body (or end). */
  readonly firstByteMs: number;
  readonly totalMs: number;
}

export interface GatewayTarget {
  readonly address: string;
  readonly hostname: string;
  readonly ca: string;
}

export function gatewayRequest(target: GatewayTarget, method: 'GET' | 'POST', path: string, opts: { token?: string; body?: unknown; headers?: Record<string, string>; timeoutMs?: number } = {}): Promise<GatewayResponse> {
  const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  const started = process.hrtime.bigint();
  const ms = () => Number(process.hrtime.bigint() - started) / 1e6;
  return new Promise((resolve, reject) => {
    const req = https.request({
      host: target.address, port: 443, method, path, servername: target.hostname, ca: target.ca, agent: false,
      timeout: opts.timeoutMs ?? 30000,
      headers: {
        host: target.hostname,
        ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
        ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
        ...opts.headers,
      },
    }, (res) => {
      const chunks: Buffer[] = [];
      let firstByteMs = 0;
      res.on('data', (c: Buffer) => {
        if (!firstByteMs) firstByteMs = ms();
        chunks.push(c);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), firstByteMs: firstByteMs || ms(), totalMs: ms() }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} https://${target.hostname}${path} timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}

export function chat(model: string, extra: Record<string, unknown> = {}): object {
  return { model, messages: [{ role: 'user', content: 'ping' }], max_tokens: 1, ...extra };
}

/** The client ID the issuer's tokens are minted for: the chart's `platform.jwt.audiences`. */
export const JWT_AUDIENCE = 'nebari-llm';

export interface JwtIssuer {
  readonly url: string;
  readonly jwksUri: string;
  /** A signed RS256 token for `aud` (default JWT_AUDIENCE); `expiresInS` below zero gives an expired one; without `sub`, a token with no subject. */
  token(claims: { sub?: string; groups: string[]; expiresInS?: number; aud?: string }): string;
  /** A token signed by a key the JWKS does not hold. */
  forged(claims: { sub: string; groups: string[] }): string;
  stop(): Promise<void>;
}

function b64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

function sign(key: crypto.KeyObject, kid: string, claims: object): string {
  const head = b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid }));
  const body = b64url(JSON.stringify(claims));
  return `${head}.${body}.${b64url(crypto.sign('RSA-SHA256', Buffer.from(`${head}.${body}`), key))}`;
}

/** An OIDC issuer reduced to what Envoy's JWT filter reads: the JWKS, over HTTPS on the node address. */
export async function startJwtIssuer(ca: KeyPair, hostname: string, port: number): Promise<JwtIssuer> {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const other = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const kid = 'e2e';
  const jwks = JSON.stringify({ keys: [{ ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' }] });
  const serving = issueServingCertificate({ ca, dnsNames: [hostname] });
  const server = https.createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    res.writeHead(req.url === '/jwks' ? 200 : 404, { 'content-type': 'application/json' });
    res.end(req.url === '/jwks' ? jwks : '{}');
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, NODE_ADDRESS, () => resolve()));
  const url = `https://${hostname}:${port}`;
  const claims = (c: { sub?: string; groups: string[]; expiresInS?: number; aud?: string }) => {
    const now = Math.floor(Date.now() / 1000);
    return { iss: url, aud: c.aud ?? JWT_AUDIENCE, ...(c.sub === undefined ? {} : { sub: c.sub }), groups: c.groups, iat: now, exp: now + (c.expiresInS ?? 600) };
  };
  return {
    url,
    jwksUri: `${url}/jwks`,
    token: (c) => sign(privateKey, kid, claims(c)),
    forged: (c) => sign(other, kid, claims(c)),
    stop: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
