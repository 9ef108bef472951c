// The models on the external endpoint, for the key Secrets the external SecurityPolicies accept
// (src/translate/gateway/endpoint-peers.ts says which policies accept every model's keys: those
// of the endpoint's oldest HTTPRoutes). Each model controller watches both model kinds in its
// namespace, caching only what membership needs, and the generated HTTPRoutes (their creation
// times); endpoint-members.ts keeps from their events what a pass asks, so no pass walks every
// model. When a model joins the endpoint (first published), leaves it (deleted, or its external
// endpoint disabled) or changes, and when the oldest routes change, it re-renders its own kind's
// models whose policy accepts every key. A model counts once the operator has published it (it
// has an ExternalEndpointReady condition): its key Secret exists by then, so no policy ever names
// a Secret that is not there yet. Without the routes (not listed yet), every policy accepts every
// key, as before any route existed.
import { API_GROUP_VERSION_V1BETA1 } from '../api/common';
import { LLMMODEL_KIND } from '../api/llmmodel';
import { PASSTHROUGHMODEL_KIND } from '../api/passthroughmodel';
import { externalEndpointKeySecrets } from '../translate/gateway';
import { EndpointMembers, isMember, type PeerObject } from './endpoint-members';
import { generatedRouteWatch } from './proxy-status';
import { type ServedId, type ServingModel, servedModelIds, sharedIds } from '../translate/gateway/served-ids';
import type { CachedKind } from './runtime/cached-lookups';
import type { SecondaryWatch } from './runtime/controller';
import { objectKey } from './runtime/object-key';
import type { KubeObject, KubeRest } from '../kube/rest';

const MODEL_KINDS = [LLMMODEL_KIND, PASSTHROUGHMODEL_KIND] as const;
type ModelKind = (typeof MODEL_KINDS)[number];
export const EXTERNAL_ENDPOINT_CONDITION = 'ExternalEndpointReady';

/** What is cached of a model: identity, deletion, whether its external endpoint is on, whether it was published. */
export function peerOf(obj: KubeObject): PeerObject {
  const m = obj.metadata;
  const external = (obj as { spec?: { endpoints?: { external?: { enabled?: boolean } } } }).spec?.endpoints?.external;
  const conditions = (obj.status as { conditions?: { type: string }[] } | undefined)?.conditions ?? [];
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    metadata: { name: m.name, namespace: m.namespace, uid: m.uid, resourceVersion: m.resourceVersion, ...(m.deletionTimestamp ? { deletionTimestamp: m.deletionTimestamp } : {}) },
    spec: external?.enabled === false ? { endpoints: { external: { enabled: false } } } : {},
    published: conditions.some((c) => c.type === EXTERNAL_ENDPOINT_CONDITION),
    served: servedModelIds(obj as ServingModel),
  };
}

/** `peerOf` per kind: list items carry no kind, and the served ids depend on it. */
const peerTransforms: Record<ModelKind, (obj: KubeObject) => PeerObject> = {
  LLMModel: (obj) => peerOf({ ...obj, kind: LLMMODEL_KIND }),
  PassthroughModel: (obj) => peerOf({ ...obj, kind: PASSTHROUGHMODEL_KIND }),
};

type Cache = CachedKind & { list(): KubeObject[] };

export class ExternalEndpointPeers {
  private readonly caches = new Map<ModelKind, Cache>();
  /** The generated HTTPRoutes of the namespace (shared with the Programmed watch: the same transform). */
  private routes?: Cache;
  /** Per namespace, what the key layout asks of its models, from the events once both model watches listed. */
  private readonly members = new Map<string, EndpointMembers>();
  /** Per namespace, the models that accepted every key when last looked at: a model leaving that set is re-rendered too. */
  private readonly lastAuthenticating = new Map<string, Set<string>>();

  /** `primaryKind`: the kind of the controller these watches belong to (whose models are re-rendered). */
  constructor(private readonly primaryKind: ModelKind) {}

