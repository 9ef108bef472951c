// Stand-in model providers for the data-plane tests: one HTTPS server on the node address with a
// certificate (from the suite's CA) for every stand-in host name, answering as OpenAI (chat
// completions, streamed or not, and the model list), Azure OpenAI (deployment paths with
// `api-version`), Anthropic (`/v1/messages`) and Bedrock (`/model/<id>/converse`) do. It records
// what reaches it, so tests assert on what the gateway sent upstream, not on what it answered.
import * as crypto from 'crypto';
import * as https from 'https';
import * as tls from 'tls';
import { issueCertificateAuthority, issueServingCertificate, type KeyPair } from '../../../src/webhook/certificates';
import { NODE_ADDRESS } from '../../support/node';

export interface UpstreamRequest {
  readonly method: string;
  readonly path: string;
  readonly host: string;
  readonly headers: Record<string, string>;
  /** The `model` field of the JSON body, if any. */
  readonly model?: string;
  readonly stream: boolean;
  /** The body as received. */
  readonly body: string;
}

export interface StandInProviders {
  readonly requests: UpstreamRequest[];
  /** Handshakes a client aborted (e.g. because it did not trust the certificate), by SNI name. */
  readonly tlsFailures: { servername: string; message: string }[];
  /** Requests whose `model` is `model`, in arrival order. */
  to(model: string): UpstreamRequest[];
  stop(): Promise<void>;
}

function openAiCompletion(model: string): object {
  return {
    id: 'chatcmpl-standin', object: 'chat.completion', created: 1767225600, model,
    choices: [{ index: 0, message: { role: 'assistant', content: 'pong' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
  };
}

/** The chunks of a streamed answer: three content pieces, then `[DONE]`. */
export const STREAM_PIECES = ['po', 'n', 'g'];

function streamChunks(model: string): string {
  const chunk = (delta: object, finish: string | null) => `data: ${JSON.stringify({ id: 'chatcmpl-standin', object: 'chat.completion.chunk', created: 1767225600, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  return chunk({ role: 'assistant', content: '' }, null) + STREAM_PIECES.map((p) => chunk({ content: p }, null)).join('') + chunk({}, 'stop') + 'data: [DONE]\n\n';
}

/**
 * `untrusted` host names get a certificate from a CA nobody trusts (the gateway must refuse them);
 * every other name the one from `ca`.
 */
export async function startStandInProviders(ca: KeyPair, hostnames: string[], untrusted: string[] = [], port = 443): Promise<StandInProviders> {
  const serving = issueServingCertificate({ ca, dnsNames: hostnames });
  const rogue = issueServingCertificate({ ca: issueCertificateAuthority({ commonName: 'untrusted stand-in CA' }), dnsNames: untrusted.length ? untrusted : ['unused.example'] });
  const rogueContext = tls.createSecureContext({ cert: rogue.certPem, key: rogue.keyPem });
  const requests: UpstreamRequest[] = [];
  const server = https.createServer({
    cert: serving.certPem, key: serving.keyPem,
    SNICallback: (name, done) => done(null, untrusted.includes(name) ? rogueContext : undefined),
  }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: { model?: string; stream?: boolean } = {};
      try {
        body = JSON.parse(raw || '{}') as typeof body;
      } catch {
        // not JSON: recorded without a model
      }
      const url = req.url ?? '/';
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : (v ?? '')]));
      // Azure and Bedrock name the model in the path; their bodies do not.
      const inPath = /^\/openai\/deployments\/([^/]+)\//.exec(url) ?? /^\/model\/([^/]+)\/converse$/.exec(url);
      const model = body.model ?? (inPath ? decodeURIComponent(inPath[1]) : undefined);
      requests.push({ method: req.method ?? '', path: url, host: headers.host ?? '', headers, model, stream: !!body.stream, body: raw });
      const json = (status: number, payload: object) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(payload));
      };
      if (req.method === 'GET' && url.endsWith('/models')) return json(200, { object: 'list', data: [] });
      if (url.startsWith('/v1/messages')) {
        return json(200, { id: 'msg_standin', type: 'message', role: 'assistant', model, content: [{ type: 'text', text: 'pong' }], stop_reason: 'end_turn', usage: { input_tokens: 3, output_tokens: 1 } });
      }
      if (/^\/model\/[^/]+\/converse$/.test(url)) {
        return json(200, { output: { message: { role: 'assistant', content: [{ text: 'pong' }] } }, stopReason: 'end_turn', usage: { inputTokens: 3, outputTokens: 1, totalTokens: 4 }, metrics: { latencyMs: 1 } });
      }
      if (url.includes('/chat/completions')) {
        if (body.stream) {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          return res.end(streamChunks(model ?? ''));
        }
        return json(200, openAiCompletion(model ?? ''));
      }
      json(404, { error: { message: `stand-in provider: no handler for ${req.method} ${url}` } });
    });
  });
  const tlsFailures: { servername: string; message: string }[] = [];
  server.on('tlsClientError', (err, socket) => tlsFailures.push({ servername: (socket as tls.TLSSocket).servername || '', message: err.message }));
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, NODE_ADDRESS, () => resolve()));
  return {
    requests,
    tlsFailures,
    to: (model) => requests.filter((r) => r.model === model),
    stop: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** RFC 3986 percent-encoding as SigV4 wants it (only unreserved characters stay). */
function uriEncode(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

const sha256 = (text: string) => crypto.createHash('sha256').update(text, 'utf8').digest('hex');
const hmac = (key: crypto.BinaryLike, text: string) => crypto.createHmac('sha256', key).update(text, 'utf8').digest();

/**
 * Why `req` does not carry a valid AWS Signature Version 4 for `service` made with `credentials`
 * over exactly what arrived (method, path, signed headers, body), or undefined when it does: the
 * check AWS runs, recomputed from the request as received.
 */
export function sigV4Problem(req: UpstreamRequest, credentials: { accessKeyId: string; secretAccessKey: string }, service: string): string | undefined {
  const auth = req.headers.authorization ?? '';
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(auth);
  if (!m) return `not a SigV4 Authorization header: ${JSON.stringify(auth)}`;
  const [, keyId, day, region, signedService, signedHeaders, signature] = m;
  if (keyId !== credentials.accessKeyId) return `signed with access key ${keyId}, not ${credentials.accessKeyId}`;
  if (signedService !== service) return `signed for service ${signedService}, not ${service}`;
  const amzDate = req.headers['x-amz-date'] ?? '';
  if (!amzDate.startsWith(day)) return `x-amz-date ${amzDate} is not the credential day ${day}`;
  const [pathPart, query = ''] = req.path.split('?');
  const canonicalQuery = query === '' ? '' : query.split('&').map((kv) => kv.split('=').map((x) => uriEncode(decodeURIComponent(x))).join('=')).sort().join('&');
  const names = signedHeaders.split(';');
  if (!names.includes('host')) return `the host header is not signed (${signedHeaders})`;
  const canonicalRequest = [
    req.method,
    pathPart.split('/').map(uriEncode).join('/'),
    canonicalQuery,
    names.map((n) => `${n}:${(req.headers[n] ?? '').trim().replace(/\s+/g, ' ')}\n`).join(''),
    signedHeaders,
    sha256(req.body),
  ].join('\n');
  const scope = `${day}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${credentials.secretAccessKey}`, day), region), service), 'aws4_request');
  const expected = crypto.createHmac('sha256', key).update(stringToSign, 'utf8').digest('hex');
  return expected === signature ? undefined : `signature mismatch over:\n${canonicalRequest}`;
}
