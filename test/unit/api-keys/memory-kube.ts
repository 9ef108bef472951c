// An in-memory stand-in for the API server at the REST level, for unit tests of the key store and
// the portal: get, list (label selectors `k=v,…`), create, merge patch of `data`, JSON patch
// (`test`/`remove` of one entry) and delete of Secrets, ConfigMaps, models and Deployments. Every
// request is recorded, so a test can assert what was (never) read. Not a real API server: no
// resourceVersions, admission or field managers.
import { KubeApiError, KubeObject, KubeRest, ObjectRef, RequestOptions } from '../../../src/kube/rest';
import { StaticConnection } from '../../../src/kube/connection';

const PLURALS: Record<string, string> = {
  Secret: 'secrets',
  ConfigMap: 'configmaps',
  Deployment: 'deployments',
  LLMModel: 'llmmodels',
  PassthroughModel: 'passthroughmodels',
};

type Stored = KubeObject & { data?: Record<string, string> };

const notFound = (method: string, path: string) => new KubeApiError(404, '', 'NotFound', `${method} ${path}: 404 NotFound`);

export class MemoryKube extends KubeRest {
  readonly objects = new Map<string, Stored>();
  readonly requests: { method: string; path: string }[] = [];

  constructor() {
    // Never connected to: every request is answered below.
    super(new StaticConnection({ server: 'https://127.0.0.1:1' }));
  }

  override async resource(_apiVersion: string, kind: string): Promise<{ plural: string; namespaced: boolean }> {
    const plural = PLURALS[kind];
    if (!plural) throw new Error(`MemoryKube: no kind ${kind}`);
    return { plural, namespaced: true };
  }

  /** Stores an object as the test's setup (not recorded as a request). */
  async put(obj: Stored): Promise<void> {
    this.objects.set(await this.path(obj as ObjectRef), structuredClone(obj));
  }

  async read<T extends Stored>(ref: ObjectRef): Promise<T | undefined> {
    return this.objects.get(await this.path(ref)) as T | undefined;
  }

  override async request<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    this.requests.push({ method, path });
    const body = opts.body as Stored | Record<string, unknown> | unknown[] | undefined;
    const existing = this.objects.get(path);
    if (method === 'GET') {
      if (existing) return structuredClone(existing) as T;
      const prefix = `${path}/`;
      const selector = String(opts.query?.labelSelector ?? '');
      const wanted = selector ? selector.split(',').map((kv) => kv.split('=') as [string, string]) : [];
      const items = [...this.objects]
        .filter(([p, o]) => p.startsWith(prefix) && !p.slice(prefix.length).includes('/') && wanted.every(([k, v]) => o.metadata.labels?.[k] === v))
        .map(([, o]) => structuredClone(o));
      if (items.length === 0 && !/\/(secrets|configmaps|deployments|llmmodels|passthroughmodels)$/.test(path)) throw notFound(method, path);
      return { items, metadata: {} } as T;
    }
    if (method === 'POST') {
      const obj = structuredClone(body as Stored);
      const target = `${path}/${obj.metadata.name}`;
      if (this.objects.has(target)) throw new KubeApiError(409, '', 'AlreadyExists', `POST ${path}: 409 AlreadyExists`);
      this.objects.set(target, obj);
      return structuredClone(obj) as T;
    }
    if (!existing) throw notFound(method, path);
    if (method === 'DELETE') {
      this.objects.delete(path);
      return {} as T;
    }
    if (method === 'PATCH' && opts.contentType === 'application/merge-patch+json') {
      const data = { ...(existing.data ?? {}) };
      for (const [k, v] of Object.entries((body as { data?: Record<string, string | null> }).data ?? {})) {
        if (v === null) delete data[k];
        else data[k] = v;
      }
      existing.data = data;
      return structuredClone(existing) as T;
    }
    if (method === 'PATCH' && opts.contentType === 'application/json-patch+json') {
      for (const op of body as { op: string; path: string; value?: string }[]) {
        const key = op.path.replace(/^\/data\//, '').replace(/~1/g, '/').replace(/~0/g, '~');
        if (op.op === 'test' && existing.data?.[key] !== op.value) throw new KubeApiError(422, '', 'Invalid', `PATCH ${path}: 422 test failed`);
        if (op.op === 'remove') delete existing.data![key];
      }
      return structuredClone(existing) as T;
    }
    throw new Error(`MemoryKube: ${method} ${path} (${opts.contentType ?? ''}) is not supported`);
  }
}
