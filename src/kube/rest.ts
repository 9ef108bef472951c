// A small Kubernetes REST client that sends and receives objects as plain JSON.
//
// Why not client-node's KubernetesObjectApi: for built-in kinds it serializes through its typed
// models, which silently drop every key they do not know (for example `x-kubernetes-int-or-string`
// inside a CRD schema, or fields newer than the client). A server-side apply that loses fields is
// worse than useless, so every write and read here is raw JSON. Authentication and TLS still come
// from client-node's KubeConfig.
import * as https from 'https';
import * as http from 'http';
import type { KubeConfig } from '@kubernetes/client-node';

/** Enough of an object to address it. */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; namespace?: string };
}

/** An object as the API server returns it. */
export interface KubeObject extends ObjectRef {
  metadata: { name?: string; namespace?: string; [key: string]: unknown };
  [key: string]: unknown;
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

export function isNotFound(err: unknown): boolean {
  return (err as { code?: number })?.code === 404;
}

export function isConflict(err: unknown): boolean {
  return (err as { code?: number })?.code === 409;
}

export interface RequestOptions {
  body?: unknown;
  contentType?: string;
  /** Extra headers, e.g. `accept` for a Table. */
  headers?: Record<string, string>;
  query?: Record<string, string | undefined>;
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

export class KubeRest {
  private readonly discovery = new Map<string, Map<string, ResourceInfo>>();
  private readonly agent = new https.Agent({ keepAlive: true, maxSockets: 32 });

  constructor(readonly kubeConfig: KubeConfig) {}

  /**
   * One HTTP request to the API server; JSON in and out; throws KubeApiError on status >= 400.
   * Like client-go, retries "429 Too Many Requests" (for example "storage is (re)initializing"
   * right after a CRD is established) a few times, waiting as long as Retry-After asks.
   */
  async request<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.requestOnce<T>(method, path, opts);
      } catch (err) {
        if (!(err instanceof KubeApiError) || err.code !== 429 || attempt >= 10) throw err;
        await new Promise((resolve) => setTimeout(resolve, Math.min(err.retryAfterSeconds ?? 1, 5) * 1000));
      }
    }
  }

  private async requestOnce<T>(method: string, path: string, opts: RequestOptions): Promise<T> {
    const cluster = this.kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    const url = new URL(cluster.server.replace(/\/$/, '') + path);
    for (const [key, value] of Object.entries(opts.query ?? {})) if (value !== undefined) url.searchParams.set(key, value);
    const options: https.RequestOptions = { method, headers: { accept: 'application/json', ...opts.headers }, agent: this.agent };
    await this.kubeConfig.applyToHTTPSOptions(options);
    const payload = opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    if (payload !== undefined) {
      options.headers = { ...options.headers, 'content-type': opts.contentType ?? 'application/json', 'content-length': Buffer.byteLength(payload) };
    }
    const transport = url.protocol === 'http:' ? http : https;
    const { status, text, retryAfter } = await new Promise<{ status: number; text: string; retryAfter?: string }>((resolve, reject) => {
      const req = transport.request(url, options, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), retryAfter: res.headers['retry-after'] }));
        res.on('error', reject);
      });
      req.setTimeout(opts.timeoutMs ?? 60000, () => req.destroy(new Error(`${method} ${path} timed out`)));
      req.on('error', reject);
      req.end(payload);
    });
    if (status >= 400) {
      let reason = '';
      let message = text.trim();
      try {
        const parsed = JSON.parse(text) as { reason?: string; message?: string };
        reason = parsed.reason ?? '';
        message = parsed.message ?? message;
      } catch {
        // not a Status object; keep the raw text
      }
      const error = new KubeApiError(status, text, reason, `${method} ${path}: ${status} ${reason} ${message}`.trim());
      if (retryAfter && /^\d+$/.test(retryAfter)) error.retryAfterSeconds = Number(retryAfter);
      throw error;
    }
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** Plural name and scope of a kind, from discovery (re-read once when the kind is unknown, e.g. a new CRD). */
  async resource(apiVersion: string, kind: string): Promise<ResourceInfo> {
    for (let attempt = 0; attempt < 2; attempt++) {
      let kinds = this.discovery.get(apiVersion);
      if (!kinds || attempt === 1) {
        const path = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
        kinds = new Map();
        try {
          const list = await this.request<{ resources: { name: string; kind: string; namespaced: boolean }[] }>('GET', path);
          for (const r of list.resources) if (!r.name.includes('/')) kinds.set(r.kind, { plural: r.name, namespaced: r.namespaced });
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
        this.discovery.set(apiVersion, kinds);
      }
      const info = kinds.get(kind);
      if (info) return info;
    }
    throw new KubeApiError(404, '', 'NotFound', `the API server does not serve ${kind} in ${apiVersion} (is its CRD installed?)`);
  }

  /** The URL path of an object, or of its collection when `name` is omitted. */
  async path(ref: ObjectRef, opts: { collection?: boolean; subresource?: string } = {}): Promise<string> {
    const { plural, namespaced } = await this.resource(ref.apiVersion, ref.kind);
    const base = ref.apiVersion.includes('/') ? `/apis/${ref.apiVersion}` : `/api/${ref.apiVersion}`;
    const ns = namespaced ? `/namespaces/${encodeURIComponent(ref.metadata.namespace ?? 'default')}` : '';
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

  /** Reads an object; undefined when it does not exist. */
  async get<T extends KubeObject = KubeObject>(ref: ObjectRef): Promise<T | undefined> {
    try {
      return await this.request<T>('GET', await this.path(ref));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async list<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    opts: { namespace?: string; labelSelector?: string; fieldSelector?: string } = {},
  ): Promise<{ items: T[]; metadata: { resourceVersion?: string } }> {
    const path = await this.path({ apiVersion, kind, metadata: { namespace: opts.namespace } }, { collection: true });
    const { namespaced } = await this.resource(apiVersion, kind);
    // A namespaced kind without a namespace lists across all namespaces.
    const listPath = namespaced && !opts.namespace ? path.replace(/\/namespaces\/[^/]+/, '') : path;
    const list = await this.request<{ items: T[]; metadata: { resourceVersion?: string } }>('GET', listPath, {
      query: { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector },
    });
    // Items of a list carry no apiVersion/kind; restore them so they can be addressed again.
    for (const item of list.items) Object.assign(item, { apiVersion, kind });
    return list;
  }

  /** Deletes an object; a missing one is not an error. Returns false when it was already gone. */
  async delete(ref: ObjectRef, opts: { propagationPolicy?: 'Foreground' | 'Background' | 'Orphan'; preconditionUid?: string } = {}): Promise<boolean> {
    try {
      await this.request('DELETE', await this.path(ref), {
        body: {
          apiVersion: 'v1',
          kind: 'DeleteOptions',
          propagationPolicy: opts.propagationPolicy ?? 'Background',
          ...(opts.preconditionUid ? { preconditions: { uid: opts.preconditionUid } } : {}),
        },
      });
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  /** Releases pooled connections (call before a short-lived process exits). */
  close(): void {
    this.agent.destroy();
  }
}
