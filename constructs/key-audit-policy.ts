// The key audit log's guard: a ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1, GA since
// Kubernetes 1.30, the chart's minimum) on the audit ConfigMaps of the release namespace: every
// ConfigMap that carries the audit label or is named like a shard (`nls-key-audit-…`), labelled
// or not, on CREATE, UPDATE and DELETE.
//
// What it guarantees, together with RBAC:
// - An entry, once written, is never changed or removed: an UPDATE (or patch) of an audit
//   ConfigMap must keep every existing data entry with its value. Adding entries, which is all the
//   operator, the portal and `nls keys` do, passes.
// - A shard is what it says: named `nls-key-audit-<day>[-<n>]`, labelled with the audit label and
//   that day, labels that never change, never `immutable` (every append of the day would fail)
//   and without owner references (the garbage collector must not remove it). So no one can
//   pre-create an unlabelled shard that appends would land in, outside this policy and invisible
//   to `nls keys audit`, nor move a shard to another day.
// - An audit ConfigMap is deleted only by cluster administrators (group system:masters, e.g. to
//   prune old days) and by the namespace controller when the whole namespace goes.
// What it does not guarantee: who writes an entry. Anyone allowed to create or patch ConfigMaps in
// the namespace (the operator, the portal, namespace admins running `nls keys`) can append one.
// Removing the policy itself needs cluster-admin rights (it is cluster-scoped).
import { k8s } from 'cdk8s-plus-28';
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { AUDIT_CONFIGMAP_PREFIX, LABEL_KEY_AUDIT, LABEL_KEY_AUDIT_DAY } from '../src/translate/keys/audit';
import { clusterMeta } from './labels';
import { OPERATOR_COMPONENT } from './operator';
import { RenderContext } from './render-context';

export interface KeyAuditPolicyProps {
  /** How values and names are rendered. */
  readonly context: RenderContext;
}

/** Who may delete an audit ConfigMap: the namespace controller (with or without per-controller credentials). */
export const AUDIT_DELETERS = ['system:serviceaccount:kube-system:namespace-controller', 'system:kube-controller-manager'];

const label = `object.metadata.labels`;
const writes = `request.operation == 'DELETE'`;
/** An audit ConfigMap: named like a shard or carrying the audit label, labelled or not. */
const isAudit = (o: string) => `(${o} != null && (${o}.metadata.name.startsWith('${AUDIT_CONFIGMAP_PREFIX}') || (has(${o}.metadata.labels) && '${LABEL_KEY_AUDIT}' in ${o}.metadata.labels)))`;
export const AUDIT_MATCH_CONDITION = { name: 'key-audit-configmaps', expression: `${isAudit('object')} || ${isAudit('oldObject')}` };

const VALIDATIONS = [
  {
    expression: `request.operation != 'UPDATE' || !has(oldObject.data) || oldObject.data.all(k, has(object.data) && k in object.data && object.data[k] == oldObject.data[k])`,
    message: 'key audit entries are append-only: an update may add entries but never change or remove one',
    reason: 'Forbidden',
  },
  {
    expression:
      `${writes} || (has(${label}) && '${LABEL_KEY_AUDIT}' in ${label} && ${label}['${LABEL_KEY_AUDIT}'] == 'true' && '${LABEL_KEY_AUDIT_DAY}' in ${label} && ` +
      `object.metadata.name.startsWith('${AUDIT_CONFIGMAP_PREFIX}' + ${label}['${LABEL_KEY_AUDIT_DAY}']))`,
    // The name cannot change, so this also pins the day.
    message: `an audit ConfigMap keeps its labels ${LABEL_KEY_AUDIT}: "true" and ${LABEL_KEY_AUDIT_DAY}: <day>, and is named ${AUDIT_CONFIGMAP_PREFIX}<day>[-<n>]`,
    reason: 'Forbidden',
  },
  {
    expression: `${writes} || !has(object.immutable) || object.immutable == false`,
    message: 'an audit ConfigMap is never immutable: every later entry of its day is appended to it',
    reason: 'Forbidden',
  },
  {
    expression: `${writes} || !has(object.metadata.ownerReferences) || size(object.metadata.ownerReferences) == 0`,
    message: 'an audit ConfigMap has no owner references: the garbage collector must never remove it',
    reason: 'Forbidden',
  },
  {
    expression: `request.operation != 'DELETE' || (has(request.userInfo.groups) && request.userInfo.groups.exists(g, g == 'system:masters')) || request.userInfo.username in [${AUDIT_DELETERS.map((u) => `'${u}'`).join(', ')}]`,
    message: 'key audit ConfigMaps can only be deleted by cluster administrators (system:masters)',
    reason: 'Forbidden',
  },
];

export function keyAuditPolicyName(ctx: RenderContext): string {
  return `${ctx.fullname}-key-audit`;
}

export class KeyAuditPolicy extends Construct {
  constructor(scope: Construct, id: string, props: KeyAuditPolicyProps) {
    super(scope, id);
    const ctx = props.context;
    const name = keyAuditPolicyName(ctx);
    // cdk8s-plus-28 types only the v1beta1 shape, which v1 kept field for field; rendered as v1.
    const policy: k8s.KubeValidatingAdmissionPolicyV1Beta1Props = {
      metadata: clusterMeta(ctx, name, OPERATOR_COMPONENT),
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ctx.namespace } },
          // No object selector: a ConfigMap named like a shard without the label must be seen too.
          resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE', 'DELETE'], resources: ['configmaps'] }],
        },
        matchConditions: [AUDIT_MATCH_CONDITION],
        validations: VALIDATIONS,
      },
    };
    new ApiObject(this, 'Policy', { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy', ...policy });
    const binding: k8s.KubeValidatingAdmissionPolicyBindingV1Beta1Props = {
      metadata: clusterMeta(ctx, name, OPERATOR_COMPONENT),
      spec: { policyName: name, validationActions: ['Deny'] },
    };
    new ApiObject(this, 'Binding', { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', ...binding });
  }
}
