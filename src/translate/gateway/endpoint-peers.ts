// Which API-key Secrets authenticate requests on the external endpoint. Envoy runs API-key
// authentication before the AI Gateway reads the model from the body and re-routes: at that point
// a request matches the first header-less rule on the host, the `route-not-found` rule of the
// oldest model's HTTPRoute, and that route's SecurityPolicy decides who is authenticated. So every
// model's external policy must accept the keys of every model on the endpoint; authorization (RBAC)
// runs after the re-route and still admits only the model's own client IDs.
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
