// A small Kubernetes REST client that sends and receives objects as plain JSON.
//
// Why not client-node's KubernetesObjectApi: for built-in kinds it serializes through its typed
// models, which silently drop every key they do not know (for example `x-kubernetes-int-or-string`
// inside a CRD schema, or fields newer than the client). A server-side apply that loses fields is
// worse than useless, so every write and read here is raw JSON. Authentication and TLS still come
// from client-node's KubeConfig. One keep-alive pool per client: the webhook answers admission
// within the API server's timeout and the operator serves 1,000 models, so a TLS handshake per
// request is not affordable.
import * as https from 'https';
import * as http from 'http';
import { type KubeConnection, loadConnection } from './connection';
import type { ObjectMeta as ApiObjectMeta } from '../api/common';
import { BackoffPolicy, jitteredBackoff } from './backoff';

/** Enough of an object to address it. */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; namespace?: string };
}

/** An object as the API server returns it. */
export interface KubeObject extends ObjectRef {
  metadata: ObjectMeta & { name: string };
  [key: string]: unknown;
}

/** One entry of `metadata.ownerReferences`. */
export type OwnerReference = NonNullable<ApiObjectMeta['ownerReferences']>[number];

/** Object metadata as the API server returns it: the kinds' metadata type, open to other keys. */
export interface ObjectMeta extends ApiObjectMeta {
  [key: string]: unknown;
}

/** The address of a named object. */
export function objectRef(apiVersion: string, kind: string, name: string, namespace?: string): ObjectRef {
  return { apiVersion, kind, metadata: { name, namespace } };
}

/** Load the kubeconfig the way kubectl does (KUBECONFIG, ~/.kube/config, then in-cluster); see connection.ts. */
export function loadKubeConfig(): KubeConnection {
  return loadConnection();
}

/** A failed request; `code` and `body` match client-node's ApiException so callers can treat both alike. */
export class KubeApiError extends Error {
  /** From the Retry-After header of a 429 or 503 answer. */
  retryAfterSeconds?: number;

  constructor(
    readonly code: number,
    readonly body: string,
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = 'KubeApiError';
  }
}

/** The kind is not served by the API server (its CRD is absent or not yet established). */
export class KindNotServedError extends KubeApiError {
  constructor(readonly apiVersion: string, readonly kind: string) {
    super(404, '', 'NotFound', `the API server does not serve ${kind} in ${apiVersion} (is its CRD installed?)`);
    this.name = 'KindNotServedError';
  }
}

export function isNotFound(err: unknown): boolean {
  return (err as { code?: number })?.code === 404;
}

export function isConflict(err: unknown): boolean {
  return (err as { code?: number })?.code === 409;
}

export function isGone(err: unknown): boolean {
  return (err as { code?: number })?.code === 410;
}

/** Builds the error for a failed answer from its status code and body (a Status object, usually). */
export function apiError(method: string, path: string, status: number, text: string): KubeApiError {
  let reason = '';
  let message = text.trim();
  try {
    const parsed = JSON.parse(text) as { reason?: string; message?: string };
    reason = parsed.reason ?? '';
    message = parsed.message ?? message;
  } catch {
    // not a Status object; keep the raw text
  }
  return new KubeApiError(status, text, reason, `${method} ${path}: ${status} ${reason} ${message}`.trim());
}

/** A request that saw no byte for `timeoutMs`; not retried, since the caller chose that bound. */
export class RequestTimeoutError extends Error {
  constructor(method: string, path: string, readonly timeoutMs: number) {
    super(`${method} ${path} timed out (no answer within ${timeoutMs} ms)`);
    this.name = 'RequestTimeoutError';
  }
}

export type RetryReason = 'throttled' | 'not-connected' | 'unavailable' | 'connection';

// Node's codes for a connection that was never made: nothing reached the server.
const notConnected = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
// A connection that broke after it was made ("socket hang up" is ECONNRESET): the request may
// have reached the server. ETIMEDOUT here is the kernel's (connect or keep-alive), not ours.
const brokenConnection = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ECONNABORTED']);

/**
 * Whether a failed attempt may be sent again, and why. Any method is repeated when the server
 * cannot have acted on it: 429 (turned away before being handled) or a connection that was never
 * made. A 5xx (501 Not Implemented aside) or a connection that broke mid-request may hide a write
 * the server did apply, so only reads (GET, HEAD) are repeated then. Writes are left to their
 * callers, which reconcile from a fresh read instead of replaying a request blindly; dry-run
 * writes too, because their callers (probes) want each answer as it comes.
 */
