// The post-install check: a Helm hook Job that runs `nls wait-webhooks` from the operator image after
// install, upgrade and rollback. Helm waits for hook Jobs, so the release is reported deployed only
// once the API server reaches the webhooks through their Service, not merely once the pod is Ready
// (its endpoint still has to reach every node's proxy). Its ServiceAccount may only create
// PassthroughModels in the release namespace (the probe is a dry run); all four objects are hooks,
// deleted once the check succeeds and kept after a failure for `kubectl logs`.
// Helm-only: plain bundles have no hook runner, so they leave the file out.
import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { kubeObject } from './kube-object';
import { namespacedMeta } from './labels';
import { API_GROUP } from './names';
import { operatorImage, restrictedContainerSecurity } from './operator';
import { cond, helmValue, RenderContext } from './render-context';

export const WEBHOOK_CHECK_COMPONENT = 'webhook-check';
export const webhookCheckEnabled = cond.truthy('webhook.installCheck.enabled');

export interface WebhookCheckProps {
  /** How values and names are rendered. */
  readonly context: RenderContext;
}

/** Hook annotations; RBAC objects first (lower weight), then the Job. */
function hook(weight: number): Record<string, string> {
  return {
    'helm.sh/hook': 'post-install,post-upgrade,post-rollback',
    'helm.sh/hook-weight': String(weight),
    'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded',
  };
}

function checkTimeout(values: unknown): number {
  return (values as { webhook: { installCheck: { timeoutSeconds: number } } }).webhook.installCheck.timeoutSeconds;
}

export class WebhookCheck extends Construct {
  constructor(scope: Construct, id: string, props: WebhookCheckProps) {
    super(scope, id);
    const ctx = props.context;
    const name = `${ctx.fullname}-webhook-check`;
    const meta = (weight: number) => namespacedMeta(ctx, name, WEBHOOK_CHECK_COMPONENT, { annotations: hook(weight) });
    kubeObject(k8s.KubeServiceAccount, this, 'ServiceAccount', { metadata: meta(-5), automountServiceAccountToken: true });
    kubeObject(k8s.KubeRole, this, 'Role', {
      metadata: meta(-5),
      // The probe is a dry-run create; RBAC has no dry-run-only verb.
      rules: [{ apiGroups: [API_GROUP], resources: ['passthroughmodels'], verbs: ['create'] }],
    });
    kubeObject(k8s.KubeRoleBinding, this, 'RoleBinding', {
      metadata: meta(-5),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [{ kind: 'ServiceAccount', name, namespace: ctx.namespace }],
    });
    kubeObject(k8s.KubeJob, this, 'Job', {
      metadata: meta(0),
      spec: {
        backoffLimit: 0,
        template: {
          metadata: { labels: namespacedMeta(ctx, name, WEBHOOK_CHECK_COMPONENT).labels },
          spec: {
            serviceAccountName: name,
            restartPolicy: 'Never',
            ...ctx.block('imagePullSecrets', 'imagePullSecrets'),
            // Same placement as the operator: the image is already on those nodes.
            ...ctx.block('nodeSelector', 'operator.nodeSelector'),
            ...ctx.block('tolerations', 'operator.tolerations'),
            securityContext: { runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, seccompProfile: { type: 'RuntimeDefault' } },
            containers: [
              {
                name: 'wait-webhooks',
                image: operatorImage(ctx),
                imagePullPolicy: helmValue<string>(ctx.value('operator.image.pullPolicy')),
                command: [
                  '/nodejs/bin/node', '/app/lib/src/cli/main.js', 'wait-webhooks', '--namespace', ctx.namespace,
                  '--timeout', helmValue<string>(ctx.expression('printf "%ds" (int .Values.webhook.installCheck.timeoutSeconds) | quote', (v) => `${checkTimeout(v)}s`)),
                ],
                ...ctx.block('resources', 'webhook.installCheck.resources'),
                securityContext: restrictedContainerSecurity(),
              },
            ],
          },
        },
        // A backstop in case the command itself hangs: its own --timeout ends it first.
        activeDeadlineSeconds: helmValue<number>(ctx.expression('add (int .Values.webhook.installCheck.timeoutSeconds) 60', (v) => checkTimeout(v) + 60)),
      },
    });
  }
}
