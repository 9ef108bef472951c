// The operator process: health and metrics endpoints, the admission webhook server (every
// replica), and — on the replica holding the leader Lease — one controller per kind.
// Configuration comes from environment variables (see config.ts); SIGTERM shuts down gracefully:
// the Lease is released so a standby takes over at once, in-flight reconciles finish.
import { OperatorConfig, operatorConfigFromEnv } from './config';
import { passthroughModelController } from './passthroughmodel';
import { llmModelController } from './llmmodel';
import { agentDeploymentController } from './agentdeployment';
import { ReconcileDeps } from './reconcile-context';
import { Controller, watchRestartReason } from './runtime/controller';
import { SharedInformers } from './runtime/shared-informers';
import { EventRecorder } from '../runtime/events';
import { startHealthServer, startMetricsServer } from './runtime/http-servers';
import { KubeRest, loadKubeConfig } from '../kube/rest';
import { LeaderElector } from '../runtime/leader';
import { Logger, createLogger } from '../runtime/log';
import { observeAdmission, observeApiRequest, type OperatorMetrics, operatorMetrics } from './runtime/metrics';
import { ApiKeyInfo } from './api-key-info';
import { PortalSecretsRole } from './portal-secrets-role';
import { version } from '../version';
import { startWebhookServer, type WebhookServer } from '../webhook';

export const componentName = 'nebari-llm-serving-operator';

/** Starts the admission webhook server (every replica serves webhooks, leader or not). */
async function startWebhooks(log: Logger, metrics: OperatorMetrics): Promise<WebhookServer> {
  return startWebhookServer({
    kubeConfig: loadKubeConfig(),
    env: process.env,
    log: log.child({ component: 'webhook' }),
    onAdmission: (kind, operation, outcome, seconds) => observeAdmission(metrics, kind, operation, outcome, seconds),
  });
}

/** The kinds nls_model_ready describes (agents have their own Ready condition, not a served model). */
const MODEL_KINDS = new Set(['LLMModel', 'PassthroughModel']);

