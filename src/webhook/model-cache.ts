// The models admission reads, from watches instead of a request per admission. Without them every
// model write costs a LIST of each model kind in the namespace (and a GET), so filling a namespace
// reads O(N²) objects and a loaded API server lets the lookups' 3 s bound expire. Every replica
// serves webhooks, so every replica runs these two informers (the operator's own informer
// machinery, src/kube/informer.ts), for the operator namespace only: models are
// admitted nowhere else. They cache spec and metadata; status is dropped (no rule reads it).
//
// A cache lags the API server by the time a watch event takes to arrive (milliseconds, seconds on
// a loaded machine), and admission is not a transaction even when it reads live: two creates that
// race can both pass either way. What the lag changes, and how each case is handled:
// - Not listed yet (start-up, or the CRD is not installed): the read goes to the API server, as
//   before, bounded in time. Serving never waits for the cache.
// - A model created a moment ago is missing: a rule may admit what it would have refused (two
//   models declaring one served id, a name used by the other kind). A client that writes models
//   one after the other (kubectl apply -f dir/) must still see the second refused, so each model
//   this replica admits is seen by its next admissions until its watch event arrives (at most
//   `admittedTtlMs`). Writes admitted by another replica a moment ago remain the window, as was
//   already true for concurrent creates; the operator's conditions (ModelIdConflict, Conflict) are
//   the backstop, as for writes admitted unchecked when a lookup fails. An admitted write that was
//   then not stored (another webhook refused it, or a review posted to the port by someone else)
//   can only cause a refusal, which is confirmed live; at most 1,000 per kind are remembered.
// - A model deleted or changed a moment ago is still seen: a rule may refuse what is now fine, or
//   (an agent naming a model just created) refuse a missing model. So a refusal is never given on
//   the cache's word: the validating handler validates such a request again with live reads
//   (admission.ts) and answers with that verdict. Refusals are rare, so this costs little.
// - Defaults (an agent's modelName from its LLMModel) are stored for good: they read live.
// Other namespaces (agents in watched namespaces look up models there) read live: the operator's
// Role there grants `get` on models, not `watch`.
import { API_GROUP_VERSION_V1BETA1 } from '../api/common';
import type { KubeObject, KubeRest } from '../kube/rest';
import { Informer } from '../kube/informer';
import { type ServingModel, servedIdKey } from '../translate/gateway/served-ids';
import type { ClusterLookups, ModelKind } from './lookups';
import { ModelIndex } from './model-index';
import type { Logger } from './log';
import type { KubernetesObject } from './review';

export interface ModelCacheOptions {
  /** Models live here, and only here are they cached. */
  readonly namespace: string;
  /** Reads the cache cannot answer go here (the API server). */
  readonly live: ClusterLookups;
  readonly log: Logger;
  /** See InformerOptions.watchIdleTimeoutMs. @default the informer's */
  readonly watchIdleTimeoutMs?: number;
  /** How long an admitted model is seen before its watch event. @default 30_000 */
  readonly admittedTtlMs?: number;
}

export interface ModelCache {
  /** Model reads from the cache once it has listed, the rest from `live`. */
  readonly lookups: ClusterLookups;
  /** Settles once both kinds are listed (or found not served). */
  readonly listed: Promise<void>;
  /** This replica admitted a write of `object`: seen by later admissions until its watch event arrives. */
  admitted(object: KubernetesObject): void;
  stop(): Promise<void>;
}

const MODEL_KINDS: readonly ModelKind[] = ['LLMModel', 'PassthroughModel'];
/** Admitted writes remembered per kind at most (the oldest go first); a client writes far fewer in 30 s. */
const MAX_ADMITTED = 1_000;

// Admission reads spec and metadata; status is the largest part of a stored model.
const withoutStatus = (obj: KubeObject): KubeObject => {
  const { status: _status, ...rest } = obj as KubeObject & { status?: unknown };
  return rest as KubeObject;
};

