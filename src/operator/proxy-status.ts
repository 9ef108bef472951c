// The Programmed condition: whether a request would reach the model now, not only whether its
// objects were applied. The AI Gateway controller turns each AIGatewayRoute into an HTTPRoute,
// Envoy Gateway accepts it and programs its Envoy proxies, and the AI Gateway then rolls those
// proxies so that every pod carries the extproc sidecar with the new configuration (every change
// of the model set rolls them; a pod started before the first route has no sidecar and answers
// 500). Programmed is True once each enabled endpoint's HTTPRoute is accepted by its Gateway at
// its current generation and that Gateway's proxy Deployments have finished rolling out with the
// sidecar. Once True it stays True through later rolls (the old pods keep serving the model while
// new ones start); it turns False again when the route loses its acceptance or no proxy is available.
import { API_GROUP_VERSION_V1BETA1 } from '../api/common';
import { gatewayObjectNames, type EndpointName } from '../translate/gateway/names';
import { resolveGatewayContext, type GatewayContext, type ResolvedGatewayContext } from '../translate/gateway/context';
import { AI_GATEWAY_API_VERSION } from '../translate/gateway/objects';
import { cachedLookup, type CachedKind } from './runtime/cached-lookups';
import type { Condition, ConditionInput } from './runtime/conditions';
import type { SecondaryWatch } from './runtime/controller';
import { controllerOwnerKey, objectKey } from './runtime/object-key';
import { objectRef, type KubeObject, type KubeRest } from '../kube/rest';

export const PROGRAMMED_CONDITION = 'Programmed';
/** Set by the AI Gateway on the proxy pod template once it injects the extproc sidecar. */
export const EXTPROC_CONFIG_HASH_ANNOTATION = 'aigateway.envoyproxy.io/extproc-config-hash';
/** Envoy Gateway's labels on the proxy Deployment of a Gateway. */
export const PROXY_SELECTOR = 'app.kubernetes.io/managed-by=envoy-gateway,app.kubernetes.io/component=proxy';
const OWNING_GATEWAY_NAME = 'gateway.envoyproxy.io/owning-gateway-name';
const OWNING_GATEWAY_NAMESPACE = 'gateway.envoyproxy.io/owning-gateway-namespace';
/**
 * Everything looked served once: look again after this long before saying so, because the AI
 * Gateway starts the proxies' roll a moment after Envoy Gateway accepts the route, and a roll
 * that began meanwhile shows up as a Deployment change before then.
 */
export const SETTLE_MS = 3_000;
/** How soon a model whose proxies the operator cannot see yet is looked at again. */
export const UNSEEN_PROXIES_REQUEUE_MS = 60_000;
const SETTLING = 'Settling';

export interface RouteParentView {
  gatewayName: string;
  gatewayNamespace: string;
  accepted?: { status: string; reason: string; message: string; observedGeneration?: number };
  resolvedRefs?: { status: string; reason: string; message: string };
}

/** What is read of a generated HTTPRoute. */
export interface RouteView {
  name: string;
  generation?: number;
  parents: RouteParentView[];
}

/** What is read of a proxy Deployment. */
export interface ProxyView {
  name: string;
  namespace: string;
  gatewayName?: string;
  gatewayNamespace?: string;
  generation?: number;
  observedGeneration?: number;
  replicas: number;
  updatedReplicas: number;
  availableReplicas: number;
  /** All pods, old and new (more than `replicas` while a roll is on). */
  podsTotal: number;
  withSidecar: boolean;
}

export interface EndpointProgramming {
  endpoint: EndpointName;
  routeName: string;
  gateway: { name: string; namespace: string };
  /** The HTTPRoute, absent until the AI Gateway controller generated it. */
  route?: RouteView;
  /** The Gateway's proxy Deployments, or undefined when the operator cannot see them (yet). */
  proxies?: ProxyView[];
}

export interface ProgrammedOutcome {
  condition: ConditionInput;
  requeueAfterMs?: number;
  /** When the model was first seen served while not yet Programmed (kept by the caller between passes). */
  settlingSince?: number;
}

/**
 * Programmed from what the cluster shows for each enabled endpoint. `previous` is the stored
 * condition: a model already Programmed stays so while a roll is on. A model not Programmed yet
 * turns so only after everything looked served for SETTLE_MS (`settlingSince`, when it first did).
 */
