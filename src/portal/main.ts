// The key portal's entrypoint (`node lib/src/portal/main.js`): reads its configuration from the
// environment, serves plain HTTP (TLS ends at the Gateway) at once for the probes, then loads the
// session key and runs OIDC discovery, retrying until both work (only then /readyz answers 200),
// and starts the group refresh loop (one replica at a time, by Lease). Prometheus `/metrics` is on
// its own port (NLS_PORTAL_METRICS_PORT), which the HTTPRoute does not route.
import { AddressInfo } from 'node:net';
import { Hono } from 'hono';
import { serve, ServerType } from '@hono/node-server';
import { KubeRest, loadKubeConfig } from '../kube/rest';
import { EventRecorder } from '../runtime/events';
import { createLogger, parseLogLevel } from '../runtime/log';
import { version } from '../version';
import { PortalConfig, PortalConfigError, portalConfigFromEnv } from './config';
import { createPortalApp } from './app';
import { GroupRefresher } from './group-refresh';
import { OidcClient } from './oidc';
import { portalMetrics } from './metrics';
import { loadSessionKeys } from './session';
import { startMetricsServer } from '../operator/runtime/http-servers';

export const portalComponent = 'nebari-llm-serving-key-portal';
export const GROUP_REFRESH_LEASE = 'nls-portal-group-refresh';

async function retrying<T>(what: string, log: ReturnType<typeof createLogger>, stopped: () => boolean, attempt: () => Promise<T>): Promise<T | undefined> {
  for (let n = 0; !stopped(); n++) {
    try {
      return await attempt();
    } catch (err) {
      log.warn(`${what} failed; retrying`, { err });
      await new Promise((r) => setTimeout(r, Math.min(30_000, 1000 * 2 ** Math.min(n, 5))));
    }
  }
  return undefined;
}

export async function runPortal(config: PortalConfig): Promise<{ port: number; metricsPort: number; stop(): Promise<void> }> {
  const log = createLogger({ level: parseLogLevel(process.env.NLS_LOG_LEVEL), fields: { component: portalComponent, pod: config.podName } });
  log.info('starting', { version, namespace: config.namespace, url: config.url, issuer: config.issuer });
  const client = new KubeRest(loadKubeConfig());
  let stopped = false;
  let oidc: OidcClient | undefined;
  // Until the session key is loaded only the probes answer.
  let handler: Hono = new Hono()
    .get('/healthz', (c) => c.text('ok'))
    .all('*', (c) => c.text('not ready', 503));

  const server: ServerType = serve({ fetch: (req) => handler.fetch(req), port: config.port, hostname: config.bindAddress });
  await new Promise<void>((resolve) => (server.listening ? resolve() : server.once('listening', () => resolve())));
  const port = (server.address() as AddressInfo).port;
  const metrics = portalMetrics();
  const metricsServer = await startMetricsServer(metrics.registry, config.metricsPort, config.bindAddress);
  log.info('listening', { port, metricsPort: metricsServer.port, address: config.bindAddress });

  let refresher: GroupRefresher | undefined;
  const started = (async () => {
    const sessionKey = await retrying('loading the session keys', log, () => stopped, () => loadSessionKeys(client, config.namespace, config.sessionSecretName));
    if (!sessionKey) return;
    log.info('session keys loaded', { keys: sessionKey.length });
    handler = createPortalApp({ config, client, sessionKey, login: () => oidc, ready: () => !!oidc, log, metrics }) as unknown as Hono;
    oidc = await retrying('OIDC discovery', log, () => stopped, () => OidcClient.discover(config));
    if (!oidc) return;
    log.info('ready', { issuer: config.issuer });
    const o = oidc;
    refresher = new GroupRefresher(
      {
        client,
        namespace: config.namespace,
        sessionKey,
        ...(config.secretsRole ? { secretsRole: config.secretsRole } : {}),
        refresh: (token, sub) => o.refresh(token, sub),
        log: log.child({ component: 'group-refresh' }),
        events: new EventRecorder(client, portalComponent, config.podName, log),
        failClosedAfterSeconds: config.groupRefreshFailClosedSeconds,
        metrics,
      },
      config.groupRefreshSeconds,
      { namespace: config.podNamespace, name: GROUP_REFRESH_LEASE, identity: config.podName },
    );
    refresher.start();
  })();

  return {
    port,
    metricsPort: metricsServer.port,
    stop: async () => {
      stopped = true;
      await started.catch(() => undefined);
      await refresher?.stop();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await metricsServer.close();
      client.close();
    },
  };
}

if (require.main === module) {
  let config: PortalConfig;
  try {
    config = portalConfigFromEnv();
  } catch (err) {
    if (!(err instanceof PortalConfigError)) throw err;
    console.error(JSON.stringify({ level: 'error', component: portalComponent, msg: 'invalid configuration', error: err.message }));
    process.exit(1);
  }
  runPortal(config).then(
    (portal) => {
      for (const sig of ['SIGTERM', 'SIGINT'] as const) process.once(sig, () => void portal.stop().then(() => process.exit(0)));
    },
    (err) => {
      console.error(JSON.stringify({ level: 'error', component: portalComponent, msg: 'could not start', error: String((err as Error)?.message ?? err) }));
      process.exit(1);
    },
  );
}
