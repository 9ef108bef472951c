// A small Kubernetes REST client over node:https, configured from a client-node KubeConfig.
// Why not the generated client: the operator needs raw control over watches (resourceVersion,
// bookmarks, 410 Gone), server-side apply with preconditions, and one keep-alive agent shared by
// every request so 1,000 models do not open 1,000 connections.
import * as http from 'node:http';
import * as https from 'node:https';
import { URL } from 'node:url';
import * as k8s from '@kubernetes/client-node';

/** The minimum every Kubernetes object has. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  deletionTimestamp?: string;
  creationTimestamp?: string;
  [field: string]: unknown;
}

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}

/** An API error with the HTTP status and the server's reason (NotFound, Conflict, ...). */
export class KubeApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = 'KubeApiError';
  }
}

export function isNotFound(err: unknown): boolean {
  return err instanceof KubeApiError && err.statusCode === 404;
}
export function isConflict(err: unknown): boolean {
  return err instanceof KubeApiError && err.statusCode === 409;
}
export function isGone(err: unknown): boolean {
  return err instanceof KubeApiError && err.statusCode === 410;
}

/** Where a kind is served, learned from discovery. */
export interface ResourceInfo {
  group: string;
  version: string;
  plural: string;
  namespaced: boolean;
}

/** The kind is not served by the API server (its CRD is absent or not yet established). */
export class KindNotServedError extends Error {
  constructor(readonly apiVersion: string, readonly kind: string) {
    super(`${kind}.${apiVersion} is not served by the API server; install its CRD`);
    this.name = 'KindNotServedError';
  }
}

export interface WatchEvent<T = KubeObject> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

export interface WatchHandle {
  /** Resolves when the stream ends; rejects with KubeApiError (e.g. 410) on an ERROR event or HTTP error. */
  done: Promise<void>;
  abort(): void;
}

export interface RequestOptions {
  method: string;
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  timeoutMs?: number;
}

interface ClientMetrics {
  observeRequest?(method: string, code: number, seconds: number): void;
}

export class KubeClient {
  private readonly server: URL;
  private readonly agent: http.Agent;
  private headers: Record<string, string> = {};
  private headersAt = 0;
  private readonly discovery = new Map<string, { at: number; resources?: Map<string, ResourceInfo> }>();
  /** How long a negative discovery answer is trusted; CRDs installed later are seen after this. */
  negativeDiscoveryTtlMs = 5_000;
  metrics: ClientMetrics = {};

  private constructor(
    private readonly kubeConfig: k8s.KubeConfig,
    agentOptions: https.AgentOptions,
  ) {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster; set KUBECONFIG or run in a pod');
    this.server = new URL(cluster.server);
    const common = { keepAlive: true, maxSockets: 64, maxFreeSockets: 16 };
    this.agent = this.server.protocol === 'https:' ? new https.Agent({ ...agentOptions, ...common }) : new http.Agent(common);
  }

  static async fromKubeConfig(kc: k8s.KubeConfig): Promise<KubeClient> {
    const opts: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(opts);
    const client = new KubeClient(kc, {
      ca: opts.ca,
      cert: opts.cert,
      key: opts.key,
      rejectUnauthorized: opts.rejectUnauthorized,
      servername: opts.servername,
    });
    await client.refreshHeaders();
    return client;
  }

  close(): void {
    this.agent.destroy();
  }