export function programmedCondition(endpoints: readonly EndpointProgramming[], previous: Condition | undefined, settling: { since?: number; now: number }): ProgrammedOutcome {
  const wasProgrammed = previous?.status === 'True';
  const problems = endpoints.map((e) => endpointProblem(e, wasProgrammed)).filter((p): p is ConditionInput => p !== undefined);
  // Route and proxy changes bring a model back; only an unseen proxy state is looked at again,
  // slowly (the proxies' watch may not have listed yet, or the chart's Role may be missing).
  if (problems.length > 0) return { condition: problems[0], requeueAfterMs: problems[0].status === 'Unknown' ? UNSEEN_PROXIES_REQUEUE_MS : undefined };
  if (wasProgrammed && endpoints.some((e) => !e.proxies)) {
    // Restarted, the proxies' watch not listed yet: say what was said, and look again.
    return { condition: { type: PROGRAMMED_CONDITION, status: true, reason: previous!.reason, message: previous!.message }, requeueAfterMs: UNSEEN_PROXIES_REQUEUE_MS };
  }
  const served = endpoints.map((e) => `${e.endpoint} (HTTPRoute ${e.routeName} on Gateway ${e.gateway.namespace}/${e.gateway.name}, ${describeProxies(e.proxies!)})`).join('; ');
  const since = settling.since ?? settling.now;
  if (!wasProgrammed && settling.now - since < SETTLE_MS) {
    return {
      condition: { type: PROGRAMMED_CONDITION, status: false, reason: SETTLING, message: `routes accepted and proxies rolled out; confirming for ${SETTLE_MS / 1000} s that no roll starts: ${served}` },
      requeueAfterMs: SETTLE_MS - (settling.now - since),
      settlingSince: since,
    };
  }
  return { condition: { type: PROGRAMMED_CONDITION, status: true, reason: 'Serving', message: `the gateway's proxies serve this model: ${served}` } };
}

function describeProxies(proxies: readonly ProxyView[]): string {
  return proxies.map((p) => `proxy ${p.name} ${p.availableReplicas}/${p.replicas} available`).join(', ');
}

function endpointProblem(e: EndpointProgramming, wasProgrammed: boolean): ConditionInput | undefined {
  const where = `${e.endpoint} endpoint`;
  const gateway = `${e.gateway.namespace}/${e.gateway.name}`;
  const problem = (status: boolean | 'Unknown', reason: string, message: string): ConditionInput => ({ type: PROGRAMMED_CONDITION, status, reason, message: `${where}: ${message}` });
  if (!e.route) return problem(false, 'RoutePending', `waiting for the AI Gateway controller to generate HTTPRoute ${e.routeName} (is the AI Gateway controller running?)`);
  const parent = e.route.parents.find((p) => p.gatewayName === e.gateway.name && p.gatewayNamespace === e.gateway.namespace);
  if (!parent?.accepted) return problem(false, 'RoutePending', `waiting for Envoy Gateway to accept HTTPRoute ${e.routeName} on Gateway ${gateway} (is Envoy Gateway running, and does the Gateway exist?)`);
  if (parent.accepted.status !== 'True') return problem(false, 'RouteNotAccepted', `Gateway ${gateway} does not accept HTTPRoute ${e.routeName}: ${parent.accepted.reason}: ${parent.accepted.message}`);
  if (parent.resolvedRefs && parent.resolvedRefs.status !== 'True') return problem(false, 'RouteNotAccepted', `HTTPRoute ${e.routeName} on Gateway ${gateway} has unresolved references: ${parent.resolvedRefs.reason}: ${parent.resolvedRefs.message}`);
  if (e.route.generation !== undefined && parent.accepted.observedGeneration !== undefined && parent.accepted.observedGeneration < e.route.generation) {
    return problem(false, 'RoutePending', `waiting for Envoy Gateway to accept the latest change of HTTPRoute ${e.routeName}`);
  }
  if (!e.proxies) {
    // A Programmed model stays so while the operator's view of the proxies is not there yet (a restart).
    if (wasProgrammed) return undefined;
    return problem('Unknown', 'ProxyNotVisible', `the operator cannot read the proxy Deployments in namespace ${e.gateway.namespace} (the chart's Role there; chart value platform.proxyStatus)`);
  }
  const mine = e.proxies.filter((p) => p.gatewayName === e.gateway.name && p.gatewayNamespace === e.gateway.namespace);
  if (mine.length === 0) {
    return problem(false, 'ProxyMissing', `no Envoy proxy Deployment of Gateway ${gateway} in namespace ${e.gateway.namespace} (labels ${PROXY_SELECTOR}); is the Gateway programmed by Envoy Gateway? If Envoy Gateway runs its proxies in another namespace than the Gateway's, set platform.proxyStatus=false`);
  }
  const unavailable = mine.find((p) => p.availableReplicas === 0);
  if (unavailable) return problem(false, 'ProxyUnavailable', `proxy Deployment ${unavailable.name} has no available pod`);
  if (wasProgrammed) return undefined;
  const noSidecar = mine.find((p) => !p.withSidecar);
  if (noSidecar) return problem(false, 'ProxyRollingOut', `proxy Deployment ${noSidecar.name} does not run the AI Gateway extproc sidecar yet; the AI Gateway rolls it once the route exists`);
  const rolling = mine.find((p) => (p.observedGeneration ?? 0) < (p.generation ?? 0) || p.updatedReplicas < p.replicas || p.podsTotal > p.updatedReplicas || p.availableReplicas < p.replicas);
  if (rolling) {
    return problem(false, 'ProxyRollingOut', `proxy Deployment ${rolling.name} is rolling out (${rolling.updatedReplicas}/${rolling.replicas} updated, ${rolling.availableReplicas} available, ${rolling.podsTotal} pods); the AI Gateway rolls the proxies whenever the set of models changes`);
  }
  return undefined;
}

