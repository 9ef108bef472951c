// The webhook's settings from the operator's environment (the contract the chart fills in).
// Every problem names the variable and the fix, because it surfaces as a crash-looping pod.
import { allowedImageEntryProblem } from './image-policy';

export type CertMode = 'self-managed' | 'cert-manager';

export interface WebhookSettings {
  /** `POD_NAMESPACE`: where the operator runs; models must live here, the Secret is kept here. */
  readonly namespace: string;
  /** `NLS_WEBHOOK_PORT`. @default 9443 */
  readonly port: number;
  /** `NLS_CERT_MODE`. @default 'self-managed' */
  readonly certMode: CertMode;
  /** `NLS_CERT_DIR`: mounted certificates in cert-manager mode. */
  readonly certDir: string;
  /** `NLS_WEBHOOK_SECRET`: the self-managed CA and serving certificate. */
  readonly secretName: string;
  /** `NLS_WEBHOOK_SERVICE`: the Service the API server calls; the certificate names it. */
  readonly serviceName: string;
  /**
   * `NLS_VALIDATING_WEBHOOK_CONFIGURATIONS` and `NLS_MUTATING_WEBHOOK_CONFIGURATIONS`: our
   * configurations by kind (comma-separated names). Each name is read only as its own kind, because
   * the chart's ClusterRole grants `get` per kind by resourceNames.
   */
  readonly webhookConfigurations: WebhookConfigurationNames;
  /**
   * `NLS_CONVERSION_CRDS`: names of our CRDs (comma-separated) whose conversion webhook this server
   * answers; in self-managed mode the CA is injected into them and readiness waits for it.
   */
  readonly conversionCrds: readonly string[];
  /** `NLS_LOG_LEVEL`. */
  readonly logLevel: string;
  /** Where AgentDeployments are admitted: `namespace` plus `NLS_WATCH_NAMESPACES`. */
  readonly agentNamespaces: readonly string[];
  /** `NLS_WEBHOOK_CLIENT_CA` (PEM, the chart's `webhook.clientCA`): callers must present a certificate it signed. */
  readonly clientCa?: string;
  /** `NLS_ALLOWED_IMAGES` (comma-separated, the chart's `webhook.allowedImages`): images tenants may run; empty allows all. */
  readonly allowedImages: readonly string[];
}

export interface WebhookConfigurationNames {
  readonly validating: readonly string[];
  readonly mutating: readonly string[];
}

function names(env: NodeJS.ProcessEnv, name: string): string[] {
  return (env[name] ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
}

export const defaultCertDir = '/var/run/nebari-llm-serving/webhook-certs';
export const defaultWebhookPort = 9443;

function required(env: NodeJS.ProcessEnv, name: string, hint: string): string {
  const value = env[name]?.trim();
  if (!value) throw new Error(`${name} is not set; ${hint}`);
  return value;
}

/**
 * The namespaces whose AgentDeployments this installation admits and reconciles: the release
 * namespace plus `NLS_WATCH_NAMESPACES` (comma-separated, the chart's `watchNamespaces`), each once.
 */
export function agentNamespacesFromEnv(env: NodeJS.ProcessEnv, releaseNamespace: string): string[] {
  return [...new Set([releaseNamespace, ...names(env, 'NLS_WATCH_NAMESPACES')])];
}

/** Reads the settings; throws with the variable and the fix when one is unusable. */
export function webhookSettingsFromEnv(env: NodeJS.ProcessEnv): WebhookSettings {
  const namespace = required(env, 'POD_NAMESPACE', 'set it from the downward API (fieldRef metadata.namespace)');
  const release = env.NLS_RELEASE_NAME?.trim() || 'nebari-llm-serving';
  const portText = env.NLS_WEBHOOK_PORT?.trim() || String(defaultWebhookPort);
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`NLS_WEBHOOK_PORT is "${portText}"; set it to a TCP port from 1 to 65535 (default ${defaultWebhookPort})`);
  }
  const certMode = (env.NLS_CERT_MODE?.trim() || 'self-managed') as CertMode;
  if (certMode !== 'self-managed' && certMode !== 'cert-manager') {
    throw new Error(`NLS_CERT_MODE is "${certMode}"; set it to self-managed or cert-manager`);
  }
  for (const entry of names(env, 'NLS_ALLOWED_IMAGES')) {
    const problem = allowedImageEntryProblem(entry);
    if (problem) throw new Error(`NLS_ALLOWED_IMAGES: ${problem}; set the chart value webhook.allowedImages to image prefixes or references`);
  }
  const clientCa = env.NLS_WEBHOOK_CLIENT_CA?.trim();
  if (clientCa && !clientCa.includes('-----BEGIN CERTIFICATE-----')) {
    throw new Error('NLS_WEBHOOK_CLIENT_CA is not a PEM certificate bundle; set the chart value webhook.clientCA to the CA that signed the API server\'s webhook client certificate, or leave it empty');
  }
  return {
    namespace,
    port,
    certMode,
    ...(clientCa ? { clientCa } : {}),
    certDir: env.NLS_CERT_DIR?.trim() || defaultCertDir,
    secretName: env.NLS_WEBHOOK_SECRET?.trim() || `${release}-webhook-server-cert`,
    serviceName: env.NLS_WEBHOOK_SERVICE?.trim() || `${release}-webhook`,
    webhookConfigurations: {
      validating: names(env, 'NLS_VALIDATING_WEBHOOK_CONFIGURATIONS'),
      mutating: names(env, 'NLS_MUTATING_WEBHOOK_CONFIGURATIONS'),
    },
    conversionCrds: names(env, 'NLS_CONVERSION_CRDS'),
    logLevel: env.NLS_LOG_LEVEL?.trim() || 'info',
    agentNamespaces: agentNamespacesFromEnv(env, namespace),
    allowedImages: names(env, 'NLS_ALLOWED_IMAGES'),
  };
}
