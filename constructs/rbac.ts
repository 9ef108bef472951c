// Least-privilege RBAC for the operator. Cluster-wide only what must be (our kinds and the objects
// it generates for them in any namespace, gateway kinds, SubjectAccessReviews, its own webhook
// configurations by name); Secrets, Leases and the vLLM endpoint picker's ServiceAccount, Role and
// RoleBinding only in the release namespace, where models live (the webhook admits them nowhere else).
import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { kubeObject } from './kube-object';
import { clusterMeta, namespacedMeta } from './labels';
import { API_GROUP, objectNames } from './names';
import { OPERATOR_COMPONENT, serviceAccountName } from './operator';
import { RenderContext } from './render-context';

export interface OperatorRbacProps {
  /** How values and names are rendered. */
  readonly context: RenderContext;
}

const READ = ['get', 'list', 'watch'];
// Generated objects are written by server-side apply (patch; create when new) and deleted; the
// operator never replaces them (no update). The e2e suite's audit log checks this list.
const APPLY = [...READ, 'create', 'patch', 'delete'];

/** The release-namespace Role's rules (exported for the least-privilege unit test). */
export function namespaceRules() {
  return [
    // API-key Secrets, the self-managed serving certificate and keys minted for agents.
    // (update: the self-managed certificate Secret is replaced with a resourceVersion guard.)
    { apiGroups: [''], resources: ['secrets'], verbs: [...APPLY, 'update'] },
    // Leader election reads, creates and renews one Lease.
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
    // The vLLM provider's endpoint picker: its ServiceAccount, Role and RoleBinding per model.
    { apiGroups: [''], resources: ['serviceaccounts'], verbs: APPLY },
    { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles', 'rolebindings'], verbs: APPLY },
  ];
}

/** The ClusterRole's rules (exported for the unit test that checks least privilege). */
export function clusterRules(ctx: RenderContext) {
  const names = objectNames(ctx);
  return [
    // Finalizers by JSON patch, status by server-side apply: patch only, never a replace.
    { apiGroups: [API_GROUP], resources: ['llmmodels', 'passthroughmodels', 'agentdeployments'], verbs: [...READ, 'patch'] },
    { apiGroups: [API_GROUP], resources: ['llmmodels/status', 'passthroughmodels/status', 'agentdeployments/status'], verbs: ['get', 'patch'] },
    // Needed to set blockOwnerDeletion on generated objects where OwnerReferencesPermissionEnforcement runs.
    { apiGroups: [API_GROUP], resources: ['llmmodels/finalizers', 'passthroughmodels/finalizers', 'agentdeployments/finalizers'], verbs: ['update'] },
    { apiGroups: [''], resources: ['configmaps', 'services', 'persistentvolumeclaims'], verbs: APPLY },
    { apiGroups: ['apps'], resources: ['deployments'], verbs: APPLY },
    { apiGroups: ['batch'], resources: ['jobs'], verbs: APPLY },
    // pods and inferencepools (below) also cover what the endpoint picker's Role grants: the API
    // server lets a subject create a Role only with rights it holds itself (no escalate/bind).
    { apiGroups: [''], resources: ['pods'], verbs: READ },
    { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
    { apiGroups: ['aigateway.envoyproxy.io'], resources: ['aigatewayroutes', 'aiservicebackends', 'backendsecuritypolicies'], verbs: APPLY },
    { apiGroups: ['gateway.envoyproxy.io'], resources: ['backends', 'securitypolicies'], verbs: APPLY },
    { apiGroups: ['gateway.networking.k8s.io'], resources: ['backendtlspolicies'], verbs: APPLY },
    // The AI Gateway controller generates HTTPRoutes; the operator only waits for them to go.
    { apiGroups: ['gateway.networking.k8s.io'], resources: ['httproutes'], verbs: ['get'] },
    { apiGroups: ['inference.networking.k8s.io'], resources: ['inferencepools'], verbs: APPLY },
    // The LLMModel providers' own kinds, at whichever version is served (src/translate/providers).
    { apiGroups: ['kaito.sh'], resources: ['workspaces'], verbs: APPLY },
    { apiGroups: ['nvidia.com'], resources: ['dynamographdeployments'], verbs: APPLY },
    { apiGroups: ['ray.io'], resources: ['rayservices'], verbs: APPLY },
    { apiGroups: ['llm-d.ai'], resources: ['inferenceobjectives'], verbs: APPLY },
    // llm-d's scheduler reads InferenceModelRewrites; its Role may only grant what the operator holds.
    { apiGroups: ['llm-d.ai'], resources: ['inferencemodelrewrites'], verbs: READ },
    // Detects missing gateway/provider CRDs so models degrade with a condition instead of failing.
    { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: READ },
    { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
    // caBundle injection into our own configurations only; the guard is readable for status checks.
    {
      apiGroups: ['admissionregistration.k8s.io'],
      resources: ['validatingwebhookconfigurations'],
      resourceNames: [names.validatingWebhookConfiguration],
      verbs: ['get', 'patch'],
    },
    {
      apiGroups: ['admissionregistration.k8s.io'],
      resources: ['mutatingwebhookconfigurations'],
      resourceNames: [names.mutatingWebhookConfiguration, names.agentDeploymentGuard],
      verbs: ['get', 'patch'],
    },
  ];
}

export class OperatorRbac extends Construct {
  constructor(scope: Construct, id: string, props: OperatorRbacProps) {
    super(scope, id);
    const ctx = props.context;
    const names = objectNames(ctx);
    const subject = { kind: 'ServiceAccount', name: serviceAccountName(ctx), namespace: ctx.namespace };
    kubeObject(k8s.KubeClusterRole, this, 'ClusterRole', {
      metadata: clusterMeta(ctx, names.clusterRole, OPERATOR_COMPONENT),
      rules: clusterRules(ctx),
    });
    kubeObject(k8s.KubeClusterRoleBinding, this, 'ClusterRoleBinding', {
      metadata: clusterMeta(ctx, names.clusterRole, OPERATOR_COMPONENT),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: names.clusterRole },
      subjects: [subject],
    });
    kubeObject(k8s.KubeRole, this, 'Role', {
      metadata: namespacedMeta(ctx, names.role, OPERATOR_COMPONENT),
      rules: namespaceRules(),
    });
    kubeObject(k8s.KubeRoleBinding, this, 'RoleBinding', {
      metadata: namespacedMeta(ctx, names.role, OPERATOR_COMPONENT),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: names.role },
      subjects: [subject],
    });
  }
}

const KIND_RESOURCES = ['llmmodels', 'passthroughmodels', 'agentdeployments'];
const aggregateTo = (...roles: string[]) => Object.fromEntries(roles.map((r) => [`rbac.authorization.k8s.io/aggregate-to-${r}`, 'true']));

/**
 * Rights on the three kinds for people, merged into Kubernetes' built-in user-facing roles by
 * label: whoever holds `view` in a namespace may read models and agents there, `edit` and `admin`
 * may also write them. Status stays the operator's. (Models are admitted in the release namespace
 * only; agents anywhere.)
 */
export class UserFacingRoles extends Construct {
  constructor(scope: Construct, id: string, props: OperatorRbacProps) {
    super(scope, id);
    const ctx = props.context;
    const meta = (suffix: string, labels: Record<string, string>) => {
      const m = clusterMeta(ctx, `${ctx.fullname}-${suffix}`, 'user-roles');
      return { ...m, labels: { ...m.labels, ...labels } };
    };
    kubeObject(k8s.KubeClusterRole, this, 'View', {
      metadata: meta('view', aggregateTo('view', 'edit', 'admin')),
      rules: [{ apiGroups: [API_GROUP], resources: [...KIND_RESOURCES, ...KIND_RESOURCES.map((r) => `${r}/status`)], verbs: READ }],
    });
    kubeObject(k8s.KubeClusterRole, this, 'Edit', {
      metadata: meta('edit', aggregateTo('edit', 'admin')),
      rules: [{ apiGroups: [API_GROUP], resources: KIND_RESOURCES, verbs: ['create', 'update', 'patch', 'delete', 'deletecollection'] }],
    });
  }
}