export function retryReason(method: string, err: unknown): RetryReason | undefined {
  const read = method === 'GET' || method === 'HEAD';
  if (err instanceof KubeApiError) {
    if (err.code === 429) return 'throttled';
    return read && err.code >= 500 && err.code !== 501 ? 'unavailable' : undefined;
  }
  const code = (err as { code?: unknown })?.code;
  if (typeof code !== 'string') return undefined;
  if (notConnected.has(code)) return 'not-connected';
  return read && brokenConnection.has(code) ? 'connection' : undefined;
}

export interface RetryPolicy extends BackoffPolicy {
  /** Attempts in all for a transient failure (see retryReason). */
  maxAttempts: number;
  /** Attempts in all while the server answers 429 (e.g. "storage is (re)initializing" for a new CRD). */
  throttledAttempts: number;
}

export interface RequestOptions {
  body?: unknown;
  contentType?: string;
  /** Extra headers, e.g. `accept` for a Table. */
  headers?: Record<string, string>;
  query?: Record<string, string | number | boolean | undefined>;
  /**
   * An attempt that sees no byte for this long fails with RequestTimeoutError; retries never
   * start after this much time has passed since the first attempt. @default 60_000 (per attempt)
   */
  timeoutMs?: number;
}

interface ResourceInfo {
  plural: string;
  namespaced: boolean;
}

export interface ApplyOptions {
  fieldManager: string;
  /** Take over fields owned by other managers. @default true */
  force?: boolean;
  dryRun?: boolean;
  /** Apply to the status subresource. */
  subresource?: 'status';
}

/** Optional observer of every request (the operator exports these as metrics). */
export interface RequestMetrics {
  observeRequest?(method: string, code: number, seconds: number): void;
  observeRetry?(method: string, reason: RetryReason): void;
}