export async function runOperator(config: OperatorConfig = operatorConfigFromEnv()): Promise<{ stop(): Promise<void> }> {
  const log = createLogger({ level: config.logLevel, fields: { component: componentName, pod: config.podName } });
  log.info('starting', { version, namespace: config.podNamespace, agentNamespaces: config.agentNamespaces, leaderElection: config.leaderElection });
  const metrics = operatorMetrics();
  metrics.isLeader.set(0);
  const client = new KubeRest(loadKubeConfig());
  // Trust "kind not served" briefly: 1,000 models must not re-read discovery on every reconcile.
  client.negativeDiscoveryTtlMs = 5_000;
  client.metrics = {
    observeRequest: (method, code, seconds) => observeApiRequest(metrics, method, code, seconds),
    observeRetry: (method, reason) => metrics.apiRetries.inc({ method, reason }),
  };
  const deps: ReconcileDeps = {
    client,
    events: new EventRecorder(client, componentName, config.podName, log),
    gateway: config.gateway,
    configurationProblem: config.configurationProblem,
    cleanupBlockedAfterMs: config.cleanupBlockedAfterMs,
    keyInfo: new ApiKeyInfo(metrics.apiKeyInfo, metrics.apiKeyExpiry),
    // The term's keeper of the portal's Secret Role (below); none without the portal.
    portalSecrets: config.portalSecretsRole ? { readable: (name) => portalSecrets?.readable(name) ?? Promise.resolve() } : undefined,
    log,
  };
  let portalSecrets: PortalSecretsRole | undefined;
  if (config.configurationProblem) log.error('models cannot be published until this is fixed; webhooks keep serving', { problem: config.configurationProblem });
  const controllerLog = log.child({ component: 'controller' });
  // Models and their Secrets live in the operator namespace (the webhook admits them nowhere else);
  // agents there and in the watched namespaces, one controller each, since the chart grants the
  // operator rights per namespace, never cluster-wide (docs/security.md).
  const ns = config.podNamespace;
  const makeControllers = () => {
    // One watch per kind and cache shape for the whole term, whichever controllers ask for it.
    const informers = new SharedInformers(client, controllerLog, { watchIdleTimeoutMs: config.watchIdleMs, onWatchError: (kind, err) => metrics.watchRestarts.inc({ kind, reason: watchRestartReason(err) }) });
    const term = [
      passthroughModelController(deps, ns),
      llmModelController({ ...deps, providers: config.providers, providerPollMs: config.providerPollMs }, ns),
      ...config.agentNamespaces.map((agentNamespace) => agentDeploymentController(deps, agentNamespace)),
    ].map((opts) => new Controller(client, { workers: config.workers, resyncMs: config.resyncMs, watchIdleTimeoutMs: config.watchIdleMs, informers, ...opts }, metrics, controllerLog));
    controllerLog.info('watches of the term', { watches: informers.size });
    return term;
  };
  let controllers: Controller[] = [];
  let shuttingDown = false;
  /** Settles when the last stop of the controllers has finished (a new term waits for it). */
  let stopped: Promise<void> = Promise.resolve();
  let webhooks: WebhookServer | undefined;
  metrics.sources.models = () => controllers.filter((c) => MODEL_KINDS.has(c.kind)).flatMap((c) => c.cachedObjects());
  metrics.sources.servedCertificate = () => webhooks?.servedCertificate();

  const startControllers = () => {
    metrics.isLeader.set(1);
    // Fresh controllers per term; they start only after the previous term's reconciles finished.
    const term = makeControllers();
    controllers = term;
    const roleKeeper = config.portalSecretsRole
      ? new PortalSecretsRole(client, { namespace: ns, roleName: config.portalSecretsRole, resyncMs: config.resyncMs, watchIdleTimeoutMs: config.watchIdleMs }, controllerLog.child({ component: 'portal-secrets-role' }))
      : undefined;
    portalSecrets = roleKeeper;
    void stopped.then(() => {
      if (controllers !== term || shuttingDown) return;
      roleKeeper?.start();
      for (const c of term) c.start();
    });
  };
  const stopControllers = async () => {
    metrics.isLeader.set(0);
    const running = controllers;
    const roleKeeper = portalSecrets;
    controllers = [];
    portalSecrets = undefined;
    stopped = stopped.then(() => Promise.all([...running.map((c) => c.stop()), roleKeeper?.stop()])).then(() => undefined);
    await stopped;
    // Only the leader's series describe the keys: the next leader exports them after its first passes.
    if (controllers.length === 0) deps.keyInfo?.clear();
  };

  const health = await startHealthServer(
    {
      healthy: () => true,
      // Readiness puts the pod behind the webhook Service, so it means exactly "serves webhooks":
      // not ready before the HTTPS server listens with a trusted certificate. It never depends on
      // leadership or informers: a standby serves webhooks too, and a leader whose watches are
      // failing must not take the webhooks (failurePolicy Fail) down with it.
      ready: () => {
        if (shuttingDown) return { ok: false, reason: 'shutting down' };
        if (!config.webhooks) return { ok: true };
        if (!webhooks) return { ok: false, reason: 'webhook: server not listening yet (obtaining a certificate)' };
        return webhooks.ready() ? { ok: true } : { ok: false, reason: `webhook: ${webhooks.readinessReason()}` };
      },
    },
    config.healthPort,
    config.bindAddress,
  );
  const metricsServer = await startMetricsServer(metrics.registry, config.metricsPort, config.bindAddress);
  log.info('serving health and metrics', { healthPort: health.port, metricsPort: metricsServer.port });
  if (config.webhooks) webhooks = await startWebhooks(log, metrics);

  let elector: LeaderElector | undefined;
  if (config.leaderElection) {
    elector = new LeaderElector(
      client,
      {
        namespace: config.podNamespace,
        name: `${config.releaseName}-operator-leader`,
        identity: config.podName,
        leaseDurationMs: config.leaseDurationMs,
        renewDeadlineMs: config.renewDeadlineMs,
        retryPeriodMs: config.retryPeriodMs,
      },
      log.child({ component: 'leader-election' }),
      {
        onStartedLeading: startControllers,
        onStoppedLeading: () => {
          if (shuttingDown) return;
          // controller-runtime exits here; this process also serves the webhooks (failurePolicy
          // Fail), so a restart would take them away from this replica. Instead the controllers
          // stop (no new reconciles; in-flight ones finish before a new term may start) and the
          // elector keeps competing for the Lease.
          log.warn('lost the leader lease; stopped reconciling, still serving webhooks, trying to lead again', {});
          void stopControllers();
        },
      },
    );
    elector.start();
  } else {
    startControllers();
  }

  const stop = async () => {
    if (shuttingDown) return;
    shuttingDown = true;
    const drainUntil = Date.now() + config.webhookDrainMs;
    log.info('shutting down', { webhookDrainMs: config.webhookDrainMs });
    await stopControllers();
    await elector?.stop();
    // The pod leaves the webhook Service's endpoints only after it is marked terminating, while
    // SIGTERM arrives at the same moment: keep answering admission calls (readiness is already
    // false) until the endpoints have moved, or the API server's calls end in EOF.
    if (webhooks) await new Promise((r) => setTimeout(r, Math.max(0, drainUntil - Date.now())));
    await webhooks?.close();
    await health.close();
    await metricsServer.close();
    client.close();
    log.info('stopped', {});
  };
  return { stop };
}

if (require.main === module) {
  runOperator().then(
    (op) => {
      const onSignal = (signal: string) => {
        // A second signal, or a shutdown that hangs, ends the process at once.
        const force = setTimeout(() => process.exit(1), 25_000);
        force.unref();
        process.stdout.write(JSON.stringify({ ts: new Date().toISOString(), level: 'info', msg: `received ${signal}` }) + '\n');
        op.stop().then(() => process.exit(0), () => process.exit(1));
      };
      process.once('SIGTERM', () => onSignal('SIGTERM'));
      process.once('SIGINT', () => onSignal('SIGINT'));
    },
    (err: Error) => {
      process.stderr.write(JSON.stringify({ ts: new Date().toISOString(), level: 'error', msg: `operator failed to start: ${err.message}` }) + '\n');
      process.exit(1);
    },
  );
}
