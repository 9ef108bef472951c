// Object names derived from the release's full name. The operator, webhook and CLI engineers use the
// same names (see the operator process contract), so they live in one place.
import { RenderContext } from './render-context';

export const API_GROUP = 'llm.nebari.dev';
/** The version the webhooks are registered for; v1alpha1 writes reach them converted (matchPolicy: Equivalent). */
export const API_VERSION = 'v1beta1';

/** Names of everything the chart creates, as strings (placeholders in Helm mode). */
export function objectNames(ctx: RenderContext) {
  const f = ctx.fullname;
  return {
    operatorDeployment: `${f}-operator`,
    metricsService: `${f}-metrics`,
    webhookService: `${f}-webhook`,
    validatingWebhookConfiguration: `${f}-validating`,
    mutatingWebhookConfiguration: `${f}-mutating`,
    /** The guard's MutatingWebhookConfiguration and the (deliberately absent) Service it points at. */
    agentDeploymentGuard: `${f}-agentdeployment-guard`,
    webhookCertificate: `${f}-webhook`,
    /** The Secret holding the serving certificate (named after the release, per the contract). */
    webhookSecret: `${ctx.releaseName}-webhook-server-cert`,
    selfSignedIssuer: `${f}-selfsigned`,
    clusterRole: `${f}-operator`,
    role: `${f}-operator`,
    /** The operator's Role in each other namespace of `watchNamespaces`. */
    agentRole: `${f}-operator-agents`,
    /** The operator's read-only Role in each Gateway's namespace (proxy Deployments, for Programmed). */
    proxyStatusRole: `${f}-operator-proxies`,
    networkPolicy: `${f}-operator`,
    podDisruptionBudget: `${f}-operator`,
    serviceMonitor: `${f}-operator`,
    /** The alert rules (prometheusRule.enabled). */
    prometheusRule: `${f}-alerts`,
    /** One ConfigMap per Grafana dashboard (grafanaDashboards.enabled). */
    dashboard: (id: string) => `${f}-dashboard-${id}`,
    /** The spend recording rules (pricing.models). */
    spendRule: `${f}-spend`,
    /** Every object of the key portal (Deployment, ServiceAccount, Role, Service, HTTPRoute...). */
    portal: `${f}-portal`,
    /**
     * The Role naming the Secrets the portal may read (written by the operator, never rendered: an
     * upgrade would reset it) and the chart's RoleBinding of the portal to it, which owns it.
     */
    portalSecretsRole: `${f}-portal-secrets`,
  };
}

/** Webhook entry names inside the configurations (the CLI waits on their caBundle). */
export const WEBHOOK_ENTRY = {
  validate: (kind: string) => `v${kind.toLowerCase()}.${API_GROUP}`,
  mutate: (kind: string) => `m${kind.toLowerCase()}.${API_GROUP}`,
  guard: `agentdeployment-upgrade-guard.${API_GROUP}`,
};

export const WEBHOOK_PORT = 9443;
export const METRICS_PORT = 8080;
export const HEALTH_PORT = 8081;
export const CERT_DIR = '/var/run/nebari-llm-serving/webhook-certs';
