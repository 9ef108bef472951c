// Where LLMModel and PassthroughModel objects may live, a rule both kinds share. Envoy Gateway's
// API-key auth cannot reference Secrets in another namespace and every model's key Secret is
// pooled in one SecurityPolicy, so models live in the operator's (managed) namespace, and the
// two kinds may not share a name because both derive the same `<name>-api-keys` Secret.
import { apiKeysSecretName } from '../translate/gateway/names';
import type { ClusterLookups, ModelKind } from './lookups';
import { type Findings, lookupFailed } from './verdict';

/** The namespace label the chart sets on namespaces it manages (`nebari.dev/managed=true`). */
export const MANAGED_NAMESPACE_LABEL = 'nebari.dev/managed';

export interface ModelPlacement {
  readonly kind: ModelKind;
  /** The other model kind, whose names this one may not reuse. */
  readonly otherKind: ModelKind;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly operatorNamespace: string;
}

/** Checks namespace and name of a model being created; findings are added to `findings`. */
export async function checkModelPlacement(placement: ModelPlacement, lookups: ClusterLookups, findings: Findings): Promise<void> {
  const { kind, otherKind, namespace, name, operatorNamespace } = placement;
  if (!namespace) {
    findings.deny(`metadata.namespace: a ${kind} is namespaced; create it in the namespace "${operatorNamespace}"`);
    return;
  }
  if (namespace !== operatorNamespace) {
    findings.deny(
      `metadata.namespace: "${namespace}" is not the operator namespace; create the ${kind} in "${operatorNamespace}" ` +
        '(gateway API-key auth cannot read key Secrets from other namespaces)',
    );
    return;
  }
  const [labels, collision] = await Promise.allSettled([
    lookups.namespaceLabels(namespace),
    name ? lookups.getModel(otherKind, namespace, name) : Promise.resolve(undefined),
  ]);
  if (labels.status === 'rejected') {
    findings.deny(lookupFailed(`the labels of namespace "${namespace}"`, labels.reason), 503);
  } else if (labels.value === undefined) {
    findings.deny(`metadata.namespace: namespace "${namespace}" does not exist; create it with the label ${MANAGED_NAMESPACE_LABEL}=true`);
  } else if (labels.value[MANAGED_NAMESPACE_LABEL] !== 'true') {
    findings.deny(
      `metadata.namespace: namespace "${namespace}" lacks the label ${MANAGED_NAMESPACE_LABEL}=true; ` +
        `add it (kubectl label namespace ${namespace} ${MANAGED_NAMESPACE_LABEL}=true) or install the chart with createNamespace`,
    );
  }
  if (collision.status === 'rejected') {
    findings.deny(lookupFailed(`whether a ${otherKind} named "${name}" exists`, collision.reason), 503);
  } else if (collision.value !== undefined && name) {
    findings.deny(
      `metadata.name: ${otherKind === 'LLMModel' ? 'an' : 'a'} ${otherKind} named "${name}" already exists in "${namespace}" and both would use the API-key ` +
        `Secret "${apiKeysSecretName(name)}"; choose another name`,
    );
  }
}
