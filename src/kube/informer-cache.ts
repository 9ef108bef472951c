// The informer's cache without any I/O: what a full list or one watch event changes, and which
// resourceVersion to resume the watch from. The informer (informer.ts) feeds it and reports the
// changes it returns to its handlers.
import type { KubeObject } from './rest';
import type { WatchEvent } from './watch';

// Cache keys: "namespace/name", or "name" for cluster-scoped objects.
const objectKey = (namespace: string | undefined, name: string) => (namespace ? `${namespace}/${name}` : name);

export type CacheEvent = 'add' | 'update' | 'delete';

export interface CacheChange {
  event: CacheEvent;
  obj: KubeObject;
  /** The cached object an update replaced. */
  old?: KubeObject;
}

export interface CacheableOptions {
  apiVersion: string;
  kind: string;
  /** Drop `managedFields` to save memory. @default true */
  stripManagedFields?: boolean;
  transform?: (obj: KubeObject) => KubeObject;
}

/** kubectl's client-side apply record: a second copy of the whole object that nothing here reads. */
export const lastAppliedAnnotation = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * The object as cached: transformed, without managedFields and without kubectl's last-applied
 * annotation (each about as large as the object itself), with apiVersion and kind (watch and
 * list items may lack them).
 */
export function cacheable(obj: KubeObject, opts: CacheableOptions): KubeObject {
  const out = { ...(opts.transform ? opts.transform(obj) : obj), apiVersion: opts.apiVersion, kind: opts.kind };
  if (opts.stripManagedFields !== false && out.metadata?.managedFields) {
    out.metadata = { ...out.metadata };
    delete out.metadata.managedFields;
  }
  const annotations = out.metadata?.annotations as Record<string, string> | undefined;
  if (annotations && lastAppliedAnnotation in annotations) {
    const { [lastAppliedAnnotation]: _lastApplied, ...rest } = annotations;
    out.metadata = { ...out.metadata, annotations: rest };
  }
  return out;
}

export class InformerCache {
  private readonly objects = new Map<string, KubeObject>();
  /** Where a watch resumes: the list's version, then that of the last event or bookmark. */
  resourceVersion = '';

  get(namespace: string | undefined, name: string): KubeObject | undefined {
    return this.objects.get(objectKey(namespace, name));
  }

  list(): KubeObject[] {
    return [...this.objects.values()];
  }

  get size(): number {
    return this.objects.size;
  }

  /**
   * A full list replaces the cache. Returns what changed since the cache was last right: new
   * objects, objects at another resourceVersion, and objects that are gone (deleted while no
   * watch was open, so their DELETED event was never seen).
   */
  replace(items: KubeObject[], listResourceVersion: string | undefined): CacheChange[] {
    const changes: CacheChange[] = [];
    const seen = new Set<string>();
    for (const obj of items) {
      const key = objectKey(obj.metadata.namespace, obj.metadata.name);
      seen.add(key);
      const old = this.objects.get(key);
      this.objects.set(key, obj);
      if (!old) changes.push({ event: 'add', obj });
      else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion) changes.push({ event: 'update', obj, old });
    }
    for (const [key, old] of [...this.objects]) {
      if (seen.has(key)) continue;
      this.objects.delete(key);
      changes.push({ event: 'delete', obj: old });
    }
    this.resourceVersion = listResourceVersion ?? '';
    return changes;
  }

  /** One watch event (ERROR events never get here); a bookmark only moves the resourceVersion. */
  apply(type: WatchEvent['type'], obj: KubeObject): CacheChange | undefined {
    if (obj.metadata?.resourceVersion) this.resourceVersion = obj.metadata.resourceVersion;
    if (type === 'BOOKMARK' || type === 'ERROR') return undefined;
    const key = objectKey(obj.metadata.namespace, obj.metadata.name);
    const old = this.objects.get(key);
    if (type === 'DELETED') {
      this.objects.delete(key);
      return { event: 'delete', obj };
    }
    this.objects.set(key, obj);
    return old ? { event: 'update', obj, old } : { event: 'add', obj };
  }
}
