// Least-privilege RBAC for the operator. Cluster-wide only what must be (our kinds and the objects
// it generates for them in any namespace, gateway kinds, SubjectAccessReviews, its own webhook
// configurations by name); Secrets and Leases only in the release namespace.
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { clusterMeta, namespacedMeta } from './labels';
import { API_GROUP, objectNames } from './names';
import { OPERATOR_COMPONENT, serviceAccountName } from './operator';
import { RenderContext } from './render-context';

export interface OperatorRbacProps {
  /** How values and names are rendered. */
  readonly context: RenderContext;
}

const READ = ['get', 'list', 'watch'];
const WRITE = [...READ, 'create', 'update', 'patch', 'delete'];

/** The ClusterRole's rules (exported for the unit test that checks least privilege). */
export function clusterRules(ctx: RenderContext) {
  const names = objectNames(ctx);
  return [
    { apiGroups: [API_GROUP], resources: ['llmmodels', 'passthroughmodels', 'agentdeployments'], verbs: [...READ, 'update', 'patch'] },
    { apiGroups: [API_GROUP], resources: ['llmmodels/status', 'passthroughmodels/status', 'agentdeployments/status'], verbs: ['get', 'update', 'patch'] },
    { apiGroups: [API_GROUP], resources: ['llmmodels/finalizers', 'passthroughmodels/finalizers', 'agentdeployments/finalizers'], verbs: ['update'] },
    { apiGroups: [''], resources: ['configmaps', 'services', 'persistentvolumeclaims'], verbs: WRITE },
    { apiGroups: ['apps'], resources: ['deployments'], verbs: WRITE },
    { apiGroups: ['batch'], resources: ['jobs'], verbs: WRITE },
    { apiGroups: [''], resources: ['pods', 'namespaces'], verbs: READ },
    { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
    { apiGroups: ['aigateway.envoyproxy.io'], resources: ['aigatewayroutes', 'aiservicebackends', 'backendsecuritypolicies', 'gatewayconfigs'], verbs: WRITE },
    { apiGroups: ['gateway.envoyproxy.io'], resources: ['backends', 'securitypolicies', 'backendtrafficpolicies', 'clienttrafficpolicies'], verbs: WRITE },
    { apiGroups: ['gateway.networking.k8s.io'], resources: ['httproutes', 'backendtlspolicies', 'referencegrants'], verbs: WRITE },
    { apiGroups: ['gateway.networking.k8s.io'], resources: ['gateways', 'gatewayclasses'], verbs: READ },
    { apiGroups: ['inference.networking.k8s.io'], resources: ['inferencepools'], verbs: WRITE },
    // Detects missing gateway/provider CRDs so models degrade with a condition instead of failing.
    { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: READ },
    { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
    // caBundle injection into our own configurations only; the guard is readable for status checks.
    {
      apiGroups: ['admissionregistration.k8s.io'],
      resources: ['validatingwebhookconfigurations'],
      resourceNames: [names.validatingWebhookConfiguration],
      verbs: ['get', 'update', 'patch'],
    },
    {
      apiGroups: ['admissionregistration.k8s.io'],
      resources: ['mutatingwebhookconfigurations'],
      resourceNames: [names.mutatingWebhookConfiguration, names.agentDeploymentGuard],
      verbs: ['get', 'update', 'patch'],
    },
  ];
}

export class OperatorRbac extends Construct {
  constructor(scope: Construct, id: string, props: OperatorRbacProps) {
    super(scope, id);
    const ctx = props.context;
    const names = objectNames(ctx);
    const subject = { kind: 'ServiceAccount', name: serviceAccountName(ctx), namespace: ctx.namespace };
    new ApiObject(this, 'ClusterRole', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: clusterMeta(ctx, names.clusterRole, OPERATOR_COMPONENT) as never,
      rules: clusterRules(ctx),
    });
    new ApiObject(this, 'ClusterRoleBinding', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: clusterMeta(ctx, names.clusterRole, OPERATOR_COMPONENT) as never,
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: names.clusterRole },
      subjects: [subject],
    });
    new ApiObject(this, 'Role', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: namespacedMeta(ctx, names.role, OPERATOR_COMPONENT) as never,
      rules: [
        // API-key Secrets, the self-managed serving certificate and keys minted for agents.
        { apiGroups: [''], resources: ['secrets'], verbs: WRITE },
        { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: WRITE },
      ],
    });
    new ApiObject(this, 'RoleBinding', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: namespacedMeta(ctx, names.role, OPERATOR_COMPONENT) as never,
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: names.role },
      subjects: [subject],
    });
  }
}
