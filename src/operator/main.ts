// The operator process: health and metrics endpoints, the admission webhook server (every
// replica), and — on the replica holding the leader Lease — one controller per kind.
// Configuration comes from environment variables (see config.ts); SIGTERM shuts down gracefully:
// the Lease is released so a standby takes over at once, in-flight reconciles finish.
import { OperatorConfig, operatorConfigFromEnv } from './config';
import { passthroughModelController } from './passthroughmodel';
import { llmModelController } from './llmmodel';
import { agentDeploymentController } from './agentdeployment';
import { ReconcileDeps } from './reconcile-context';
import { Controller } from './runtime/controller';
import { EventRecorder } from './runtime/events';
import { startHealthServer, startMetricsServer } from './runtime/http-servers';
import { KubeRest, loadKubeConfig } from '../kube/rest';
import { LeaderElector } from './runtime/leader';
import { Logger, createLogger } from './runtime/log';
import { operatorMetrics } from './runtime/metrics';
import { version } from '../version';
import { startWebhookServer, type WebhookServer } from '../webhook';

export const componentName = 'nebari-llm-serving-operator';

/** Starts the admission webhook server (every replica serves webhooks, leader or not). */
async function startWebhooks(log: Logger): Promise<WebhookServer> {
  return startWebhookServer({ kubeConfig: loadKubeConfig(), env: process.env, log: log.child({ component: 'webhook' }) });
}

export async function runOperator(config: OperatorConfig = operatorConfigFromEnv()): Promise<{ stop(): Promise<void> }> {
  const log = createLogger({ level: config.logLevel, fields: { component: componentName, pod: config.podName } });
  log.info('starting', { version, namespace: config.podNamespace, leaderElection: config.leaderElection });
  const metrics = operatorMetrics();
  metrics.isLeader.set(0);
  const client = new KubeRest(loadKubeConfig());
  // Trust "kind not served" briefly: 1,000 models must not re-read discovery on every reconcile.
  client.negativeDiscoveryTtlMs = 5_000;
  client.metrics = {
    observeRequest: (method, code, seconds) => {
      metrics.apiRequests.inc({ method, code: String(code) });
      metrics.apiRequestDuration.observe(seconds, { method });
    },
  };
  const deps: ReconcileDeps = { client, events: new EventRecorder(client, componentName, config.podName, log), gateway: config.gateway, log };
  const controllerLog = log.child({ component: 'controller' });
  const makeControllers = () =>
    [passthroughModelController(deps), llmModelController({ ...deps, providers: config.providers }), agentDeploymentController(deps)].map(
      (opts) => new Controller(client, { workers: config.workers, resyncMs: config.resyncMs, ...opts }, metrics, controllerLog),
    );
  let controllers: Controller[] = [];
  let leading = false;
  let shuttingDown = false;
  let webhooks: WebhookServer | undefined;

  const startControllers = () => {
    leading = true;
    metrics.isLeader.set(1);
    controllers = makeControllers();
    for (const c of controllers) c.start();
  };
  const stopControllers = async () => {
    metrics.isLeader.set(0);
    const running = controllers;
    controllers = [];
    await Promise.all(running.map((c) => c.stop()));
  };

  const health = await startHealthServer(
    {
      healthy: () => true,
      ready: () => {
        if (shuttingDown) return { ok: false, reason: 'shutting down' };
        if (webhooks && !webhooks.ready()) return { ok: false, reason: `webhook: ${webhooks.readinessReason()}` };
        const unsynced = controllers.filter((c) => !c.hasSynced).map((c) => c.kind);
        return unsynced.length && leading ? { ok: false, reason: `informers not synced: ${unsynced.join(', ')}` } : { ok: true };
      },
    },
    config.healthPort,
    config.bindAddress,
  );
  const metricsServer = await startMetricsServer(metrics.registry, config.metricsPort, config.bindAddress);
  log.info('serving health and metrics', { healthPort: health.port, metricsPort: metricsServer.port });
  if (config.webhooks) webhooks = await startWebhooks(log);

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
          leading = false;
          if (shuttingDown) return;
          // Like controller-runtime: a replica that lost the Lease must not write again, and
          // restarting is the simplest way to guarantee no reconcile is still in flight.
          log.error('lost the leader lease; exiting so no stale writes happen', {});
          void stopControllers().finally(() => process.exit(1));
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
    log.info('shutting down', {});
    await stopControllers();
    await elector?.stop();
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
