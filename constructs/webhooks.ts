// Admission webhooks: the webhook Service, validating and mutating configurations for all three kinds
// (the AgentDeployment entries switchable for the guarded upgrade) and the upgrade guard.
//
// caBundle is never rendered. The operator (self-managed mode) or cert-manager's cainjector writes
// it; because the chart does not own the field, `helm upgrade` (3-way merge in helm 3, server-side
// apply in helm 4), `kubectl apply` of the deploy/ bundles and Argo CD leave the injected CA alone.
// Rendering it from a `lookup` would instead break `helm template` and GitOps rendering.
import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { kubeObject } from './kube-object';
import { clusterMeta, namespacedMeta, selectorLabels } from './labels';
import { API_GROUP, API_VERSION, WEBHOOK_ENTRY, objectNames } from './names';
import { certManagerMode, OPERATOR_COMPONENT, serviceAccountName } from './operator';
import { cond, helmValue, RenderContext } from './render-context';

export interface WebhooksProps {
  /** How values and names are rendered. */
  readonly context: RenderContext;
}

const KINDS = [
  { kind: 'LLMModel', plural: 'llmmodels' },
  { kind: 'PassthroughModel', plural: 'passthroughmodels' },
  { kind: 'AgentDeployment', plural: 'agentdeployments' },
] as const;

export const agentDeploymentRoutes = cond.truthy('webhook.agentDeployment.enabled');
export const upgradeGuardEnabled = cond.truthy('webhook.upgradeGuard.enabled');

// v1beta1 only: with matchPolicy Equivalent the API server converts a v1alpha1 write to v1beta1
// (through the CRD's conversion webhook) before calling these webhooks, so they see one version.
function rules(plural: string): k8s.RuleWithOperations[] {
  return [{ apiGroups: [API_GROUP], apiVersions: [API_VERSION], operations: ['CREATE', 'UPDATE'], resources: [plural], scope: 'Namespaced' }];
}

/** The entries of either configuration (a MutatingWebhook is a ValidatingWebhook plus reinvocationPolicy). */
function entries(ctx: RenderContext, type: 'validate' | 'mutate'): k8s.MutatingWebhook[] {
  const names = objectNames(ctx);
  return KINDS.flatMap(({ kind, plural }) => {
    const entry: k8s.MutatingWebhook = {
      name: WEBHOOK_ENTRY[type](kind),
      admissionReviewVersions: ['v1'],
      clientConfig: { service: { name: names.webhookService, namespace: ctx.namespace, path: `/${type}-${kind.toLowerCase()}`, port: 443 } },
      failurePolicy: 'Fail',
      matchPolicy: 'Equivalent',
      sideEffects: 'None',
      timeoutSeconds: helmValue<number>(ctx.value('webhook.timeoutSeconds')),
      rules: rules(plural),
      ...(type === 'mutate' ? { reinvocationPolicy: 'Never' } : {}),
    };
    return kind === 'AgentDeployment' ? ctx.whenItem(agentDeploymentRoutes, entry) : [entry];
  });
}

function caInjection(ctx: RenderContext) {
  const names = objectNames(ctx);
  return ctx.when(certManagerMode, { annotations: { 'cert-manager.io/inject-ca-from': `${ctx.namespace}/${names.webhookCertificate}` } });
}

export class WebhookService extends Construct {
  constructor(scope: Construct, id: string, props: WebhooksProps) {
    super(scope, id);
    const ctx = props.context;
    kubeObject(k8s.KubeService, this, 'Resource', {
      metadata: namespacedMeta(ctx, objectNames(ctx).webhookService, OPERATOR_COMPONENT),
      spec: {
        type: 'ClusterIP',
        selector: selectorLabels(ctx, OPERATOR_COMPONENT),
        ports: [{ name: 'webhook', port: 443, targetPort: k8s.IntOrString.fromString('webhook'), protocol: 'TCP' }],
      },
    });
  }
}

export class ValidatingWebhooks extends Construct {
  constructor(scope: Construct, id: string, props: WebhooksProps) {
    super(scope, id);
    const ctx = props.context;
    kubeObject(k8s.KubeValidatingWebhookConfiguration, this, 'Resource', {
      metadata: clusterMeta(ctx, objectNames(ctx).validatingWebhookConfiguration, 'webhook', caInjection(ctx)),
      webhooks: entries(ctx, 'validate'),
    });
  }
}

export class MutatingWebhooks extends Construct {
  constructor(scope: Construct, id: string, props: WebhooksProps) {
    super(scope, id);
    const ctx = props.context;
    kubeObject(k8s.KubeMutatingWebhookConfiguration, this, 'Resource', {
      metadata: clusterMeta(ctx, objectNames(ctx).mutatingWebhookConfiguration, 'webhook', caInjection(ctx)),
      webhooks: entries(ctx, 'mutate'),
    });
  }
}

/**
 * The upgrade guard (seed 000): a fail-closed mutating webhook for AgentDeployment CREATE/UPDATE
 * pointing at a Service that deliberately does not exist, so every such write is denied. Mutating
 * admission runs before validating admission, so a denied write never reaches an old validator.
 */
export class AgentDeploymentUpgradeGuard extends Construct {
  constructor(scope: Construct, id: string, props: WebhooksProps) {
    super(scope, id);
    const ctx = props.context;
    const names = objectNames(ctx);
    kubeObject(k8s.KubeMutatingWebhookConfiguration, this, 'Resource', {
      metadata: clusterMeta(ctx, names.agentDeploymentGuard, 'upgrade-guard'),
      webhooks: [
        {
          name: WEBHOOK_ENTRY.guard,
          admissionReviewVersions: ['v1'],
          clientConfig: {
            service: { name: names.agentDeploymentGuard, namespace: ctx.namespace, path: '/deny-agentdeployment-writes-during-controller-rollout', port: 443 },
          },
          failurePolicy: 'Fail',
          matchPolicy: 'Equivalent',
          sideEffects: 'None',
          timeoutSeconds: 1,
          reinvocationPolicy: 'Never',
          rules: rules('agentdeployments'),
          // The operator's own writes go on: removing its finalizer from a deleted agent is an
          // UPDATE, and denying it would hang every deletion until the upgrade ends.
          matchConditions: [
            { name: 'not-the-operator', expression: `request.userInfo.username != 'system:serviceaccount:${ctx.namespace}:${serviceAccountName(ctx)}'` },
          ],
        },
      ],
    });
  }
}