/** The stripped copy of a generated HTTPRoute the watch caches. */
export function routeViewOf(obj: KubeObject): KubeObject {
  const parents = ((obj.status as { parents?: unknown[] } | undefined)?.parents ?? []) as { parentRef?: { name?: string; namespace?: string }; conditions?: { type: string; status: string; reason: string; message: string; observedGeneration?: number }[] }[];
  const pick = (cs: typeof parents[number]['conditions'], type: string) => {
    const c = cs?.find((x) => x.type === type);
    return c ? { status: c.status, reason: c.reason, message: c.message, ...(c.observedGeneration !== undefined ? { observedGeneration: c.observedGeneration } : {}) } : undefined;
  };
  const m = obj.metadata;
  const view: RouteView = {
    name: m.name,
    generation: m.generation,
    parents: parents.map((p) => ({
      gatewayName: p.parentRef?.name ?? '',
      gatewayNamespace: p.parentRef?.namespace ?? m.namespace ?? '',
      accepted: pick(p.conditions, 'Accepted'),
      resolvedRefs: pick(p.conditions, 'ResolvedRefs'),
    })),
  };
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    // The creation time orders the endpoint's routes (endpoint-peers.ts).
    metadata: { name: m.name, namespace: m.namespace, uid: m.uid, resourceVersion: m.resourceVersion, generation: m.generation, creationTimestamp: m.creationTimestamp },
    view,
  } as KubeObject;
}

/**
 * A watch of the generated HTTPRoutes in `namespace`, cached as `routeViewOf` strips them. Every
 * user builds it here, so all share one informer (runtime/shared-informers.ts: same transform).
 */
