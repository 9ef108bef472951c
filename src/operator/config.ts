// The operator's configuration, from environment variables (the chart sets them; see
// the operator process contract in src/operator/README.md; the webhook server reads its own
// NLS_WEBHOOK_* settings in src/webhook/settings.ts). Parsing is pure so it can be tested; errors name the
// variable and the fix.
import type { GatewayContext } from '../translate/gateway';
import { gatewayContextFromEnv } from '../translate/gateway/context';
import type { ProviderContext } from '../translate/providers';
import { leaderTimingProblem } from '../runtime/leader';
import { LogLevel, parseLogLevel } from '../runtime/log';
import { agentNamespacesFromEnv } from '../webhook/settings';
import { DEFAULT_CLEANUP_BLOCKED_AFTER_MS } from './cleanup-blocked';
import { requeue } from './reconcile-context';

// Parsed in the translation layer, so `nls smoke` derives endpoint host names exactly as the operator does.
export { gatewayContextFromEnv } from '../translate/gateway/context';
export { quotaSettingsFromEnv } from '../translate/gateway/quota-settings';

export interface OperatorConfig {
  podNamespace: string;
  /** Namespaces whose AgentDeployments are reconciled: podNamespace plus NLS_WATCH_NAMESPACES. */
  agentNamespaces: string[];
  podName: string;
  releaseName: string;
  metricsPort: number;
  healthPort: number;
  leaderElection: boolean;
  logLevel: LogLevel;
  /** Settings of the shared gateway endpoints (from NLS_GATEWAY_CONTEXT / NLS_BASE_DOMAIN). */
  gateway: GatewayContext;
  /**
   * Why the reconcilers cannot publish models (e.g. no base domain), naming the chart value to
   * set. Never fatal: the webhooks must keep serving, so models get a condition instead.
   */
  configurationProblem?: string;
  /** LLMModel provider defaults (images, storage class). */
  providers: ProviderContext;
  /** Workers per kind. */
  workers: number;
  /** Full resync interval of the model informers. */
  resyncMs: number;
  /** A watch silent this long is re-opened (half-open connection). */
  watchIdleMs: number;
  /** Lease timing (ms). */
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  /** Start the webhook server in this process. */
  webhooks: boolean;
  /** Interface the HTTP servers bind to. */
  bindAddress: string;
  /** How long the webhook server keeps serving after SIGTERM, while endpoints move away. */
  webhookDrainMs: number;
  /** How long a model's deletion may wait for a generated object before it reports CleanupBlocked. */
  cleanupBlockedAfterMs: number;
  /** The longest interval between two reads of an LLMModel's provider resource (not watched). */
  providerPollMs: number;
  /** The Role naming the Secrets the key portal may read (NLS_PORTAL_SECRETS_ROLE, set with portal.enabled); absent: no portal, no Role. */
  portalSecretsRole?: string;
}

function port(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`${name}: "${raw}" is not a port; set a number from 1 to 65535`);
  return n;
}

function positive(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name}: "${raw}" is not a positive number`);
  return n;
}

function bool(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = (env[name] ?? '').toLowerCase();
  if (raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new Error(`${name}: "${env[name]}" is not a boolean; use true or false`);
}

/** Lease timing; a combination under which two replicas could lead at once is refused. */
function leaseTiming(env: NodeJS.ProcessEnv): Pick<OperatorConfig, 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs'> {
  const timing = {
    leaseDurationMs: positive(env, 'NLS_LEASE_DURATION_SECONDS', 15) * 1000,
    renewDeadlineMs: positive(env, 'NLS_RENEW_DEADLINE_SECONDS', 10) * 1000,
    retryPeriodMs: positive(env, 'NLS_RETRY_PERIOD_SECONDS', 2) * 1000,
  };
  const problem = leaderTimingProblem(timing);
  if (problem) {
    const seconds = (ms: number) => ms / 1000;
    throw new Error(
      `NLS_LEASE_DURATION_SECONDS=${seconds(timing.leaseDurationMs)}, NLS_RENEW_DEADLINE_SECONDS=${seconds(timing.renewDeadlineMs)}, ` +
        `NLS_RETRY_PERIOD_SECONDS=${seconds(timing.retryPeriodMs)}: ${problem}`,
    );
  }
  return timing;
}

/** The gateway context, or the problem that keeps the reconcilers from publishing models. */
function gatewaySettings(env: NodeJS.ProcessEnv): { gateway: GatewayContext; configurationProblem?: string } {
  try {
    return { gateway: gatewayContextFromEnv(env) };
  } catch (err) {
    return { gateway: { baseDomain: '' }, configurationProblem: (err as Error).message };
  }
}

export function operatorConfigFromEnv(env: NodeJS.ProcessEnv = process.env): OperatorConfig {
  const podNamespace = env.POD_NAMESPACE || 'nebari-llm-serving-system';
  return {
    podNamespace,
    agentNamespaces: agentNamespacesFromEnv(env, podNamespace),
    podName: env.POD_NAME || `nebari-llm-serving-operator-${process.pid}`,
    releaseName: env.NLS_RELEASE_NAME || 'nebari-llm-serving',
    metricsPort: port(env, 'NLS_METRICS_PORT', 8080),
    healthPort: port(env, 'NLS_HEALTH_PORT', 8081),
    leaderElection: bool(env, 'NLS_LEADER_ELECTION', true),
    logLevel: parseLogLevel(env.NLS_LOG_LEVEL),
    ...gatewaySettings(env),
    providers: {
      vllmImage: env.NLS_VLLM_IMAGE || undefined,
      downloaderImage: env.NLS_MODEL_DOWNLOADER_IMAGE || undefined,
      eppImage: env.NLS_EPP_IMAGE || undefined,
      storageClassName: env.NLS_STORAGE_CLASS_NAME || undefined,
    },
    workers: positive(env, 'NLS_WORKERS', 8),
    resyncMs: positive(env, 'NLS_RESYNC_SECONDS', 300) * 1000,
    watchIdleMs: positive(env, 'NLS_WATCH_IDLE_SECONDS', 150) * 1000,
    ...leaseTiming(env),
    webhooks: bool(env, 'NLS_WEBHOOKS', true),
    bindAddress: env.NLS_BIND_ADDRESS || '0.0.0.0',
    webhookDrainMs: (env.NLS_WEBHOOK_DRAIN_SECONDS === '0' ? 0 : positive(env, 'NLS_WEBHOOK_DRAIN_SECONDS', 5)) * 1000,
    cleanupBlockedAfterMs: positive(env, 'NLS_CLEANUP_BLOCKED_SECONDS', DEFAULT_CLEANUP_BLOCKED_AFTER_MS / 1000) * 1000,
    providerPollMs: positive(env, 'NLS_PROVIDER_POLL_SECONDS', requeue.providerStatus / 1000) * 1000,
    ...(env.NLS_PORTAL_SECRETS_ROLE ? { portalSecretsRole: env.NLS_PORTAL_SECRETS_ROLE } : {}),
  };
}
