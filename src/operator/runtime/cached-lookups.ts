// Reads served from the informers' caches instead of the API server. An informer that lists a
// whole kind in a namespace (no label selector) knows every object of that kind there, so a miss
// in its cache means "absent": the adoption check (apply.ts) and the skip of unchanged applies
// need no GET. Registered per client, so test processes with several clients stay apart.
import type { KubeRest, KubeObject } from '../../kube/rest';

/** What a registered informer offers: its cache, and whether the first list is done. */
export interface CachedKind {
  get(namespace: string | undefined, name: string): KubeObject | undefined;
  readonly hasSynced: boolean;
}

const registries = new WeakMap<KubeRest, Map<string, CachedKind>>();
const kindKey = (apiVersion: string, kind: string, namespace: string | undefined) => `${apiVersion}/${kind}/${namespace ?? ''}`;

/** Register an informer that lists every object of `kind` in `namespace` (no label selector). */
export function registerCachedKind(client: KubeRest, apiVersion: string, kind: string, namespace: string | undefined, cache: CachedKind): void {
  let registry = registries.get(client);
  if (!registry) registries.set(client, (registry = new Map()));
  registry.set(kindKey(apiVersion, kind, namespace), cache);
}

/**
 * The cached copy of an object: `{ object }` (undefined object = absent) when a synced informer
 * covers its kind and namespace, undefined when no cache can answer (the caller asks the server).
 */
export function cachedLookup(client: KubeRest, apiVersion: string, kind: string, namespace: string | undefined, name: string): { object: KubeObject | undefined } | undefined {
  const cache = registries.get(client)?.get(kindKey(apiVersion, kind, namespace));
  if (!cache?.hasSynced) return undefined;
  return { object: cache.get(namespace, name) };
}
