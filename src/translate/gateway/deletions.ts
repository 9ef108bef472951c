// Ordered deletions. An endpoint's SecurityPolicy must outlive the HTTPRoute the AI Gateway
// generates from the endpoint's AIGatewayRoute: were the policy removed first, the route would
// briefly serve the model without authentication. So the operator deletes the AIGatewayRoute,
// waits until the generated HTTPRoute is gone, and only then deletes the policy. API-key Secrets
// never appear here: issued keys survive disabling an endpoint (and re-applying the model).
import { ModelIdentity } from './labels';
import { EndpointName, ENDPOINT_NAMES, gatewayObjectNames } from './names';
import { AI_GATEWAY_API_VERSION, ENVOY_GATEWAY_API_VERSION, GATEWAY_API_VERSION, INFERENCE_API_VERSION, ObjectReference } from './objects';

/**
 * One step of a deletion plan, carried out in order:
 * - `delete`: delete the object if it exists and is controlled by the model (NotFound is done);
 * - `awaitAbsence`: stop here and retry later until the object no longer exists.
 */
export interface DeletionStep {
  readonly action: 'delete' | 'awaitAbsence';
  readonly object: ObjectReference;
  /** Foreground deletion: the object goes only after its own dependents (the generated HTTPRoute). */
  readonly propagationPolicy?: 'Foreground';
  readonly reason: string;
}

function ref(apiVersion: string, kind: string, model: ModelIdentity, name: string): ObjectReference {
  return { apiVersion, kind, namespace: model.metadata.namespace ?? '', name };
}

function routeSteps(model: ModelIdentity, endpoint: EndpointName, why: string): DeletionStep[] {
  const names = gatewayObjectNames(model.metadata.name ?? '');
  return [
    {
      action: 'delete',
      object: ref(AI_GATEWAY_API_VERSION, 'AIGatewayRoute', model, names.route(endpoint)),
      propagationPolicy: 'Foreground',
      reason: `${why}: the ${endpoint} route and its catalog entries go first`,
    },
    {
      action: 'awaitAbsence',
      object: ref(GATEWAY_API_VERSION, 'HTTPRoute', model, names.route(endpoint)),
      reason: `${why}: the ${endpoint} auth policy must outlive the HTTPRoute generated from the route`,
    },
  ];
}

function policyStep(model: ModelIdentity, endpoint: EndpointName, why: string): DeletionStep {
  return {
    action: 'delete',
    object: ref(ENVOY_GATEWAY_API_VERSION, 'SecurityPolicy', model, gatewayObjectNames(model.metadata.name ?? '').securityPolicy(endpoint)),
    reason: `${why}: the ${endpoint} generated HTTPRoute is gone, so its auth policy can go`,
  };
}

/**
 * Removes an endpoint's traffic policy when it has nothing to say (no retries, no fallback, no
 * quotas) or the endpoint is disabled. Any time is safe: the policy never guards access.
 */
export function trafficPolicyDeletion(model: ModelIdentity, endpoint: EndpointName, why = 'no retries, fallback or quotas to enforce'): DeletionStep {
  return { action: 'delete', object: ref(ENVOY_GATEWAY_API_VERSION, 'BackendTrafficPolicy', model, gatewayObjectNames(model.metadata.name ?? '').trafficPolicy(endpoint)), reason: why };
}

/** Steps that remove disabled endpoints: all their routes (and waits) before any of their policies. */
export function disabledEndpointDeletions(model: ModelIdentity, disabled: readonly EndpointName[], why = 'endpoint disabled'): DeletionStep[] {
  const ordered = ENDPOINT_NAMES.filter((e) => disabled.includes(e));
  return [...ordered.flatMap((e) => routeSteps(model, e, why)), ...ordered.map((e) => policyStep(model, e, why))];
}

/**
 * Everything generated for a model, in a safe order, for the operator's finalizer: routes, then
 * (once their HTTPRoutes are gone) auth policies, then the backends. Owner references would
 * delete all of them at once, in no particular order.
 */
export function gatewayTeardown(model: ModelIdentity): DeletionStep[] {
  const names = gatewayObjectNames(model.metadata.name ?? '');
  const backends: DeletionStep[] =
    model.kind === 'LLMModel'
      ? [{ action: 'delete', object: ref(INFERENCE_API_VERSION, 'InferencePool', model, names.inferencePool), reason: 'model deleted' }]
      : [
          { action: 'delete', object: ref(AI_GATEWAY_API_VERSION, 'BackendSecurityPolicy', model, names.backendSecurityPolicy), reason: 'model deleted' },
          { action: 'delete', object: ref(AI_GATEWAY_API_VERSION, 'AIServiceBackend', model, names.aiServiceBackend), reason: 'model deleted' },
          { action: 'delete', object: ref(GATEWAY_API_VERSION, 'BackendTLSPolicy', model, names.backendTLSPolicy), reason: 'model deleted' },
          { action: 'delete', object: ref(ENVOY_GATEWAY_API_VERSION, 'Backend', model, names.backend), reason: 'model deleted' },
        ];
  return [...ENDPOINT_NAMES.map((e) => trafficPolicyDeletion(model, e, 'model deleted')), ...disabledEndpointDeletions(model, ENDPOINT_NAMES, 'model deleted'), ...backends];
}
