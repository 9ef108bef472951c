// The operator: ServiceAccount, Deployment (restricted Pod Security), metrics Service and, with more
// than one replica, a PodDisruptionBudget. Environment follows the operator process contract.
import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { gatewayContextJson, imageReference, quotasJson } from './helpers';
import { RELEASED_IMAGE_ANNOTATION } from '../src/release-pin';
import { kubeObject } from './kube-object';
import { namespacedMeta, objectLabels, selectorLabels } from './labels';
import { CRD_NAMES } from '../src/api/kinds';
import { CERT_DIR, HEALTH_PORT, METRICS_PORT, WEBHOOK_PORT, objectNames } from './names';
import { cond, helmValue, RenderContext } from './render-context';

export const OPERATOR_COMPONENT = 'operator';
export const OPERATOR_CONTAINER = 'operator';

export interface OperatorProps {
  /** How values and names are rendered. */
  readonly context: RenderContext;
}

/** The ServiceAccount name (the full name unless `serviceAccount.name` is set). */
export function serviceAccountName(ctx: RenderContext): string {
  return ctx.helper('serviceAccountName', (v) => (v as { serviceAccount: { name: string } }).serviceAccount.name || ctx.fullname);
}

/** A container security context meeting the restricted Pod Security profile (a fresh copy each time). */
export function restrictedContainerSecurity(): k8s.SecurityContext {
  return { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } };
}

/** The operator image reference (by digest when one is set). */
export function operatorImage(ctx: RenderContext): string {
  return ctx.helper('operatorImage', (v) => imageReference((v as { operator: { image: { repository: string; tag: string; digest: string } } }).operator.image));
}

/** The young generation's semi-space, MiB: V8 sizes it from the machine's memory (up to 32 MiB on a large node), and a burst of reconciles fills all of it with short-lived API answers before a scavenge. */
export const OPERATOR_SEMI_SPACE_MIB = 1;
/**
 * The old generation's limit as a percentage of the container's memory limit. Node's default
 * is a quarter of it (128 MiB of the default 512Mi), less than the caches of a few thousand
 * models; three quarters leave the rest (about 70 MiB measured: code, TLS, buffers) outside the heap.
 */
export const OPERATOR_OLD_SPACE_PERCENT_OF_LIMIT = 75;
/**
 * V8 heap flags of the operator process (docs/performance.md, "Memory"). `--optimize-for-size`
 * makes V8 grow the heap in smaller steps and collect sooner: peak RSS at 1,000 models fell from
 * about 175 to about 115 MiB for no measurable CPU per reconcile.
 */
export const operatorNodeFlags: readonly string[] = [
  `--max-semi-space-size=${OPERATOR_SEMI_SPACE_MIB}`,
  `--max-old-space-size-percentage=${OPERATOR_OLD_SPACE_PERCENT_OF_LIMIT}`,
  '--optimize-for-size',
];

export const certManagerMode = cond.eq('webhook.certificates.mode', 'cert-manager');
export const multipleReplicas = cond.gt('operator.replicas', 1);

export class OperatorServiceAccount extends Construct {
  constructor(scope: Construct, id: string, props: OperatorProps) {
    super(scope, id);
    const ctx = props.context;
    kubeObject(k8s.KubeServiceAccount, this, 'Resource', {
      metadata: namespacedMeta(ctx, serviceAccountName(ctx), OPERATOR_COMPONENT, ctx.block('annotations', 'serviceAccount.annotations')),
      automountServiceAccountToken: true,
    });
  }
}

