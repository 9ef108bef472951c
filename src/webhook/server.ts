// The HTTPS listener the API server calls. It owns everything about untrusted bytes: method and
// path routing, content type, body size, JSON decoding, AdmissionReview shape, time limits, and
// hot-swapping the serving certificate. Rules only ever see a parsed AdmissionRequest.
import * as https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerConversionReview, parseConversionReview } from './conversion';
import { type AdmissionRequest, type AdmissionReviewResponse, deny, parseAdmissionReview } from './review';
import { type Logger, silentLogger } from './log';

/** Answers one parsed admission request; may throw (the server turns that into a denial). */
export type AdmissionHandler = (request: AdmissionRequest) => Promise<AdmissionReviewResponse>;

/** PEM serving certificate (optionally with intermediates) and its key. */
export interface ServingCertificate {
  readonly cert: string;
  readonly key: string;
}

export interface AdmissionServerOptions {
  /** Handlers by URL path, e.g. `/validate-llmmodel`. */
  readonly routes: ReadonlyMap<string, AdmissionHandler>;
  /** Path of the conversion webhook (ConversionReview v1), e.g. `/convert`; none when omitted. */
  readonly conversionPath?: string;
  /** Told how long each ConversionReview took to answer and how many objects it held. */
  readonly onConversion?: (durationMs: number, objects: number) => void;
  /**
   * PEM CA bundle the API server's client certificate must chain to (its AdmissionConfiguration
   * kubeconfig for webhooks). When set, a client without such a certificate fails the TLS
   * handshake: no other pod can ask the webhook questions it answers with the operator's rights
   * (whether a user may read a Secret). Unset, any client that reaches the port is answered.
   */
  readonly clientCa?: string;
  /** The certificate served first; replace it later with `setCertificate`. */
  readonly certificate: ServingCertificate;
  /** @default '0.0.0.0' */
  readonly host?: string;
  /** 0 picks a free port. @default 9443 */
  readonly port?: number;
  /** Largest accepted body; an AdmissionReview carries object and oldObject (each ≤ 3 MiB on the API server). @default 8 MiB */
  readonly maxBodyBytes?: number;
  /** Told about each answered admission review: its kind, operation, outcome and duration (the operator's metrics). */
  readonly onAdmission?: (kind: string, operation: string, outcome: 'allowed' | 'denied' | 'error', seconds: number) => void;
  /** A handler still running after this is answered with a denial, inside the API server's 10 s default. @default 8000 */
  readonly handlerTimeoutMs?: number;
  /** A request (headers and body) not received within this is answered 408. @default 15000 */
  readonly requestTimeoutMs?: number;
  /** Headers not received within this are answered 408. @default 10000 */
  readonly headersTimeoutMs?: number;
  readonly log?: Logger;
}

export interface AdmissionServer {
  readonly port: number;
  /** Swaps the certificate for new connections without dropping existing ones. */
  setCertificate(certificate: ServingCertificate): void;
  /** The PEM certificate new connections are served. */
  servedCertificate(): string;
  close(): Promise<void>;
}

const jsonType = 'application/json';

class HttpError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

function statusBody(code: number, message: string): string {
  const reasons: Record<number, string> = {
    400: 'BadRequest',
    404: 'NotFound',
    405: 'MethodNotAllowed',
    408: 'Timeout',
    413: 'RequestEntityTooLarge',
    415: 'UnsupportedMediaType',
    431: 'RequestHeaderFieldsTooLarge',
    500: 'InternalError',
  };
  return JSON.stringify({ apiVersion: 'v1', kind: 'Status', status: 'Failure', code, reason: reasons[code] ?? 'Unknown', message });
}

