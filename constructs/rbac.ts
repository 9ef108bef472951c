// Least-privilege RBAC for the operator, following the tenancy model in docs/security.md: models
// live in the release namespace, AgentDeployments there and in the namespaces listed in the
// `watchNamespaces` value. Each of those namespaces gets a Role with exactly what reconciling there
// needs; the ClusterRole holds only what has no namespace (CRDs, SubjectAccessReviews, the
// release's own webhook configurations by name). No right reaches a namespace nobody listed.
import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { kubeObject } from './kube-object';
import { clusterMeta, namespacedMeta } from './labels';
import { CRD_NAMES } from '../src/api/kinds';
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

const OUR_KINDS = ['llmmodels', 'passthroughmodels', 'agentdeployments'];

/**
 * What reconciling AgentDeployments needs in a namespace: the agents themselves (finalizers by
 * JSON patch, status by server-side apply), their workloads, the Secret with each agent's key
 * (and `get` on the credential Secrets it names, which the webhook has already checked the user
 * may read), Events, and `get` on models for the webhook's model-reference check.
 */
export function agentNamespaceRules() {
  return [
    { apiGroups: [API_GROUP], resources: ['agentdeployments'], verbs: [...READ, 'patch'] },
    { apiGroups: [API_GROUP], resources: ['agentdeployments/status'], verbs: ['get', 'patch'] },
    // Needed to set blockOwnerDeletion on generated objects where OwnerReferencesPermissionEnforcement runs.
    { apiGroups: [API_GROUP], resources: ['agentdeployments/finalizers'], verbs: ['update'] },
    { apiGroups: [API_GROUP], resources: ['llmmodels', 'passthroughmodels'], verbs: ['get'] },
    { apiGroups: ['apps'], resources: ['deployments'], verbs: APPLY },
    { apiGroups: ['batch'], resources: ['jobs'], verbs: APPLY },
    { apiGroups: [''], resources: ['services', 'configmaps'], verbs: APPLY },
    // No list or watch: the operator reads Secrets one by one, by name.
    { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'create', 'patch', 'delete'] },
    { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
    // An HPA that targets an agent's Deployment owns its replicas; the operator then leaves them out.
    { apiGroups: ['autoscaling'], resources: ['horizontalpodautoscalers'], verbs: ['list'] },
  ];
}

/**
 * The release namespace Role: models live here (and agents may), so everything a model generates
 * is written here and nowhere else.
 */