export class OperatorDeployment extends Construct {
  constructor(scope: Construct, id: string, props: OperatorProps) {
    super(scope, id);
    const ctx = props.context;
    const names = objectNames(ctx);
    const selector = selectorLabels(ctx, OPERATOR_COMPONENT);
    const env = (name: string, value: string): k8s.EnvVar => ({ name, value });
    const leaderElection = helmValue<string>(ctx.expression(
      'or .Values.operator.leaderElection (gt (int .Values.operator.replicas) 1) | quote',
      (v) => String((v as { operator: { leaderElection: boolean; replicas: number } }).operator.leaderElection || (v as { operator: { replicas: number } }).operator.replicas > 1),
    ));
    const image = operatorImage(ctx);
    // The image the chart was released with (Chart.yaml, written by the release), whatever the values override.
    const releasedImage = helmValue<string>(ctx.expression(`index (.Chart.Annotations | default dict) ${JSON.stringify(RELEASED_IMAGE_ANNOTATION)} | default "" | quote`, () => ''));
    kubeObject(k8s.KubeDeployment, this, 'Resource', {
      metadata: namespacedMeta(ctx, names.operatorDeployment, OPERATOR_COMPONENT, { annotations: { [RELEASED_IMAGE_ANNOTATION]: releasedImage } }),
      spec: {
        replicas: helmValue<number>(ctx.value('operator.replicas')),
        revisionHistoryLimit: 5,
        selector: { matchLabels: selector },
        // Keep the webhook served during a rollout: start the new pod before stopping the old one.
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: k8s.IntOrString.fromNumber(1), maxUnavailable: k8s.IntOrString.fromNumber(0) } },
        template: {
          metadata: {
            labels: { ...objectLabels(ctx, OPERATOR_COMPONENT), ...ctx.merge('operator.podLabels') },
            ...ctx.block('annotations', 'operator.podAnnotations'),
          },
          spec: {
            serviceAccountName: serviceAccountName(ctx),
            ...ctx.block('imagePullSecrets', 'imagePullSecrets'),
            ...ctx.when(cond.truthy('operator.priorityClassName'), { priorityClassName: ctx.text('operator.priorityClassName') }),
            ...ctx.block('nodeSelector', 'operator.nodeSelector'),
            ...ctx.block('tolerations', 'operator.tolerations'),
            ...ctx.block('affinity', 'operator.affinity'),
            securityContext: { runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, fsGroup: 65532, seccompProfile: { type: 'RuntimeDefault' } },
            terminationGracePeriodSeconds: 30,
            containers: [
              {
                name: OPERATOR_CONTAINER,
                image,
                imagePullPolicy: helmValue<string>(ctx.value('operator.image.pullPolicy')),
                // Explicit, so the chart does not depend on the image's CMD: compiled JavaScript
                // (the image has node at /nodejs/bin/node and the app at /app), with the heap sized
                // to the container's memory limit (a percentage of the cgroup limit Node reads).
                command: ['/nodejs/bin/node', ...operatorNodeFlags, '/app/lib/src/operator/main.js'],
                env: [
                  { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } } },
                  { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
                  env('NLS_RELEASE_NAME', ctx.releaseName),
                  env('NLS_WEBHOOK_PORT', String(WEBHOOK_PORT)),
                  env('NLS_METRICS_PORT', String(METRICS_PORT)),
                  env('NLS_HEALTH_PORT', String(HEALTH_PORT)),
                  env('NLS_CERT_MODE', ctx.text('webhook.certificates.mode')),
                  env('NLS_CERT_DIR', CERT_DIR),
                  env('NLS_WEBHOOK_SECRET', names.webhookSecret),
                  env('NLS_WEBHOOK_SERVICE', names.webhookService),
                  // Each configuration with its kind: RBAC grants `get` per kind by name.
                  env('NLS_VALIDATING_WEBHOOK_CONFIGURATIONS', names.validatingWebhookConfiguration),
                  env('NLS_MUTATING_WEBHOOK_CONFIGURATIONS', names.mutatingWebhookConfiguration),
                  // Our CRDs, whose spec.conversion this operator points at its own Service and CA.
                  env('NLS_CONVERSION_CRDS', CRD_NAMES.join(',')),
                  { name: 'NLS_LEADER_ELECTION', value: leaderElection },
                  env('NLS_LOG_LEVEL', ctx.text('operator.logLevel')),
                  // Where AgentDeployments are reconciled besides the release namespace (RBAC: rbac-agent-namespaces.yaml).
                  ...ctx.whenItem(
                    cond.truthy('watchNamespaces'),
                    env('NLS_WATCH_NAMESPACES', ctx.expression('join "," .Values.watchNamespaces | quote', (v) => (v as { watchNamespaces: string[] }).watchNamespaces.join(',')) as string),
                  ),
                  // Only the API server's client certificate is answered (docs/security.md); unset answers any client.
                  ...ctx.whenItem(cond.truthy('webhook.clientCA'), env('NLS_WEBHOOK_CLIENT_CA', ctx.text('webhook.clientCA'))),
                  // The image allow-list of the webhooks (docs/security.md); unset allows every image.
                  ...ctx.whenItem(
                    cond.truthy('webhook.allowedImages'),
                    env('NLS_ALLOWED_IMAGES', ctx.expression('join "," .Values.webhook.allowedImages | quote', (v) => (v as { webhook: { allowedImages: string[] } }).webhook.allowedImages.join(',')) as string),
                  ),
                  // Provider defaults; empty values mean the operator's built-in defaults.
                  // Only when set: the API server drops an empty `value`, so a stored object
                  // would differ from the rendering; unset means the built-in default anyway.
                  // The Role naming the Secrets the key portal may read, kept by the operator (src/operator/portal-secrets-role.ts).
                  ...ctx.whenItem(cond.truthy('portal.enabled'), env('NLS_PORTAL_SECRETS_ROLE', names.portalSecretsRole)),
                  ...ctx.whenItem(cond.truthy('providers.vllm.image'), env('NLS_VLLM_IMAGE', ctx.text('providers.vllm.image'))),
                  ...ctx.whenItem(cond.truthy('providers.modelDownloader.image'), env('NLS_MODEL_DOWNLOADER_IMAGE', ctx.text('providers.modelDownloader.image'))),
                  ...ctx.whenItem(cond.truthy('providers.endpointPicker.image'), env('NLS_EPP_IMAGE', ctx.text('providers.endpointPicker.image'))),
                  ...ctx.whenItem(cond.truthy('providers.storageClassName'), env('NLS_STORAGE_CLASS_NAME', ctx.text('providers.storageClassName'))),
                  env('NLS_GATEWAY_CONTEXT', ctx.helper('gatewayContext', (v) => gatewayContextJson((v as { platform: Record<string, unknown> }).platform))),
                  // Per-key token quotas, only while a rate-limit backend is named (else no policy may render).
                  ...ctx.whenItem(cond.truthy('quotas.rateLimitBackend'), env('NLS_QUOTAS', ctx.helper('quotas', (v) => quotasJson((v as { quotas: Parameters<typeof quotasJson>[0] }).quotas)))),
                ],
                ports: [
                  { name: 'webhook', containerPort: WEBHOOK_PORT, protocol: 'TCP' },
                  { name: 'metrics', containerPort: METRICS_PORT, protocol: 'TCP' },
                  { name: 'health', containerPort: HEALTH_PORT, protocol: 'TCP' },
                ],
                livenessProbe: { httpGet: { path: '/healthz', port: k8s.IntOrString.fromString('health') }, initialDelaySeconds: 5, periodSeconds: 10, failureThreshold: 3 },
                readinessProbe: { httpGet: { path: '/readyz', port: k8s.IntOrString.fromString('health') }, periodSeconds: 5, failureThreshold: 3 },
                ...ctx.block('resources', 'operator.resources'),
                securityContext: restrictedContainerSecurity(),
                volumeMounts: [
                  { name: 'webhook-certs', mountPath: CERT_DIR, ...ctx.when(certManagerMode, { readOnly: true }) },
                  { name: 'tmp', mountPath: '/tmp' },
                ],
              },
            ],
            volumes: [
              {
                name: 'webhook-certs',
                // cert-manager writes the Secret; self-managed mode lets the operator write the files itself.
                ...ctx.when(certManagerMode, { secret: { secretName: names.webhookSecret } }),
                ...ctx.when(cond.not(certManagerMode), { emptyDir: { sizeLimit: k8s.Quantity.fromString('1Mi') } }),
              },
              { name: 'tmp', emptyDir: { sizeLimit: k8s.Quantity.fromString('64Mi') } },
            ],
          },
        },
      },
    });
  }
}