function send(res: ServerResponse, code: number, body: string, extraHeaders: Record<string, string> = {}): void {
  if (res.headersSent || res.writableEnded) return;
  res.writeHead(code, { 'Content-Type': jsonType, 'Content-Length': Buffer.byteLength(body), ...extraHeaders });
  res.end(body);
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      reject(new HttpError(413, `body of ${declared} bytes exceeds the ${limit}-byte limit`));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new HttpError(413, `body exceeds the ${limit}-byte limit`));
        req.removeAllListeners('data');
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
    req.on('aborted', () => reject(new HttpError(400, 'request aborted')));
  });
}

/**
 * Handler time limits, all checked by one timer per server: a timer, a Promise.race and a
 * clearTimeout for every request were a measurable part of the request path
 * (docs/performance.md). A limit fires at most `checkMs` late.
 */
class Deadlines {
  private readonly pending = new Set<{ readonly at: number; readonly expire: () => void }>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly checkMs: number) {}

  /** `promise`'s outcome, or `onTimeout()` once `ms` have passed without one. */
  race<T>(promise: Promise<T>, ms: number, onTimeout: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const entry = {
        at: Date.now() + ms,
        expire: () => {
          if (settled) return;
          settled = true;
          resolve(onTimeout());
        },
      };
      this.pending.add(entry);
      this.timer ??= setInterval(() => this.expire(), this.checkMs).unref();
      const settle = () => {
        if (settled) return false;
        settled = true;
        this.pending.delete(entry);
        return true;
      };
      promise.then(
        (value) => settle() && resolve(value),
        (error: unknown) => settle() && reject(error),
      );
    });
  }

  private expire(): void {
    const now = Date.now();
    for (const entry of this.pending) {
      if (entry.at > now) continue;
      this.pending.delete(entry);
      entry.expire();
    }
    if (this.pending.size === 0) this.stop();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

const tlsOptions = (c: ServingCertificate, clientCa?: string) => ({ cert: c.cert, key: c.key, minVersion: 'TLSv1.2' as const, ...(clientCa ? { ca: clientCa } : {}) });

/**
 * The TLS and connection settings of the admission listener (exported so the benchmark's
 * baselines listen exactly alike).
 */
export function admissionServerSettings(
  certificate: ServingCertificate,
  timeouts: Pick<AdmissionServerOptions, 'requestTimeoutMs' | 'headersTimeoutMs' | 'clientCa'> = {},
): https.ServerOptions {
  return {
    ...tlsOptions(certificate, timeouts.clientCa),
    ...(timeouts.clientCa ? { requestCert: true, rejectUnauthorized: true } : {}),
    // Slow or stalled clients must not pin sockets past the API server's own timeout; the
    // checking interval bounds how late these timeouts fire (Node's default is 30 s).
    requestTimeout: timeouts.requestTimeoutMs ?? 15_000,
    headersTimeout: timeouts.headersTimeoutMs ?? 10_000,
    connectionsCheckingInterval: 1000,
    // Longer than Go's 90 s idle timeout so the API server, not us, closes idle connections.
    keepAliveTimeout: 120_000,
    handshakeTimeout: 10_000,
  };
}

/** Starts the admission HTTPS server and resolves once it listens. */
export async function listenAdmissionServer(options: AdmissionServerOptions): Promise<AdmissionServer> {
  const log = options.log ?? silentLogger;
  const maxBodyBytes = options.maxBodyBytes ?? 8 * 1024 * 1024;
  const handlerTimeoutMs = options.handlerTimeoutMs ?? 8000;
  let served = options.certificate;
  const deadlines = new Deadlines(Math.min(1000, Math.max(10, Math.floor(handlerTimeoutMs / 10))));

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const path = query < 0 ? url : url.slice(0, query);
    const handler = options.routes.get(path);
    const conversion = options.conversionPath !== undefined && path === options.conversionPath;
    if (!handler && !conversion) {
      const served = [...options.routes.keys(), ...(options.conversionPath ? [options.conversionPath] : [])];
      throw new HttpError(404, `no webhook at ${path}; served paths: ${served.join(', ')}`);
    }
    if (req.method !== 'POST') throw new HttpError(405, `${req.method} is not allowed; reviews are POSTed`);
    const declaredType = req.headers['content-type'] ?? '';
    const contentType = declaredType === jsonType ? declaredType : declaredType.split(';')[0].trim().toLowerCase();
    if (contentType !== jsonType) throw new HttpError(415, `content type ${JSON.stringify(contentType)} is not served; send ${jsonType}`);
    const raw = await readBody(req, maxBodyBytes);
    let decoded: unknown;
    try {
      decoded = JSON.parse(raw.toString('utf8'));
    } catch {
      throw new HttpError(400, 'body is not valid JSON');
    }
    if (conversion || !handler) {
      const review = parseConversionReview(decoded);
      if (!review.ok) throw new HttpError(400, review.reason);
      const started = process.hrtime.bigint();
      const answer = answerConversionReview(review);
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      options.onConversion?.(ms, review.objects.length);
      log.debug('conversion', { uid: review.uid, to: review.desiredAPIVersion, objects: review.objects.length, result: answer.response.result.status, ms });
      send(res, 200, JSON.stringify(answer));
      return;
    }
    const parsed = parseAdmissionReview(decoded);
    if (!parsed.ok) throw new HttpError(400, parsed.reason);
    const { request } = parsed;
    const started = Date.now();
    // A failed or timed-out handler is a denial to the API server but an error of ours to count.
    let failed = false;
    const review = await deadlines.race(
      handler(request).catch((error: unknown) => {
        failed = true;
        log.error('admission handler failed', { path, uid: request.uid, error: String(error) });
        return deny(request.uid, `internal error while admitting ${request.kind.kind}; retry, and report it if it persists`, 500);
      }),
      handlerTimeoutMs,
      () => {
        failed = true;
        return deny(request.uid, `admission of ${request.kind.kind} timed out after ${handlerTimeoutMs} ms (cluster lookups too slow); retry`, 500);
      },
    );
    options.onAdmission?.(request.kind.kind, request.operation, failed ? 'error' : review.response.allowed ? 'allowed' : 'denied', (Date.now() - started) / 1000);
    log.debug('admission', {
      path,
      uid: request.uid,
      operation: request.operation,
      allowed: review.response.allowed,
      ms: Date.now() - started,
    });
    send(res, 200, JSON.stringify(review));
  }

  const server = https.createServer(
    admissionServerSettings(served, options),
    (req, res) => {
      handle(req, res).catch((error: unknown) => {
        const code = error instanceof HttpError ? error.code : 500;
        const message = error instanceof HttpError ? error.message : 'internal error';
        if (!(error instanceof HttpError)) log.error('request failed', { error: String(error) });
        // After a rejected body the connection state is unknown; close it rather than reuse it.
        send(res, code, statusBody(code, message), code === 413 ? { Connection: 'close' } : {});
      });
    },
  );
  server.on('tlsClientError', (error) => log.debug('TLS handshake failed', { error: error.message }));
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    log.debug('malformed HTTP request', { error: error.message, code: error.code });
    if (!socket.writable) return;
    const [code, text, message] =
      error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'the request was not received in time']
        : error.code === 'HPE_HEADER_OVERFLOW'
          ? [431, 'Request Header Fields Too Large', 'request headers are too large']
          : [400, 'Bad Request', `malformed HTTP request (${error.code ?? error.message})`];
    const body = statusBody(code, message);
    socket.end(`HTTP/1.1 ${code} ${text}\r\nContent-Type: ${jsonType}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 9443, options.host ?? '0.0.0.0', () => {
      server.off('error', reject);
      resolve();
    });
  });

  return {
    port: (server.address() as AddressInfo).port,
    setCertificate(certificate) {
      server.setSecureContext(tlsOptions(certificate, options.clientCa));
      served = certificate;
    },
    servedCertificate: () => served.cert,
    close: () =>
      new Promise<void>((resolve) => {
        deadlines.stop();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
