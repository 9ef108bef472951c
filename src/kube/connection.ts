// How to reach the API server: its URL and what each request carries (CA, client certificate,
// bearer token). The operator's two cases, in-cluster (the pod's ServiceAccount) and a kubeconfig
// of server + CA + token or client certificate, are read here without @kubernetes/client-node:
// loading that library costs the process about 60 MiB of resident memory (its generated API
// models, measured in docs/performance.md) that the operator never uses. Anything else a
// kubeconfig can say (exec or auth-provider plugins, proxies, several files in KUBECONFIG) is
// handed to client-node's KubeConfig, loaded only then.
import * as fs from 'node:fs';
import type * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';

/** What KubeRest needs of a kubeconfig; client-node's KubeConfig has the same shape. */
export interface KubeConnection {
  getCurrentCluster(): { readonly server: string; readonly proxyUrl?: string } | null;
  /** Adds TLS settings and the Authorization header to one request's options. */
  applyToHTTPSOptions(options: https.RequestOptions): Promise<void>;
}

export interface StaticConnectionSettings {
  readonly server: string;
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
  readonly token?: string;
  /** Re-read at most once a minute: projected ServiceAccount tokens rotate. */
  readonly tokenFile?: string;
  readonly insecureSkipTlsVerify?: boolean;
  readonly tlsServerName?: string;
}

const TOKEN_REREAD_MS = 60_000;

/** A connection from fixed settings (the token file, if any, is re-read once a minute). */
export class StaticConnection implements KubeConnection {
  private token?: { value: string; readAt: number };

  constructor(readonly settings: StaticConnectionSettings) {}

  getCurrentCluster() {
    return { server: this.settings.server };
  }

  async applyToHTTPSOptions(options: https.RequestOptions): Promise<void> {
    const s = this.settings;
    if (s.ca) options.ca = s.ca;
    if (s.cert) options.cert = s.cert;
    if (s.key) options.key = s.key;
    if (s.insecureSkipTlsVerify) options.rejectUnauthorized = false;
    if (s.tlsServerName) options.servername = s.tlsServerName;
    const token = this.currentToken();
    if (token) options.headers = { ...options.headers, Authorization: `Bearer ${token}` };
  }

  private currentToken(): string | undefined {
    if (!this.settings.tokenFile) return this.settings.token;
    if (!this.token || Date.now() - this.token.readAt > TOKEN_REREAD_MS) {
      this.token = { value: fs.readFileSync(this.settings.tokenFile, 'utf8').trim(), readAt: Date.now() };
    }
    return this.token.value;
  }
}

const serviceAccountDir = '/var/run/secrets/kubernetes.io/serviceaccount';

/** The pod's ServiceAccount connection, when running in a cluster. */
export function inClusterConnection(env: NodeJS.ProcessEnv = process.env, dir = serviceAccountDir): StaticConnection | undefined {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port || !fs.existsSync(path.join(dir, 'token'))) return undefined;
  const server = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return new StaticConnection({ server, ca: fs.readFileSync(path.join(dir, 'ca.crt')), tokenFile: path.join(dir, 'token') });
}

interface KubeconfigFile {
  'current-context'?: string;
  clusters?: { name: string; cluster?: Record<string, unknown> }[];
  users?: { name: string; user?: Record<string, unknown> }[];
  contexts?: { name: string; context?: { cluster?: string; user?: string } }[];
}

// Fields of a cluster and a user this reader understands; any other field sends the kubeconfig to client-node.
const CLUSTER_FIELDS = new Set(['server', 'certificate-authority', 'certificate-authority-data', 'insecure-skip-tls-verify', 'tls-server-name']);
const USER_FIELDS = new Set(['token', 'tokenFile', 'client-certificate', 'client-certificate-data', 'client-key', 'client-key-data']);

/**
 * The current context of a kubeconfig as a StaticConnection, or undefined when it uses anything
 * beyond server, CA, TLS name, token and client certificate (client-node then reads it).
 */
export function kubeconfigConnection(text: string, file: string): StaticConnection | undefined {
  let config: KubeconfigFile;
  try {
    config = JSON.parse(text) as KubeconfigFile;
  } catch {
    // YAML (a superset of JSON): the parser is loaded only for such files.
    config = (require('yaml') as typeof import('yaml')).parse(text) as KubeconfigFile; // eslint-disable-line @typescript-eslint/no-require-imports
  }
  const context = config.contexts?.find((c) => c.name === config['current-context'])?.context;
  const cluster = config.clusters?.find((c) => c.name === context?.cluster)?.cluster;
  const user = context?.user === undefined ? {} : config.users?.find((u) => u.name === context.user)?.user;
  if (!cluster || !user || typeof cluster.server !== 'string') return undefined;
  if (Object.keys(cluster).some((k) => !CLUSTER_FIELDS.has(k)) || Object.keys(user).some((k) => !USER_FIELDS.has(k))) return undefined;
  const dir = path.dirname(file);
  const bytes = (data: unknown, fileField: unknown) =>
    typeof data === 'string' ? Buffer.from(data, 'base64') : typeof fileField === 'string' ? fs.readFileSync(path.resolve(dir, fileField)) : undefined;
  return new StaticConnection({
    server: cluster.server,
    ca: bytes(cluster['certificate-authority-data'], cluster['certificate-authority']),
    cert: bytes(user['client-certificate-data'], user['client-certificate']),
    key: bytes(user['client-key-data'], user['client-key']),
    token: typeof user.token === 'string' ? user.token : undefined,
    tokenFile: typeof user.tokenFile === 'string' ? path.resolve(dir, user.tokenFile) : undefined,
    insecureSkipTlsVerify: cluster['insecure-skip-tls-verify'] === true,
    tlsServerName: typeof cluster['tls-server-name'] === 'string' ? cluster['tls-server-name'] : undefined,
  });
}

/**
 * The connection the way kubectl finds it: KUBECONFIG, then ~/.kube/config, then in-cluster;
 * client-node's KubeConfig for whatever kubeconfigConnection does not read.
 */
export function loadConnection(): KubeConnection {
  const env = process.env;
  const files = (env.KUBECONFIG ?? '').split(path.delimiter).filter(Boolean);
  const home = path.join(os.homedir(), '.kube', 'config');
  const file = files.length === 1 ? files[0] : files.length === 0 && fs.existsSync(home) ? home : undefined;
  const own = file ? kubeconfigConnection(fs.readFileSync(file, 'utf8'), file) : files.length === 0 ? inClusterConnection(env) : undefined;
  if (own) return own;
  const { KubeConfig } = require('@kubernetes/client-node') as typeof import('@kubernetes/client-node'); // eslint-disable-line @typescript-eslint/no-require-imports
  const kc = new KubeConfig();
  kc.loadFromDefault();
  return kc;
}