export class OperatorMetricsService extends Construct {
  constructor(scope: Construct, id: string, props: OperatorProps) {
    super(scope, id);
    const ctx = props.context;
    kubeObject(k8s.KubeService, this, 'Resource', {
      metadata: namespacedMeta(ctx, objectNames(ctx).metricsService, OPERATOR_COMPONENT),
      spec: {
        type: 'ClusterIP',
        selector: selectorLabels(ctx, OPERATOR_COMPONENT),
        ports: [{ name: 'metrics', port: METRICS_PORT, targetPort: k8s.IntOrString.fromString('metrics'), protocol: 'TCP' }],
      },
    });
  }
}

/** Only rendered when replicas > 1 (a PDB over one replica would block node drains). */
export class OperatorPodDisruptionBudget extends Construct {
  constructor(scope: Construct, id: string, props: OperatorProps) {
    super(scope, id);
    const ctx = props.context;
    kubeObject(k8s.KubePodDisruptionBudget, this, 'Resource', {
      metadata: namespacedMeta(ctx, objectNames(ctx).podDisruptionBudget, OPERATOR_COMPONENT),
      spec: {
        // A number or a percentage, as the values give it.
        minAvailable: helmValue<k8s.IntOrString>(ctx.value('operator.podDisruptionBudget.minAvailable')),
        selector: { matchLabels: selectorLabels(ctx, OPERATOR_COMPONENT) },
      },
    });
  }
}