export function namespaceRules() {
  return [
    { apiGroups: [API_GROUP], resources: OUR_KINDS, verbs: [...READ, 'patch'] },
    { apiGroups: [API_GROUP], resources: OUR_KINDS.map((r) => `${r}/status`), verbs: ['get', 'patch'] },
    { apiGroups: [API_GROUP], resources: OUR_KINDS.map((r) => `${r}/finalizers`), verbs: ['update'] },
    // API-key Secrets, the self-managed serving certificate and keys minted for agents.
    // (update: the self-managed certificate Secret is replaced with a resourceVersion guard.)
    { apiGroups: [''], resources: ['secrets'], verbs: [...APPLY, 'update'] },
    // Leader election reads, creates and renews one Lease.
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
    { apiGroups: [''], resources: ['configmaps', 'services', 'persistentvolumeclaims'], verbs: APPLY },
    { apiGroups: ['apps'], resources: ['deployments'], verbs: APPLY },
    { apiGroups: ['batch'], resources: ['jobs'], verbs: APPLY },
    // An HPA that targets a generated Deployment owns its replicas; the operator then leaves them out.
    { apiGroups: ['autoscaling'], resources: ['horizontalpodautoscalers'], verbs: ['list'] },
    // pods and inferencepools (below) also cover what the endpoint picker's Role grants: the API
    // server lets a subject create a Role only with rights it holds itself (no escalate/bind).
    { apiGroups: [''], resources: ['pods'], verbs: READ },
    { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
    // The vLLM provider's endpoint picker: its ServiceAccount, Role and RoleBinding per model.
    { apiGroups: [''], resources: ['serviceaccounts'], verbs: APPLY },
    { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles', 'rolebindings'], verbs: APPLY },
    { apiGroups: ['aigateway.envoyproxy.io'], resources: ['aigatewayroutes', 'aiservicebackends', 'backendsecuritypolicies'], verbs: APPLY },
    { apiGroups: ['gateway.envoyproxy.io'], resources: ['backends', 'securitypolicies', 'backendtrafficpolicies'], verbs: APPLY },
    { apiGroups: ['gateway.networking.k8s.io'], resources: ['backendtlspolicies'], verbs: APPLY },
    // The AI Gateway controller generates HTTPRoutes; the operator waits for them to go, and
    // watches their acceptance for the Programmed condition.
    { apiGroups: ['gateway.networking.k8s.io'], resources: ['httproutes'], verbs: READ },
    { apiGroups: ['inference.networking.k8s.io'], resources: ['inferencepools'], verbs: APPLY },
    // Only to grant it to the endpoint picker's Role: EPP v1.0.2 watches InferenceObjectives.
    { apiGroups: ['inference.networking.x-k8s.io'], resources: ['inferenceobjectives'], verbs: READ },
    // The LLMModel providers' own kinds, at whichever version is served (src/translate/providers).
    { apiGroups: ['kaito.sh'], resources: ['workspaces'], verbs: APPLY },
    { apiGroups: ['nvidia.com'], resources: ['dynamographdeployments'], verbs: APPLY },
    { apiGroups: ['ray.io'], resources: ['rayservices'], verbs: APPLY },
    { apiGroups: ['llm-d.ai'], resources: ['inferenceobjectives'], verbs: APPLY },
    // The serving pods' PodMonitor (spec.serving.monitoring.enabled): read before apply (adoption
    // check), applied (create on first apply), deleted when turned off. Not watched, so no list/watch.
    { apiGroups: ['monitoring.coreos.com'], resources: ['podmonitors'], verbs: ['get', 'create', 'patch', 'delete'] },
    // llm-d's scheduler reads InferenceModelRewrites; its Role may only grant what the operator holds.
    { apiGroups: ['llm-d.ai'], resources: ['inferencemodelrewrites'], verbs: READ },
  ];
}

/** The ClusterRole's rules: only what has no namespace (exported for the least-privilege unit test). */
export function clusterRules(ctx: RenderContext) {
  const names = objectNames(ctx);
  return [
    // Detects missing gateway/provider CRDs so models degrade with a condition instead of failing.
    { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: READ },
    // spec.conversion of our own CRDs only: this release's Service and CA (src/webhook/conversion-crds.ts).
    { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], resourceNames: [...CRD_NAMES], verbs: ['patch'] },
    // Whether the Service another release pointed our CRDs' conversion at still exists (then it is left alone).
    { apiGroups: [''], resources: ['services'], verbs: ['get'] },
    // The webhooks' confused-deputy check asks whether the requesting user may read a Secret.
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

export interface OtherNamespaceRbacProps extends OperatorRbacProps {
  /** The namespace the Role goes to (a template variable in the chart). */
  readonly namespace: string;
}

/** A Role named `roleName` in another namespace, bound to the operator's ServiceAccount. */
function operatorRoleIn(scope: Construct, props: OtherNamespaceRbacProps, roleName: string, rules: k8s.PolicyRule[]): void {
  const ctx = props.context;
  const meta = { ...namespacedMeta(ctx, roleName, OPERATOR_COMPONENT), namespace: props.namespace };
  kubeObject(k8s.KubeRole, scope, 'Role', { metadata: meta, rules });
  kubeObject(k8s.KubeRoleBinding, scope, 'RoleBinding', {
    metadata: meta,
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: roleName },
    subjects: [{ kind: 'ServiceAccount', name: serviceAccountName(ctx), namespace: ctx.namespace }],
  });
}

/** The operator's Role and RoleBinding in one more namespace (of `watchNamespaces`) where AgentDeployments are reconciled. */
export class AgentNamespaceRbac extends Construct {
  constructor(scope: Construct, id: string, props: OtherNamespaceRbacProps) {
    super(scope, id);
    operatorRoleIn(this, props, objectNames(props.context).agentRole, agentNamespaceRules());
  }
}

/** What the Programmed condition reads in a Gateway's namespace: Envoy Gateway's proxy Deployments. */
export function gatewayNamespaceRules() {
  return [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['list', 'watch'] }];
}

/** The operator's read-only Role and RoleBinding in a Gateway's namespace (`platform.proxyStatus`). */
export class GatewayNamespaceRbac extends Construct {
  constructor(scope: Construct, id: string, props: OtherNamespaceRbacProps) {
    super(scope, id);
    operatorRoleIn(this, props, objectNames(props.context).proxyStatusRole, gatewayNamespaceRules());
  }
}

const aggregateTo = (...roles: string[]) => Object.fromEntries(roles.map((r) => [`rbac.authorization.k8s.io/aggregate-to-${r}`, 'true']));

/**
 * Rights on the three kinds for people, merged into Kubernetes' built-in user-facing roles by
 * label: whoever holds `view` in a namespace may read models and agents there, `edit` and `admin`
 * may also write them. Status stays the operator's. (Models are admitted in the release namespace
 * only; agents there and in the `watchNamespaces`.)
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
      rules: [{ apiGroups: [API_GROUP], resources: [...OUR_KINDS, ...OUR_KINDS.map((r) => `${r}/status`)], verbs: READ }],
    });
    kubeObject(k8s.KubeClusterRole, this, 'Edit', {
      metadata: meta('edit', aggregateTo('edit', 'admin')),
      rules: [
        { apiGroups: [API_GROUP], resources: OUR_KINDS, verbs: ['create', 'update', 'patch', 'delete', 'deletecollection'] },
        // Binding an AgentDeployment to a restricted model (docs/api-keys.md): whoever may edit a
        // model may already make it public, so `bind` gives editors of the models' namespace nothing more.
        { apiGroups: [API_GROUP], resources: ['llmmodels', 'passthroughmodels'], verbs: ['bind'] },
      ],
    });
  }
}
