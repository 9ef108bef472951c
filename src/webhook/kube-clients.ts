// API clients for the webhook's own calls to the API server, over one keep-alive connection
// pool. client-node 1.x gives every request a fresh https.Agent, i.e. a new TLS handshake per
// lookup; admission answers within the API server's timeout on every write, so the handshakes
// dominated its latency. Authentication headers (tokens, which may rotate) are still applied
// per request by the KubeConfig itself; only the connection pool is shared.
import * as https from 'node:https';
import * as k8s from '@kubernetes/client-node';

type ApiConstructor<T> = new (configuration: k8s.Configuration) => T;

/** A source of API clients (e.g. `k8s.CoreV1Api`) bound to one identity and server. */
export interface ApiClients {
  make<T>(api: ApiConstructor<T>): T;
}

/** Makes API clients of `kubeConfig` that share one keep-alive agent. */
export function keepAliveClients(kubeConfig: k8s.KubeConfig): ApiClients & { close(): void } {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig has no current cluster; set current-context');
  let agent: Promise<https.Agent> | undefined;
  const sharedAgent = () => {
    agent ??= (async () => {
      const options: https.RequestOptions = {};
      await kubeConfig.applyToHTTPSOptions(options);
      return new https.Agent({
        keepAlive: true,
        maxSockets: 32,
        ca: options.ca,
        cert: options.cert,
        key: options.key,
        rejectUnauthorized: options.rejectUnauthorized,
        servername: options.servername,
      });
    })();
    return agent;
  };
  // Proxies need client-node's own agents; keep its behaviour there.
  const authentication: k8s.SecurityAuthentication = cluster.proxyUrl
    ? kubeConfig
    : {
        getName: () => 'kubeconfig authentication over a shared keep-alive agent',
        async applySecurityAuthentication(context) {
          await kubeConfig.applySecurityAuthentication(context);
          context.setAgent(await sharedAgent());
        },
      };
  const configuration = k8s.createConfiguration({
    baseServer: new k8s.ServerConfiguration(cluster.server, {}),
    authMethods: { default: authentication },
  });
  return {
    make: (api) => new api(configuration),
    close: () => void agent?.then((a) => a.destroy()),
  };
}
