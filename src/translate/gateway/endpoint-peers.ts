// Which API-key Secrets authenticate requests on the external endpoint. Envoy runs API-key
// authentication before the AI Gateway reads the model from the body and re-routes: at that point
// a request matches the first header-less rule on the host, the `route-not-found` rule of the
// oldest model's HTTPRoute, and that route's SecurityPolicy decides who is authenticated. So the
// external policy of the model whose HTTPRoute is the endpoint's oldest must accept the keys of
// every model on the endpoint; authorization (RBAC) runs after the re-route and still admits only
// the requested model's own client IDs. The next oldest accepts them too, so that the endpoint
// keeps authenticating every key while the oldest goes away; every other policy lists only its
// model's own Secret, so a model joining rewrites two policies, not all of them (docs/performance.md).
import { apiKeysSecretName } from './names';

/** A model as far as endpoint membership goes (a whole model object fits). */
export interface EndpointPeer {
  readonly kind: string;
  readonly metadata: { readonly name?: string; readonly namespace?: string; readonly deletionTimestamp?: string };
  readonly spec?: { readonly endpoints?: { readonly external?: { readonly enabled?: boolean } } };
}

/** On the external endpoint: the endpoint is enabled (the default) and the model is not being deleted. */
export function onExternalEndpoint(model: EndpointPeer): boolean {
  return !model.metadata.deletionTimestamp && model.spec?.endpoints?.external?.enabled !== false;
}

/**
 * The key Secret names of the models in `namespace` on the external endpoint, sorted and unique
 * (an LLMModel and a PassthroughModel of the same name share one Secret). Every model of a
 * release attaches its external endpoint to the same Gateway listener and host name (the
 * platform's), so the namespace's models are the endpoint's models.
 */
export function externalEndpointKeySecrets(models: readonly EndpointPeer[], namespace: string): string[] {
  const names = models.filter((m) => m.metadata.namespace === namespace && onExternalEndpoint(m)).map((m) => apiKeysSecretName(m.metadata.name ?? ''));
  return [...new Set(names)].sort();
}

/** How many of the endpoint's oldest HTTPRoutes accept every key: the oldest, and one standing in for it. */
export const AUTHENTICATING_ROUTES = 2;

/** A model on the endpoint and when its generated HTTPRoute was created (absent: not generated yet). */
export interface RoutedModel {
  readonly name: string;
  readonly routeName: string;
  readonly routeCreated?: string;
}

/**
 * The models whose external policy accepts every key: those of the AUTHENTICATING_ROUTES oldest
 * HTTPRoutes, oldest first, in Envoy Gateway's order (creation time, then name; all in one
 * namespace). A model whose route does not exist yet comes after every routed one (the AI Gateway
 * controller creates it later), by route name, so that the first models of an endpoint know
 * every key at once.
 */
export function oldestRouted(models: Iterable<RoutedModel>): RoutedModel[] {
  // One pass keeping the oldest few, not a sort: a recompute runs over every member of the endpoint.
  const oldest: RoutedModel[] = [];
  for (const m of models) {
    const at = oldest.findIndex((o) => older(m, o));
    if (at >= 0) oldest.splice(at, 0, m);
    else oldest.push(m);
    if (oldest.length > AUTHENTICATING_ROUTES) oldest.pop();
  }
  return oldest;
}

function older(a: RoutedModel, b: RoutedModel): boolean {
  return (compare(a.routeCreated ?? NO_ROUTE, b.routeCreated ?? NO_ROUTE) || compare(a.routeName, b.routeName)) < 0;
}

/** Sorts after every RFC 3339 time (which, of one format, sort as strings). */
const NO_ROUTE = '~';

/** By code unit, as Go compares strings (not by locale). */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