  /** One watch per model kind in `namespace`, and one of its HTTPRoutes. */
  watches(namespace: string): SecondaryWatch[] {
    const models: SecondaryWatch[] = MODEL_KINDS.map((kind) => ({
      apiVersion: API_GROUP_VERSION_V1BETA1,
      kind,
      namespace,
      // The same function for both controllers, so they share one watch (runtime/shared-informers.ts).
      transform: peerTransforms[kind],
      // The models themselves are read by their own informer; this stripped copy answers nothing else.
      lookups: false,
      onCache: (cache) => this.caches.set(kind, cache),
      map: (obj, event, old) => this.modelsToRequeue(kind, obj as PeerObject, event, old as PeerObject | undefined),
    }));
    const routes = generatedRouteWatch(
      namespace,
      (cache) => (this.routes = cache),
      // Only a route created or removed moves the oldest; a status change does not.
      (obj, event) => (event === 'add' || event === 'delete' ? this.routeChanged(obj.metadata.namespace ?? namespace, obj.metadata.name ?? '') : []),
    );
    return [...models, routes];
  }

  /** This controller's models on the endpoint, when membership of the endpoint changed. */
  modelsToRequeue(kind: ModelKind, obj: PeerObject, event: string, old?: PeerObject): string[] {
    // The first list is the start-up, when every model is reconciled anyway.
    if (event === 'resync' || !this.caches.get(kind)?.hasSynced) return [];
    const namespace = obj.metadata.namespace ?? '';
    const members = this.membersOf(namespace);
    if (event === 'delete') members?.delete(kind, obj.metadata.name ?? '');
    else members?.set(obj);
    return [...new Set([...this.membershipChanged(kind, obj, event, old), ...this.idsChanged(kind, obj, event, old)])];
  }

  /** This controller's other models that share a model id with `obj` before or after a change of its ids. */
  private idsChanged(kind: ModelKind, obj: PeerObject, event: string, old?: PeerObject): string[] {
    const before = event === 'add' ? [] : ((event === 'delete' ? obj : old)?.served ?? []);
    const after = event === 'delete' || obj.metadata.deletionTimestamp ? [] : (obj.served ?? []);
    if (JSON.stringify(before) === JSON.stringify(after)) return [];
    const namespace = obj.metadata.namespace ?? '';
    const self = kind === this.primaryKind ? obj.metadata.name : undefined;
    return (this.membersOf(namespace)?.servingAny([...before, ...after]) ?? [])
      .filter((m) => m.kind === this.primaryKind && m.metadata.name !== self)
      .map((m) => objectKey(namespace, m.metadata.name));
  }

  private membershipChanged(kind: ModelKind, obj: PeerObject, event: string, old?: PeerObject): string[] {
    const before = event === 'add' ? false : isMember(event === 'delete' ? obj : old);
    const after = event === 'delete' ? false : isMember(obj);
    if (before === after) return [];
    const namespace = obj.metadata.namespace ?? '';
    const self = kind === this.primaryKind ? obj.metadata.name : undefined;
    const others = this.authenticatingOwnModels(namespace).filter((key) => key !== objectKey(namespace, self ?? ''));
    // A model of this kind that has just joined is passed once more: its pass read the endpoint
    // before its own publication, while a model that joined meanwhile re-rendered only the models
    // published then, and a status write requeues nothing (primaryEventDelay). One extra pass per
    // model, which writes nothing unless a peer was missing.
    const joined = self !== undefined && !before && after ? [objectKey(namespace, self)] : [];
    return [...others, ...joined];
  }

  /** This controller's models to re-render when a route came or went: those that start or stop accepting every key. */
  private routeChanged(namespace: string, routeName: string): string[] {
    const members = this.membersOf(namespace);
    if (!members || !this.routes?.hasSynced) return [];
    members.routeChanged(routeName);
    const before = this.lastAuthenticating.get(namespace);
    const models = this.authenticatingOwnModels(namespace);
    const after = this.lastAuthenticating.get(namespace);
    return before && after && before.size === after.size && [...after].every((name) => before.has(name)) ? [] : models;
  }