  // Tokens (in-cluster service account tokens rotate) are re-read once a minute.
  private async refreshHeaders(): Promise<void> {
    const opts: https.RequestOptions = {};
    await this.kubeConfig.applyToHTTPSOptions(opts);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(opts.headers ?? {})) if (v !== undefined) headers[k] = String(v);
    if (opts.auth) headers.Authorization = 'Basic ' + Buffer.from(opts.auth).toString('base64');
    this.headers = headers;
    this.headersAt = Date.now();
  }

  private url(path: string, query?: RequestOptions['query']): URL {
    const u = new URL(this.server.toString().replace(/\/$/, '') + path);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) u.searchParams.set(k, String(v));
    return u;
  }

  private async open(opts: RequestOptions, onResponse: (res: http.IncomingMessage) => void): Promise<http.ClientRequest> {
    if (Date.now() - this.headersAt > 60_000) await this.refreshHeaders();
    const u = this.url(opts.path, opts.query);
    const body = opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    const transport = u.protocol === 'https:' ? https : http;
    const req = transport.request(u, {
      method: opts.method,
      agent: this.agent,
      headers: {
        ...this.headers,
        Accept: 'application/json',
        ...(body !== undefined ? { 'Content-Type': opts.contentType ?? 'application/json', 'Content-Length': Buffer.byteLength(body) } : {}),
      },
    });
    req.on('response', onResponse);
    if (opts.timeoutMs) req.setTimeout(opts.timeoutMs, () => req.destroy(new Error(`request timed out after ${opts.timeoutMs} ms`)));
    if (body !== undefined) req.write(body);
    req.end();
    return req;
  }

  /** One request; parses JSON; non-2xx becomes KubeApiError. */
  async request<T = unknown>(opts: RequestOptions): Promise<T> {
    const started = process.hrtime.bigint();
    return new Promise<T>((resolve, reject) => {
      this.open({ timeoutMs: 60_000, ...opts }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const code = res.statusCode ?? 0;
          this.metrics.observeRequest?.(opts.method, code, Number(process.hrtime.bigint() - started) / 1e9);
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = undefined;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            parsed = undefined;
          }
          if (code >= 200 && code < 300) resolve(parsed as T);
          else reject(toApiError(code, parsed, text));
        });
      })
        .then((req) => req.on('error', reject))
        .catch(reject);
    });
  }

  /** Stream a watch; each event is delivered in order. */
  async watch(path: string, query: Record<string, string | number | boolean | undefined>, onEvent: (e: WatchEvent) => void): Promise<WatchHandle> {
    let settle!: { resolve: () => void; reject: (e: unknown) => void };
    const done = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
    let finished = false;
    const finish = (err?: unknown) => {
      if (finished) return;
      finished = true;
      if (err) settle.reject(err);
      else settle.resolve();
    };
    const req = await this.open({ method: 'GET', path, query: { ...query, watch: true } }, (res) => {
      const code = res.statusCode ?? 0;
      if (code !== 200) {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch {
            parsed = undefined;
          }
          finish(toApiError(code, parsed, text));
        });
        return;
      }
      let buffered = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffered += chunk;
        let nl: number;
        while ((nl = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          if (!line.trim()) continue;
          let event: WatchEvent;
          try {
            event = JSON.parse(line) as WatchEvent;
          } catch {
            continue;
          }
          if (event.type === 'ERROR') {
            const status = event.object as unknown as { code?: number; reason?: string; message?: string };
            finish(new KubeApiError(status.code ?? 500, status.reason ?? 'Unknown', status.message ?? 'watch error'));
            req.destroy();
            return;
          }
          try {
            onEvent(event);
          } catch (err) {
            finish(err);
            req.destroy();
            return;
          }
        }
      });
      res.on('end', () => finish());
      res.on('close', () => finish());
      res.on('error', (err) => finish(err));
    });
    req.on('error', (err) => finish(err));
    return { done, abort: () => { finish(); req.destroy(); } };
  }

  /** Resolve a kind to its REST resource, through (cached) discovery. */
  async resource(apiVersion: string, kind: string): Promise<ResourceInfo> {
    const now = Date.now();
    let entry = this.discovery.get(apiVersion);
    const stale = !entry || (!entry.resources?.has(kind) && now - entry.at > this.negativeDiscoveryTtlMs);
    if (stale) {
      const path = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
      const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
      try {
        const list = await this.request<{ resources: Array<{ name: string; kind: string; namespaced: boolean }> }>({ method: 'GET', path });
        const resources = new Map<string, ResourceInfo>();
        for (const r of list.resources ?? []) {
          if (r.name.includes('/')) continue;
          resources.set(r.kind, { group, version, plural: r.name, namespaced: r.namespaced });
        }
        entry = { at: now, resources };
      } catch (err) {
        if (!isNotFound(err)) throw err;
        entry = { at: now };
      }
      this.discovery.set(apiVersion, entry);
    }
    const info = entry!.resources?.get(kind);
    if (!info) throw new KindNotServedError(apiVersion, kind);
    return info;
  }

  /** True when the kind is served now (discovery answers are cached briefly). */
  async isServed(apiVersion: string, kind: string): Promise<boolean> {
    try {
      await this.resource(apiVersion, kind);
      return true;
    } catch (err) {
      if (err instanceof KindNotServedError) return false;
      throw err;
    }
  }

  /** Forget cached discovery (e.g. after a 404 that suggests a CRD went away). */
  forgetDiscovery(apiVersion?: string): void {
    if (apiVersion) this.discovery.delete(apiVersion);
    else this.discovery.clear();
  }

  async collectionPath(apiVersion: string, kind: string, namespace?: string): Promise<string> {
    const r = await this.resource(apiVersion, kind);
    const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
    return r.namespaced && namespace ? `${base}/namespaces/${encodeURIComponent(namespace)}/${r.plural}` : `${base}/${r.plural}`;
  }

  async objectPath(ref: ObjectRef): Promise<string> {
    return `${await this.collectionPath(ref.apiVersion, ref.kind, ref.namespace)}/${encodeURIComponent(ref.name)}`;
  }

  async get<T extends KubeObject = KubeObject>(ref: ObjectRef): Promise<T | undefined> {
    try {
      return await this.request<T>({ method: 'GET', path: await this.objectPath(ref) });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async list<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    opts: { namespace?: string; labelSelector?: string; fieldSelector?: string; resourceVersion?: string; limit?: number } = {},
  ): Promise<{ items: T[]; resourceVersion: string }> {
    const path = await this.collectionPath(apiVersion, kind, opts.namespace);
    const items: T[] = [];
    let cont: string | undefined;
    let resourceVersion = '';
    do {
      const page = await this.request<{ items: T[]; metadata: { resourceVersion: string; continue?: string } }>({
        method: 'GET',
        path,
        query: { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector, limit: opts.limit ?? 500, continue: cont },
      });
      for (const item of page.items ?? []) items.push({ ...item, apiVersion, kind });
      cont = page.metadata?.continue || undefined;
      resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
    } while (cont);
    return { items, resourceVersion };
  }

  /** Server-side apply (`force` takes fields over from other managers). */
  async apply<T extends KubeObject = KubeObject>(obj: KubeObject, fieldManager: string, opts: { force?: boolean; subresource?: 'status' } = {}): Promise<T> {
    const path = await this.objectPath({ apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name, namespace: obj.metadata.namespace });
    return this.request<T>({
      method: 'PATCH',
      path: opts.subresource ? `${path}/${opts.subresource}` : path,
      query: { fieldManager, force: opts.force ?? true },
      body: obj,
      contentType: 'application/apply-patch+yaml',
    });
  }

  async create<T extends KubeObject = KubeObject>(obj: KubeObject, fieldManager: string): Promise<T> {
    const path = await this.collectionPath(obj.apiVersion, obj.kind, obj.metadata.namespace);
    return this.request<T>({ method: 'POST', path, query: { fieldManager }, body: obj });
  }

  async replace<T extends KubeObject = KubeObject>(obj: KubeObject, fieldManager: string): Promise<T> {
    const path = await this.objectPath({ apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name, namespace: obj.metadata.namespace });
    return this.request<T>({ method: 'PUT', path, query: { fieldManager }, body: obj });
  }

  /** JSON patch (RFC 6902); `test` operations make it conditional. */
  async jsonPatch<T extends KubeObject = KubeObject>(ref: ObjectRef, ops: unknown[], fieldManager: string): Promise<T> {
    return this.request<T>({
      method: 'PATCH',
      path: await this.objectPath(ref),
      query: { fieldManager },
      body: ops,
      contentType: 'application/json-patch+json',
    });
  }

  /** Delete; NotFound counts as done. Preconditions make it refuse to delete a replaced object. */
  async delete(ref: ObjectRef, opts: { uid?: string; resourceVersion?: string; propagationPolicy?: 'Background' | 'Foreground' | 'Orphan' } = {}): Promise<boolean> {
    const preconditions = opts.uid || opts.resourceVersion ? { uid: opts.uid, resourceVersion: opts.resourceVersion } : undefined;
    try {
      await this.request({
        method: 'DELETE',
        path: await this.objectPath(ref),
        body: { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: opts.propagationPolicy ?? 'Background', preconditions },
      });
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }
}

function toApiError(code: number, parsed: unknown, text: string): KubeApiError {
  const status = (parsed ?? {}) as { reason?: string; message?: string };
  return new KubeApiError(code, status.reason ?? String(code), status.message ?? (text.slice(0, 300) || `HTTP ${code}`));
}

/** Load the kubeconfig the way kubectl does (KUBECONFIG, ~/.kube/config, then in-cluster). */
export function loadKubeConfig(): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromDefault();
  return kc;
}

export function refOf(obj: KubeObject): ObjectRef {
  return { apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name, namespace: obj.metadata.namespace };
}

export function objectKey(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

export function splitKey(key: string): { namespace?: string; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}
