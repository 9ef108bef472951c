// One namespace's models as the external endpoint's key layout sees them, kept up to date from
// the model and route watches' events (endpoint-peers.ts feeds it), so that a pass or an event
// costs the same with 10 models as with 10,000: which models are members, which models serve each
// model id, and the members of the endpoint's oldest routes. Those oldest are recomputed from
// every member only when one of them leaves or its route goes; a model joining or a route
// appearing is compared with them alone. Every change is applied by key, so applying one twice
// (once from the seed list, once from its event) changes nothing.
import { oldestRouted, onExternalEndpoint, type EndpointPeer, type RoutedModel } from '../translate/gateway';
import { gatewayObjectNames } from '../translate/gateway/names';
import { servedIdKey, type ServedId } from '../translate/gateway/served-ids';
import type { KubeObject } from '../kube/rest';

/** What the peer watches cache of a model (endpoint-peers.ts `peerOf`). */
export type PeerObject = KubeObject & EndpointPeer & { published?: boolean; served?: ServedId[] };

/** A member of the endpoint: published, not being deleted, external endpoint on. */
export function isMember(peer: PeerObject | undefined): boolean {
  return !!peer && peer.published === true && onExternalEndpoint(peer);
}

const modelKey = (kind: string, name: string): string => `${kind}/${name}`;

interface Entry {
  readonly peer: PeerObject;
  /** Its generated external HTTPRoute's name (derived once: the derivation hashes long names). */
  readonly routeName: string;
}

export class EndpointMembers {
  /** Every model of the namespace, by kind and name. */
  private readonly models = new Map<string, Entry>();
  /** The members, by their external HTTPRoute's name. */
  private readonly byRoute = new Map<string, Entry>();
  /** The models (not being deleted) that serve each model id on each endpoint. */
  private readonly servingId = new Map<string, Set<string>>();
  /** The members of the oldest routes, oldest first; undefined until computed, or after one of them left. */
  private oldest?: RoutedModel[];

  /** `routeCreated`: when the generated HTTPRoute of that name was created, if it exists. */
  constructor(private readonly routeCreated: (routeName: string) => string | undefined) {}

  /** A model was added or changed (as cached: `peerOf`). */
  set(peer: PeerObject): void {
    const name = peer.metadata.name ?? '';
    const key = modelKey(peer.kind, name);
    const previous = this.models.get(key);
    if (previous) this.forgetIds(key, previous);
    const entry = { peer, routeName: previous?.routeName ?? gatewayObjectNames(name).route('external') };
    this.models.set(key, entry);
    if (!peer.metadata.deletionTimestamp) for (const s of peer.served ?? []) this.servingIdOf(s).add(key);
    const was = isMember(previous?.peer);
    if (!isMember(peer)) {
      if (was) this.leave(entry);
    } else {
      this.byRoute.set(entry.routeName, entry);
      // A member's place among the oldest depends on its name and route only: an update keeps it.
      if (!was) this.consider(entry);
    }
  }

  /** A model was deleted. */
  delete(kind: string, name: string): void {
    const key = modelKey(kind, name);
    const entry = this.models.get(key);
    if (!entry) return;
    this.models.delete(key);
    this.forgetIds(key, entry);
    if (isMember(entry.peer)) this.leave(entry);
  }

  /** The generated HTTPRoute `routeName` was created or deleted: its model's place among the oldest moves. */
  routeChanged(routeName: string): void {
    const entry = this.byRoute.get(routeName);
    if (!entry) return;
    if (this.oldest?.some((o) => o.routeName === routeName)) this.oldest = undefined;
    else this.consider(entry);
  }

  member(kind: string, name: string): PeerObject | undefined {
    const peer = this.models.get(modelKey(kind, name))?.peer;
    return isMember(peer) ? peer : undefined;
  }

  /** Every member (for the policies that accept every key). */
  members(): PeerObject[] {
    return [...this.byRoute.values()].map((e) => e.peer);
  }

  /** The names of the members whose policy accepts every key; with `candidate` counted as a member too. */
  authenticating(candidate?: PeerObject): Set<string> {
    this.oldest ??= oldestRouted([...this.byRoute.values()].map((e) => this.routed(e)));
    const oldest = candidate ? oldestRouted([...this.oldest, this.routed({ peer: candidate, routeName: gatewayObjectNames(candidate.metadata.name ?? '').route('external') })]) : this.oldest;
    return new Set(oldest.map((m) => m.name));
  }

  /** The models (not being deleted) serving any of `ids`. */
  servingAny(ids: readonly ServedId[]): PeerObject[] {
    const keys = new Set(ids.flatMap((s) => [...(this.servingId.get(servedIdKey(s)) ?? [])]));
    return [...keys].map((key) => this.models.get(key)!.peer);
  }

  private forgetIds(key: string, entry: Entry): void {
    for (const s of entry.peer.served ?? []) {
      const serving = this.servingId.get(servedIdKey(s));
      serving?.delete(key);
      if (serving?.size === 0) this.servingId.delete(servedIdKey(s));
    }
  }

  /** A member left: if it was among the oldest, they are recomputed when next asked for. */
  private leave(entry: Entry): void {
    // Another kind's model of the same name may hold the route's entry (the webhook refuses that pair).
    if (this.byRoute.get(entry.routeName)?.peer.kind === entry.peer.kind) this.byRoute.delete(entry.routeName);
    if (this.oldest?.some((o) => o.routeName === entry.routeName)) this.oldest = undefined;
  }

  /** A member joined or its route appeared: it takes a place among the oldest if it is older than one of them. */
  private consider(entry: Entry): void {
    if (!this.oldest) return;
    const others = this.oldest.filter((o) => o.routeName !== entry.routeName);
    this.oldest = oldestRouted([...others, this.routed(entry)]);
  }

  private routed(entry: Entry): RoutedModel {
    return { name: entry.peer.metadata.name ?? '', routeName: entry.routeName, routeCreated: this.routeCreated(entry.routeName) };
  }

  private servingIdOf(s: ServedId): Set<string> {
    let serving = this.servingId.get(servedIdKey(s));
    if (!serving) this.servingId.set(servedIdKey(s), (serving = new Set()));
    return serving;
  }
}