  /**
   * This controller's members in `namespace` whose policy accepts every key now or did when last
   * looked at (it must drop the others' keys); all of them while the routes are not known (no
   * route watch, or not listed yet).
   */
  private authenticatingOwnModels(namespace: string): string[] {
    const members = this.membersOf(namespace);
    if (!members) return [];
    if (!this.routes?.hasSynced) return members.members().filter((m) => m.kind === this.primaryKind).map((m) => objectKey(namespace, m.metadata.name));
    const now = members.authenticating();
    const before = this.lastAuthenticating.get(namespace);
    this.lastAuthenticating.set(namespace, now);
    return [...new Set([...now, ...(before ?? [])])].filter((name) => members.member(this.primaryKind, name)).map((name) => objectKey(namespace, name));
  }

  /**
   * The key Secrets of the other models that the external policy of `model` accepts: every
   * model's on the endpoint when its HTTPRoute is one of the oldest (or the routes are not known),
   * else none (the policy lists the model's own). Before the model watches have listed, the
   * models are listed from the server: a policy written from a partial cache would lock out the
   * keys of the models not seen yet.
   */
  async keySecrets(client: KubeRest, model: KubeObject): Promise<string[]> {
    const namespace = model.metadata.namespace ?? '';
    const name = model.metadata.name ?? '';
    const members = this.membersOf(namespace) ?? (await this.listedMembers(client, namespace));
    if (this.routes?.hasSynced) {
      const candidate = members.member(model.kind, name) ? undefined : peerOf(model);
      if (!members.authenticating(candidate).has(name)) return [];
    }
    return externalEndpointKeySecrets(members.members(), namespace);
  }

  /**
   * The model ids `model` serves that another model of its namespace (not being deleted) serves
   * on the same endpoint, with that model: stored before the webhook refused such pairs.
   */
  async modelIdConflicts(client: KubeRest, model: KubeObject): Promise<Array<ServedId & { other: string }>> {
    const mine = servedModelIds(model as ServingModel);
    const namespace = model.metadata.namespace ?? '';
    const members = this.membersOf(namespace) ?? (await this.listedMembers(client, namespace));
    // servingAny leaves out the models being deleted.
    const others = members.servingAny(mine).filter((p) => !(p.kind === model.kind && p.metadata.name === model.metadata.name));
    return others.flatMap((p) => sharedIds(mine, p.served ?? []).map((s) => ({ ...s, other: `${p.kind} ${p.metadata.name}` })));
  }

  /** The namespace's members, seeded from the model caches once both have listed; undefined before. */
  private membersOf(namespace: string): EndpointMembers | undefined {
    let members = this.members.get(namespace);
    if (members) return members;
    if (MODEL_KINDS.some((kind) => !this.caches.get(kind)?.hasSynced)) return undefined;
    members = this.emptyMembers(namespace);
    for (const kind of MODEL_KINDS) {
      for (const peer of this.caches.get(kind)!.list() as PeerObject[]) if (peer.metadata.namespace === namespace) members.set(peer);
    }
    this.members.set(namespace, members);
    return members;
  }

  /** The namespace's members as the server lists them now (before the watches have listed). */
  private async listedMembers(client: KubeRest, namespace: string): Promise<EndpointMembers> {
    const members = this.emptyMembers(namespace);
    for (const kind of MODEL_KINDS) {
      for (const item of (await client.list(API_GROUP_VERSION_V1BETA1, kind, { namespace })).items) members.set(peerOf({ ...item, kind }));
    }
    return members;
  }

  private emptyMembers(namespace: string): EndpointMembers {
    return new EndpointMembers((routeName) => this.routes?.get(namespace, routeName)?.metadata.creationTimestamp);
  }
}
