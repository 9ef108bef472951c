// Where LLMModel and PassthroughModel objects may live, a rule both kinds share. Envoy Gateway's
// API-key auth cannot reference Secrets in another namespace and every model's key Secret is
// pooled in one SecurityPolicy, so models live in the operator's own namespace, and the two kinds
// may not share a name because both derive the same `<name>-api-keys` Secret. The operator
// namespace needs no label: it is the one namespace admitted, and `helm --create-namespace`
// (the usual way to make it) cannot label it.
import { apiKeysSecretName } from '../translate/gateway/names';
import type { AdmissionContext } from './admission';
import type { ClusterLookups, ModelKind } from './lookups';
import type { AdmissionRequest } from './review';
import { Findings, lookupFailed, type Verdict } from './verdict';

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
  if (!name) return;
  let collision;
  try {
    collision = await lookups.getModel(otherKind, namespace, name);
  } catch (error) {
    findings.deny(lookupFailed(`whether a ${otherKind} named "${name}" exists`, error), 503);
    return;
  }
  if (collision !== undefined) {
    findings.deny(
      `metadata.name: ${otherKind === 'LLMModel' ? 'an' : 'a'} ${otherKind} named "${name}" already exists in "${namespace}" and both would use the API-key ` +
        `Secret "${apiKeysSecretName(name)}"; choose another name`,
    );
  }
}

/**
 * The validation both model kinds share: placement on CREATE (fixed at creation; re-checking it on
 * UPDATE would only block repairs), then the kind's own field rules.
 */
export async function validateModel<T extends { metadata?: { name?: string; namespace?: string } }>(
  request: AdmissionRequest<T>,
  context: AdmissionContext,
  kinds: { kind: ModelKind; otherKind: ModelKind },
  fieldFindings: (model: T, findings: Findings) => void,
): Promise<Verdict> {
  const model = request.object as T;
  const findings = new Findings();
  if (request.operation === 'CREATE') {
    const placement = { ...kinds, namespace: model.metadata?.namespace ?? request.namespace, name: model.metadata?.name ?? request.name, operatorNamespace: context.operatorNamespace };
    await checkModelPlacement(placement, context.lookups, findings);
  }
  fieldFindings(model, findings);
  return findings.verdict();
}