export function generatedRouteWatch(namespace: string, onCache: NonNullable<SecondaryWatch['onCache']>, map: SecondaryWatch['map']): SecondaryWatch {
  return { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', namespace, transform: routeViewOf, lookups: false, onCache, map };
}

/** The stripped copy of a proxy Deployment the watch caches. */
export function proxyViewOf(obj: KubeObject): KubeObject {
  const m = obj.metadata;
  const spec = (obj as { spec?: { replicas?: number; template?: { metadata?: { annotations?: Record<string, string> } } } }).spec;
  const status = (obj.status ?? {}) as { observedGeneration?: number; replicas?: number; updatedReplicas?: number; availableReplicas?: number };
  const view: ProxyView = {
    name: m.name,
    namespace: m.namespace ?? '',
    gatewayName: m.labels?.[OWNING_GATEWAY_NAME],
    gatewayNamespace: m.labels?.[OWNING_GATEWAY_NAMESPACE],
    generation: m.generation,
    observedGeneration: status.observedGeneration,
    replicas: spec?.replicas ?? 1,
    updatedReplicas: status.updatedReplicas ?? 0,
    availableReplicas: status.availableReplicas ?? 0,
    podsTotal: status.replicas ?? 0,
    withSidecar: spec?.template?.metadata?.annotations?.[EXTPROC_CONFIG_HASH_ANNOTATION] !== undefined,
  };
  return { apiVersion: obj.apiVersion, kind: obj.kind, metadata: { name: m.name, namespace: m.namespace, uid: m.uid, resourceVersion: m.resourceVersion }, view } as KubeObject;
}

const viewOf = <T>(obj: KubeObject | undefined): T | undefined => (obj as { view?: T } | undefined)?.view;

type Cache = CachedKind & { list(): KubeObject[] };

/**
 * The watches Programmed needs, for one model kind's controller: the generated HTTPRoutes in the
 * models' namespace, the proxy Deployments in each Gateway's namespace, and a stripped copy of
 * the controller's own models (to find those still waiting when a proxy changes).
 */
export class ProxyStatus {
  private routes?: Cache;
  private readonly proxies = new Map<string, Cache>();
  private models?: Cache;
  /** Per model: when it was first seen served while not yet Programmed (SETTLE_MS from then). */
  private readonly settlingSince = new Map<string, number>();

  /** The endpoints' Gateways, resolved once (the gateway settings are fixed for the process). */
  private readonly endpointSettings: ResolvedGatewayContext['endpoints'];

  constructor(
    private readonly client: KubeRest,
    private readonly modelKind: 'LLMModel' | 'PassthroughModel',
    private readonly gateway: GatewayContext,
  ) {
    this.endpointSettings = resolveGatewayContext(gateway).context.endpoints;
  }

  /** On with the chart value `platform.proxyStatus` (its default), which grants the read in the Gateways' namespaces. */
  get enabled(): boolean {
    return this.gateway.proxyStatus === true;
  }

  private gatewayNamespaces(): string[] {
    return [...new Set(Object.values(this.endpointSettings).map((e) => e.gatewayNamespace))];
  }

  watches(namespace: string): SecondaryWatch[] {
    if (!this.enabled) return [];
    const routes = generatedRouteWatch(
      namespace,
      (cache) => (this.routes = cache),
      // The AI Gateway names the HTTPRoute after its AIGatewayRoute, which the model controls.
      (obj) => {
        const owner = cachedLookup(this.client, AI_GATEWAY_API_VERSION, 'AIGatewayRoute', namespace, obj.metadata.name)?.object;
        return owner ? controllerOwnerKey(owner, this.modelKind) : [];
      },
    );
    const proxies: SecondaryWatch[] = this.gatewayNamespaces().map((ns) => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      namespace: ns,
      labelSelector: PROXY_SELECTOR,
      transform: proxyViewOf,
      onCache: (cache) => this.proxies.set(ns, cache),
      map: (obj, event, old) => (availabilityChanged(event, obj, old) ? this.allModels() : this.waitingModels()),
    }));
    const models: SecondaryWatch = {
      apiVersion: API_GROUP_VERSION_V1BETA1,
      kind: this.modelKind,
      namespace,
      // No transform: the controller's own watch of its models serves (runtime/shared-informers.ts).
      lookups: false,
      onCache: (cache) => (this.models = cache),
      map: () => [],
    };
    return [routes, ...proxies, models];
  }

  /** Models of this kind not Programmed yet: a proxy change may be what they wait for. */
  private waitingModels(): string[] {
    return (this.models?.list() ?? []).filter((m) => !isProgrammed(m)).map((m) => objectKey(m.metadata.namespace, m.metadata.name));
  }

  private allModels(): string[] {
    return (this.models?.list() ?? []).map((m) => objectKey(m.metadata.namespace, m.metadata.name));
  }

  /** Programmed for a model, from what its enabled endpoints show now. */
  async programmed(modelName: string, namespace: string, enabled: readonly EndpointName[], previous: Condition | undefined): Promise<ProgrammedOutcome> {
    const key = objectKey(namespace, modelName);
    const outcome = programmedCondition(await this.endpoints(modelName, namespace, enabled), previous, { since: this.settlingSince.get(key), now: Date.now() });
    if (outcome.settlingSince === undefined) this.settlingSince.delete(key);
    else this.settlingSince.set(key, outcome.settlingSince);
    return outcome;
  }

  /** What each enabled endpoint shows, from the watches' caches (a route not cached yet is read from the server). */
  async endpoints(modelName: string, namespace: string, enabled: readonly EndpointName[]): Promise<EndpointProgramming[]> {
    const out: EndpointProgramming[] = [];
    for (const endpoint of enabled) {
      const settings = this.endpointSettings[endpoint];
      const routeName = gatewayObjectNames(modelName).route(endpoint);
      let route = this.routes?.hasSynced ? viewOf<RouteView>(this.routes.get(namespace, routeName)) : undefined;
      if (!this.routes?.hasSynced) {
        const live = await this.client.get<KubeObject>(objectRef('gateway.networking.k8s.io/v1', 'HTTPRoute', routeName, namespace)).catch(() => undefined);
        route = live ? viewOf<RouteView>(routeViewOf(live)) : undefined;
      }
      const cache = this.proxies.get(settings.gatewayNamespace);
      out.push({
        endpoint,
        routeName,
        gateway: { name: settings.gatewayName, namespace: settings.gatewayNamespace },
        route,
        proxies: cache?.hasSynced ? cache.list().map((p) => viewOf<ProxyView>(p)!) : undefined,
      });
    }
    return out;
  }
}

/**
 * A proxy Deployment went from serving to no available pod or back (or went away): that concerns
 * the Programmed models too. A roll alone concerns only the models waiting for it.
 */
function availabilityChanged(event: string, obj: KubeObject, old: KubeObject | undefined): boolean {
  if (event === 'delete') return true;
  const before = viewOf<ProxyView>(old);
  const now = viewOf<ProxyView>(obj);
  return !!before && !!now && (before.availableReplicas === 0) !== (now.availableReplicas === 0);
}

function isProgrammed(obj: KubeObject): boolean {
  const conditions = (obj.status as { conditions?: Condition[] } | undefined)?.conditions ?? [];
  return conditions.some((c) => c.type === PROGRAMMED_CONDITION && c.status === 'True');
}
