// What RBAC cannot say about the key portal's writes (issue 29, Medium 6): RBAC `create` cannot be
// limited to names, and `patch` on key objects whose names follow the models would mean `patch` on
// every Secret. So the portal's Role keeps create and patch on Secrets and ConfigMaps of the
// release namespace, and this ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1, GA since
// Kubernetes 1.30, below every minor the chart claims), matched to the portal's ServiceAccount
// only, pins them to the portal's own objects:
// - it creates only Opaque Secrets that are its session Secret or a user's Secret
//   (`nls-portal-user-<hash>`, labelled with that hash), and only audit-shard ConfigMaps (whose
//   shape the key audit policy pins); never a service-account token or any other Secret type, and
//   never a key object (the operator creates those);
// - it updates only the key objects of models (labelled by the operator), its user Secrets, its
//   session Secret and audit shards, and never their labels, annotations, owner references or
//   `immutable`; so it cannot change a provider credential, the webhook's certificate or anything
//   the operator reads, nor make a key object look like another's;
// - it deletes nothing (its Role has no delete either).
// Reads are RBAC's: see docs/key-portal-install.md "The portal's rights" for what the portal can read.
import { k8s } from 'cdk8s-plus-28';
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { AUDIT_CONFIGMAP_PREFIX, LABEL_KEY_AUDIT } from '../src/translate/keys/audit';
import { LABEL_API_KEYS } from '../src/translate/keys/api-keys';
import { LABEL_PORTAL_USER, PORTAL_USER_SECRET_PREFIX } from '../src/translate/keys/portal-users';
import { clusterMeta } from './labels';
import { objectNames } from './names';
import { PORTAL_COMPONENT, portalSessionSecretName } from './portal';
import { RenderContext } from './render-context';

export interface PortalWritePolicyProps {
  /** How values and names are rendered. */
  readonly context: RenderContext;
}

export function portalWritePolicyName(ctx: RenderContext): string {
  return `${ctx.fullname}-portal-writes`;
}

const labelIs = (o: string, label: string, value: string) => `(has(${o}.metadata.labels) && '${label}' in ${o}.metadata.labels && ${o}.metadata.labels['${label}'] == '${value}')`;
/** A user's Secret: named by the hash its label carries. */
const isUserSecret = (o: string) =>
  `(has(${o}.metadata.labels) && '${LABEL_PORTAL_USER}' in ${o}.metadata.labels && ${o}.metadata.name == '${PORTAL_USER_SECRET_PREFIX}' + ${o}.metadata.labels['${LABEL_PORTAL_USER}'])`;
const isAuditShard = (o: string) => `(${o}.metadata.name.startsWith('${AUDIT_CONFIGMAP_PREFIX}') && ${labelIs(o, LABEL_KEY_AUDIT, 'true')})`;
/** Either both lack the field or both hold the same value. */
const unchanged = (field: string) => `(has(object.${field}) == has(oldObject.${field}) && (!has(object.${field}) || object.${field} == oldObject.${field}))`;
const isTrue = (o: string) => `(has(${o}.immutable) && ${o}.immutable == true)`;

/** The policy's validations; `session` is the session Secret's (rendered) name. */
export function portalWriteValidations(session: string) {
  const ownSecret = (o: string) => `(${o}.metadata.name == '${session}' || ${isUserSecret(o)})`;
  return [
    {
      expression: `request.operation != 'DELETE'`,
      message: 'the key portal deletes no Secret or ConfigMap (the operator deletes key objects with their model)',
      reason: 'Forbidden',
    },
    {
      expression: `request.operation != 'CREATE' || !variables.secret || (has(object.type) && object.type == 'Opaque' && ${ownSecret('object')})`,
      message: `the key portal creates only Opaque Secrets that are its session Secret (${session}) or a user's Secret (${PORTAL_USER_SECRET_PREFIX}<hash>, labelled ${LABEL_PORTAL_USER}: <hash>); no other name or type, never a service-account token`,
      reason: 'Forbidden',
    },
    {
      expression: `request.operation != 'CREATE' || variables.secret || ${isAuditShard('object')}`,
      message: `the key portal creates only key audit shards (${AUDIT_CONFIGMAP_PREFIX}<day>, labelled ${LABEL_KEY_AUDIT}: "true"); the operator creates the key metadata ConfigMaps`,
      reason: 'Forbidden',
    },
    {
      expression:
        `request.operation != 'UPDATE' || ${labelIs('oldObject', LABEL_API_KEYS, 'true')} || ` +
        `(variables.secret ? ${ownSecret('oldObject')} : ${isAuditShard('oldObject')})`,
      message: `the key portal updates only models' key objects (labelled ${LABEL_API_KEYS}: "true"), its session and user Secrets, and key audit shards`,
      reason: 'Forbidden',
    },
    {
      expression:
        `request.operation != 'UPDATE' || (${unchanged('metadata.labels')} && ${unchanged('metadata.annotations')} && ${unchanged('metadata.ownerReferences')} && ${isTrue('object')} == ${isTrue('oldObject')})`,
      message: 'the key portal changes only data: labels, annotations, owner references and immutable stay as they are',
      reason: 'Forbidden',
    },
  ];
}

export class PortalWritePolicy extends Construct {
  constructor(scope: Construct, id: string, props: PortalWritePolicyProps) {
    super(scope, id);
    const ctx = props.context;
    const name = portalWritePolicyName(ctx);
    const portalUser = `system:serviceaccount:${ctx.namespace}:${objectNames(ctx).portal}`;
    // cdk8s-plus-28 types only the v1beta1 shape, which v1 kept field for field; rendered as v1.
    const policy: k8s.KubeValidatingAdmissionPolicyV1Beta1Props = {
      metadata: clusterMeta(ctx, name, PORTAL_COMPONENT),
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ctx.namespace } },
          resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE', 'DELETE'], resources: ['secrets', 'configmaps'] }],
        },
        // The portal's requests only: the operator and administrators are not bound by it.
        matchConditions: [{ name: 'portal-service-account', expression: `request.userInfo.username == '${portalUser}'` }],
        variables: [{ name: 'secret', expression: `request.resource.resource == 'secrets'` }],
        validations: portalWriteValidations(portalSessionSecretName(ctx)),
      },
    };
    new ApiObject(this, 'Policy', { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy', ...policy });
    const binding: k8s.KubeValidatingAdmissionPolicyBindingV1Beta1Props = {
      metadata: clusterMeta(ctx, name, PORTAL_COMPONENT),
      spec: { policyName: name, validationActions: ['Deny'] },
    };
    new ApiObject(this, 'Binding', { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', ...binding });
  }
}