/** Starts a watch of each model kind in `namespace`; stop() ends them. */
export function startModelCache(rest: KubeRest, options: ModelCacheOptions): ModelCache {
  const { namespace, live, log } = options;
  const informers = new Map<ModelKind, Informer>(
    MODEL_KINDS.map((kind) => [
      kind,
      new Informer(
        rest,
        {
          apiVersion: API_GROUP_VERSION_V1BETA1,
          kind,
          namespace,
          transform: withoutStatus,
          watchIdleTimeoutMs: options.watchIdleTimeoutMs,
          // Nothing here acts on a re-report, so the periodic resync is only a no-op; keep it rare.
          resyncMs: 3_600_000,
        },
        log,
      ),
    ]),
  );
  // Models this replica admitted whose watch event has not arrived yet, by kind and name.
  const admittedTtlMs = options.admittedTtlMs ?? 30_000;
  const recent = new Map<ModelKind, Map<string, { object: KubernetesObject; until: number }>>(MODEL_KINDS.map((kind) => [kind, new Map()]));
  // Served ids and generated names of the cached models of both kinds (model-index.ts).
  const index = new ModelIndex();
  for (const [kind, informer] of informers) {
    informer.on((event, obj) => {
      if (event === 'resync') return;
      recent.get(kind)!.delete(obj.metadata.name);
      if (event === 'delete') index.delete(kind, obj.metadata.name);
      else index.set(kind, obj as ServingModel);
    });
    informer.start();
  }
  const recentOf = (kind: ModelKind) => {
    const byName = recent.get(kind)!;
    const now = Date.now();
    for (const [name, entry] of byName) if (entry.until <= now) byName.delete(name);
    return byName;
  };
  // Undefined when a live read must answer: another namespace, or the kind not listed yet.
  const cacheFor = (kind: ModelKind, ns: string) => {
    const informer = ns === namespace ? informers.get(kind) : undefined;
    return informer?.hasSynced ? informer : undefined;
  };

  // The cached objects themselves: rules only read them.
  const listModels = async (kind: ModelKind, ns: string): Promise<KubernetesObject[]> => {
    const cache = cacheFor(kind, ns);
    if (!cache) return live.listModels(kind, ns);
    const admittedHere = recentOf(kind);
    const cached = cache.list() as KubernetesObject[];
    if (admittedHere.size === 0) return cached;
    return [...cached.filter((o) => !admittedHere.has(o.metadata?.name ?? '')), ...[...admittedHere.values()].map((e) => e.object)];
  };

  const listed = Promise.all([...informers.values()].map((i) => i.listed)).then(() => {
    // `listed` also settles for a kind that is not served: those reads stay live until it is.
    if ([...informers.values()].every((i) => i.hasSynced)) log.info('admission reads models from watches', { namespace });
  });

  return {
    lookups: {
      async getModel(kind, ns, name) {
        const cache = cacheFor(kind, ns);
        if (!cache) return live.getModel(kind, ns, name);
        return recentOf(kind).get(name)?.object ?? (cache.get(ns, name) as KubernetesObject | undefined);
      },
      listModels,
      // The index's models, with this replica's admitted writes in place of their cached copies.
      async modelsSharing(ns, wanted) {
        if (!MODEL_KINDS.every((kind) => cacheFor(kind, ns))) return (await Promise.all(MODEL_KINDS.map((kind) => listModels(kind, ns)))).flat();
        const keys = index.serving((wanted.ids ?? []).map(servedIdKey));
        if (wanted.generatedNamesOf) for (const key of index.generating(wanted.generatedNamesOf)) keys.add(key);
        // The few admitted here whose events have not arrived are all returned: the rules filter.
        const found = MODEL_KINDS.flatMap((kind) => [...recentOf(kind).values()].map((e) => e.object));
        for (const key of keys) {
          const slash = key.indexOf('/');
          const [kind, name] = [key.slice(0, slash) as ModelKind, key.slice(slash + 1)];
          if (recent.get(kind)!.has(name)) continue;
          const cached = informers.get(kind)!.get(ns, name) as KubernetesObject | undefined;
          if (cached) found.push(cached);
        }
        return found;
      },
      userMayGet: (...args) => live.userMayGet(...args),
      userMayBindModel: (...args) => live.userMayBindModel(...args),
    },
    listed,
    admitted(object) {
      const kind = object.kind as ModelKind;
      const name = object.metadata?.name;
      if (!recent.has(kind) || typeof name !== 'string' || !name || (object.metadata?.namespace ?? namespace) !== namespace) return;
      // Bounded: anyone who reaches the webhook port can send reviews (docs/security.md, the oracle).
      const byName = recentOf(kind);
      if (byName.size >= MAX_ADMITTED) byName.delete(byName.keys().next().value!);
      byName.set(name, { object: { ...object, kind }, until: Date.now() + admittedTtlMs });
    },
    async stop() {
      await Promise.all([...informers.values()].map((i) => i.stop()));
    },
  };
}