export class KubeRest {
  private readonly discovery = new Map<string, { at: number; kinds: Map<string, ResourceInfo> }>();
  // keepAlive also turns on TCP keep-alive probes (from 1 s of silence, then libuv's 10 probes a
  // second apart), so a server that vanished is noticed within seconds even on a quiet watch. A
  // peer that is alive but forwards nothing (a stuck proxy) answers the probes: the watch's own
  // idle bound covers that.
  private readonly agents = {
    'https:': new https.Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 16 }),
    'http:': new http.Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 16 }),
  };
  // Watches hold their connection for minutes: a pool of their own without a socket limit, so many
  // watches (two per watched namespace) can never use up the sockets ordinary requests need.
  private readonly watchAgents = {
    'https:': new https.Agent({ keepAlive: true, maxFreeSockets: 16 }),
    'http:': new http.Agent({ keepAlive: true, maxFreeSockets: 16 }),
  };
  /** How long "kind not served" is trusted; 0 re-reads discovery every time (a CLI that just installed a CRD). */
  negativeDiscoveryTtlMs = 0;
  metrics: RequestMetrics = {};
  /**
   * Retries of one request. Short on purpose: they ride over a blip (an API server restart behind
   * a load balancer); longer outages are for the caller's own loop (informers, work queues).
   */
  retry: RetryPolicy = { maxAttempts: 5, throttledAttempts: 10, baseDelayMs: 250, maxDelayMs: 5000 };

  constructor(readonly kubeConfig: KubeConnection) {}

  /**
   * One HTTP request to the API server; JSON in and out; throws KubeApiError on status >= 400.
   * Transient failures (see retryReason) are retried with jittered exponential backoff, waiting
   * as long as Retry-After asks when the server says (capped at retry.maxDelayMs).
   */
  async request<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const started = Date.now();
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.requestOnce<T>(method, path, opts);
      } catch (err) {
        const reason = retryReason(method, err);
        if (!reason || attempt >= (reason === 'throttled' ? this.retry.throttledAttempts : this.retry.maxAttempts)) throw err;
        const retryAfter = (err as KubeApiError).retryAfterSeconds;
        const delay = retryAfter !== undefined ? Math.min(retryAfter * 1000, this.retry.maxDelayMs) : jitteredBackoff(attempt, this.retry);
        if (opts.timeoutMs !== undefined && Date.now() - started + delay >= opts.timeoutMs) throw err;
        this.metrics.observeRetry?.(method, reason);
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  /**
   * Opens a request and hands over the response unread (a watch streams it). Authentication is
   * applied per request, so rotated service account tokens are picked up.
   */
  async open(method: string, path: string, opts: RequestOptions, onResponse: (res: http.IncomingMessage) => void): Promise<http.ClientRequest> {
    const cluster = this.kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    const url = new URL(cluster.server.replace(/\/$/, '') + path);
    for (const [key, value] of Object.entries(opts.query ?? {})) if (value !== undefined) url.searchParams.set(key, String(value));
    const pool = opts.query?.watch ? this.watchAgents : this.agents;
    const agent = url.protocol === 'http:' ? pool['http:'] : pool['https:'];
    const options: https.RequestOptions = { method, headers: { accept: 'application/json', ...opts.headers }, agent };
    await this.kubeConfig.applyToHTTPSOptions(options);
    // applyToHTTPSOptions puts a new agent on every request, which would open a new TLS connection
    // each time. Keep the pooled one unless the kubeconfig needs a proxy agent: the TLS settings
    // stay on the request, and https.Agent pools sockets per TLS identity (CA, client cert, name).
    if (!cluster.proxyUrl) options.agent = agent;
    const payload = opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    if (payload !== undefined) {
      options.headers = { ...options.headers, 'content-type': opts.contentType ?? 'application/json', 'content-length': Buffer.byteLength(payload) };
    }
    const transport = url.protocol === 'http:' ? http : https;
    const req = transport.request(url, options, onResponse);
    if (opts.timeoutMs) req.setTimeout(opts.timeoutMs, () => req.destroy(new RequestTimeoutError(method, path, opts.timeoutMs!)));
    req.end(payload);
    return req;
  }

  private async requestOnce<T>(method: string, path: string, opts: RequestOptions): Promise<T> {
    const started = process.hrtime.bigint();
    const { status, text, retryAfter } = await new Promise<{ status: number; text: string; retryAfter?: string }>((resolve, reject) => {
      this.open(method, path, { ...opts, timeoutMs: opts.timeoutMs ?? 60000 }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), retryAfter: res.headers['retry-after'] }));
        res.on('error', reject);
      })
        .then((req) => req.on('error', reject))
        .catch(reject);
    });
    this.metrics.observeRequest?.(method, status, Number(process.hrtime.bigint() - started) / 1e9);
    if (status >= 400) {
      const error = apiError(method, path, status, text);
      if (retryAfter && /^\d+$/.test(retryAfter)) error.retryAfterSeconds = Number(retryAfter);
      throw error;
    }
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** Plural name and scope of a kind, from discovery (re-read when the kind is unknown, e.g. a new CRD). */
  async resource(apiVersion: string, kind: string): Promise<ResourceInfo> {
    const cached = this.discovery.get(apiVersion);
    const known = cached?.kinds.get(kind);
    if (known) return known;
    if (!cached || Date.now() - cached.at >= this.negativeDiscoveryTtlMs) {
      const path = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
      const kinds = new Map<string, ResourceInfo>();
      try {
        const list = await this.request<{ resources?: { name: string; kind: string; namespaced: boolean }[] }>('GET', path);
        for (const r of list.resources ?? []) if (!r.name.includes('/')) kinds.set(r.kind, { plural: r.name, namespaced: r.namespaced });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      this.discovery.set(apiVersion, { at: Date.now(), kinds });
      const info = kinds.get(kind);
      if (info) return info;
    }
    throw new KindNotServedError(apiVersion, kind);
  }

  /** True when the kind is served now. */
  async isServed(apiVersion: string, kind: string): Promise<boolean> {
    try {
      await this.resource(apiVersion, kind);
      return true;
    } catch (err) {
      if (err instanceof KindNotServedError) return false;
      throw err;
    }
  }

  /** Forgets cached discovery (e.g. after a 404 that suggests a CRD went away). */
  forgetDiscovery(apiVersion?: string): void {
    if (apiVersion) this.discovery.delete(apiVersion);
    else this.discovery.clear();
  }

  /**
   * The URL path of an object, or of its collection when `name` is omitted. A namespaced object
   * without a namespace is an error, never the `default` namespace (only `collectionPath` may
   * mean "all namespaces").
   */
  async path(ref: ObjectRef, opts: { collection?: boolean; subresource?: string; allNamespaces?: boolean } = {}): Promise<string> {
    const { plural, namespaced } = await this.resource(ref.apiVersion, ref.kind);
    const base = ref.apiVersion.includes('/') ? `/apis/${ref.apiVersion}` : `/api/${ref.apiVersion}`;
    if (namespaced && !ref.metadata.namespace && !opts.allNamespaces) {
      throw new Error(`${ref.kind} "${ref.metadata.name ?? ''}" has no metadata.namespace; ${ref.kind} is namespaced, so set the namespace it belongs in`);
    }
    const ns = namespaced && ref.metadata.namespace ? `/namespaces/${encodeURIComponent(ref.metadata.namespace)}` : '';
    const name = opts.collection ? '' : `/${encodeURIComponent(ref.metadata.name ?? '')}`;
    return `${base}${ns}/${plural}${name}${opts.subresource ? `/${opts.subresource}` : ''}`;
  }

  /** Server-side apply; returns the stored object. */
  async apply<T extends KubeObject = KubeObject>(obj: ObjectRef, opts: ApplyOptions): Promise<T> {
    return this.request<T>('PATCH', await this.path(obj, { subresource: opts.subresource }), {
      body: obj,
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager: opts.fieldManager, force: String(opts.force ?? true), dryRun: opts.dryRun ? 'All' : undefined },
    });
  }

  async create<T extends KubeObject = KubeObject>(obj: ObjectRef, opts: { fieldManager?: string; dryRun?: boolean } = {}): Promise<T> {
    return this.request<T>('POST', await this.path(obj, { collection: true }), {
      body: obj,
      query: { fieldManager: opts.fieldManager, dryRun: opts.dryRun ? 'All' : undefined },
    });
  }

  async replace<T extends KubeObject = KubeObject>(obj: ObjectRef, opts: { fieldManager?: string; subresource?: string } = {}): Promise<T> {
    return this.request<T>('PUT', await this.path(obj, { subresource: opts.subresource }), { body: obj, query: { fieldManager: opts.fieldManager } });
  }

  /** JSON merge patch. */
  async mergePatch<T extends KubeObject = KubeObject>(ref: ObjectRef, patch: unknown, opts: { fieldManager?: string; subresource?: string } = {}): Promise<T> {
    return this.request<T>('PATCH', await this.path(ref, { subresource: opts.subresource }), {
      body: patch,
      contentType: 'application/merge-patch+json',
      query: { fieldManager: opts.fieldManager },
    });
  }

  /** JSON patch (RFC 6902); `test` operations make it conditional. */
  async jsonPatch<T extends KubeObject = KubeObject>(ref: ObjectRef, ops: unknown[], opts: { fieldManager?: string } = {}): Promise<T> {
    return this.request<T>('PATCH', await this.path(ref), {
      body: ops,
      contentType: 'application/json-patch+json',
      query: { fieldManager: opts.fieldManager },
    });
  }

  /** Reads an object; undefined when it (or its kind) does not exist. */
  async get<T extends KubeObject = KubeObject>(ref: ObjectRef): Promise<T | undefined> {
    try {
      return await this.request<T>('GET', await this.path(ref));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** Lists all objects (page by page); items get their apiVersion and kind back. */
  async list<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    opts: { namespace?: string; labelSelector?: string; fieldSelector?: string; limit?: number } = {},
  ): Promise<{ items: T[]; metadata: { resourceVersion?: string } }> {
    const path = await this.collectionPath(apiVersion, kind, opts.namespace);
    const items: T[] = [];
    let resourceVersion: string | undefined;
    let cont: string | undefined;
    do {
      const page = await this.request<{ items?: T[]; metadata?: { resourceVersion?: string; continue?: string } }>('GET', path, {
        query: { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector, limit: opts.limit ?? 500, continue: cont },
      });
      // Items of a list carry no apiVersion/kind; restore them so they can be addressed again.
      for (const item of page.items ?? []) items.push(Object.assign(item, { apiVersion, kind }));
      cont = page.metadata?.continue || undefined;
      resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
    } while (cont);
    return { items, metadata: { resourceVersion } };
  }

  /** The path of a kind's objects; a namespaced kind without a namespace means all namespaces. */
  async collectionPath(apiVersion: string, kind: string, namespace?: string): Promise<string> {
    return this.path({ apiVersion, kind, metadata: { namespace } }, { collection: true, allNamespaces: !namespace });
  }

  /**
   * Deletes an object; a missing one is not an error. Returns false when it was already gone.
   * Preconditions make it refuse to delete an object that was replaced meanwhile.
   */
  async delete(
    ref: ObjectRef,
    opts: { propagationPolicy?: 'Foreground' | 'Background' | 'Orphan'; preconditions?: { uid?: string; resourceVersion?: string } } = {},
  ): Promise<boolean> {
    try {
      await this.request('DELETE', await this.path(ref), {
        body: {
          apiVersion: 'v1',
          kind: 'DeleteOptions',
          propagationPolicy: opts.propagationPolicy ?? 'Background',
          ...(opts.preconditions?.uid || opts.preconditions?.resourceVersion ? { preconditions: opts.preconditions } : {}),
        },
      });
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  /**
   * Closes pooled connections that no request is using. After a connection went silent the others
   * to the same server are suspect too; the next requests then open fresh ones.
   */
  closeIdleConnections(): void {
    for (const agent of [...Object.values(this.agents), ...Object.values(this.watchAgents)]) {
      for (const sockets of Object.values(agent.freeSockets)) for (const socket of sockets ?? []) socket.destroy();
    }
  }

  /** Releases pooled connections (call before a short-lived process exits). */
  close(): void {
    for (const agent of [...Object.values(this.agents), ...Object.values(this.watchAgents)]) agent.destroy();
  }
}
