// A real Kubernetes control plane on 127.0.0.1 for tests: etcd + kube-apiserver with token
// authentication, RBAC and the default admission plugins; in `cluster` mode also
// kube-controller-manager, kube-scheduler and kwok with simulated nodes, so garbage collection
// runs and Deployments roll out. Every port is picked free at start; nothing listens elsewhere.
// `node` mode (the end-to-end suite) runs a real kubelet node instead of kwok (see node.ts): the
// API server then listens on the node address inside the run's network namespace, authorizes the
// node with the Node authorizer and writes an audit log of every ServiceAccount's requests.
import * as k8s from '@kubernetes/client-node';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as https from 'https';
import * as os from 'os';
import * as path from 'path';
import { NODE_ADDRESS, NODE_NAME, RealNode, setUpNodeNetwork, startRealNode } from './node';
import { freePort, ManagedProcess, startProcess, waitFor } from './processes';
import { type ConversionWiring, startConversionWiring } from './conversion-wiring';
import { toolPaths } from './tools';
import { DEFAULT_GATEWAY_NAMESPACE as GATEWAY_NAMESPACE } from '../../src/translate/gateway/context';

export type ControlPlaneMode = 'apiserver' | 'cluster' | 'node';

export interface ControlPlaneOptions {
  /**
   * `apiserver`: etcd + kube-apiserver. `cluster`: plus controller-manager, scheduler, kwok.
   * `node`: controller-manager, scheduler and one real node (kubelet, containerd, kube-proxy).
   */
  readonly mode: ControlPlaneMode;
  /** Simulated nodes in cluster mode. @default 3 */
  readonly nodes?: number;
  /** Node mode: where the sandbox (pause) image is, already pushed. */
  readonly realNode?: { readonly registryHost: string; readonly pauseImage: string };
  /**
   * Serve and wire our CRDs' conversion webhook the way the operator would (conversion-wiring.ts).
   * @default true, except in node mode, where the installed operator does it through its Service
   */
  readonly conversion?: boolean;
  /**
   * Keep the folder (every component's log, certificates, and in node mode the node's files with
   * its pod logs) after `stop()`, for a look after the run (the e2e suite's NLS_E2E_KEEP).
   * @default false
   */
  readonly keepFiles?: boolean;
}

/** A plain (non-admin) user known to the API server, for RBAC tests. */
export interface TestUser {
  readonly name: string;
  readonly token: string;
}

export interface ControlPlane {
  readonly mode: ControlPlaneMode;
  readonly dir: string;
  /** The admin kubeconfig file (user `admin`, group `system:masters`). */
  readonly kubeconfigPath: string;
  readonly server: string;
  /** etcd's client URL (plain HTTP on loopback), for tests that check how objects are stored. */
  readonly etcdUrl: string;
  /** Users without any RBAC grant (`alice`, `bob`). */
  readonly users: readonly TestUser[];
  kubeConfig(): k8s.KubeConfig;
  /** A KubeConfig authenticating as one of `users`. */
  userKubeConfig(name: string): k8s.KubeConfig;
  /** Node mode: the real node; its logs are under `<dir>/node`. */
  readonly node?: RealNode;
  /** Node mode: the API server's audit log (JSON lines, requests of ServiceAccounts). */
  readonly auditLog?: string;
  /** Our CRDs' conversion webhook, run by the test process (unless `conversion: false` or node mode). */
  readonly conversion?: ConversionWiring;
  /** Stops kube-apiserver and starts it again on the same port and etcd (a restart mid-run). */
  restartApiServer(): Promise<void>;
  /** Process ids of etcd and kube-apiserver now (the benchmarks read their CPU time). */
  pids(): { etcd: number; apiserver: number };
  stop(): Promise<void>;
}

export async function startControlPlane(options: ControlPlaneOptions): Promise<ControlPlane> {
  const tools = toolPaths();
  const realNode = options.mode === 'node';
  if (realNode && !options.realNode) throw new Error('node mode needs realNode.registryHost and realNode.pauseImage');
  if (realNode) setUpNodeNetwork();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-control-plane-'));
  const certDir = path.join(dir, 'pki');
  fs.mkdirSync(certDir);
  const processes: ManagedProcess[] = [];
  const stopAll = async () => {
    for (const p of [...processes].reverse()) await p.stop();
  };

  try {
    // etcd
    const [etcdClientPort, etcdPeerPort] = [await freePort(), await freePort()];
    const etcdUrl = `http://127.0.0.1:${etcdClientPort}`;
    const peerUrl = `http://127.0.0.1:${etcdPeerPort}`;
    const etcd = startProcess('etcd', tools.etcd, [
      `--data-dir=${path.join(dir, 'etcd')}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=default=${peerUrl}`,
      '--unsafe-no-fsync=true',
      '--log-level=warn',
    ], { logDir: dir });
    processes.push(etcd);
    await waitFor('etcd /health', async () => (await fetch(`${etcdUrl}/health`)).ok, { process: etcd });

    // Credentials: static tokens for the admin and two plain users, an RSA key pair for
    // service-account tokens.
    const adminToken = crypto.randomBytes(24).toString('hex');
    const users: TestUser[] = ['alice', 'bob'].map((name) => ({ name, token: crypto.randomBytes(24).toString('hex') }));
    const [nodeToken, proxyToken] = [crypto.randomBytes(24).toString('hex'), crypto.randomBytes(24).toString('hex')];
    fs.writeFileSync(
      path.join(certDir, 'tokens.csv'),
      [
        `${adminToken},admin,admin-uid,"system:masters"`,
        ...users.map((u) => `${u.token},${u.name},${u.name}-uid`),
        // The node and kube-proxy identities; the default RBAC bootstrap binds system:kube-proxy.
        ...(realNode ? [`${nodeToken},system:node:${NODE_NAME},${NODE_NAME}-uid,"system:nodes"`, `${proxyToken},system:kube-proxy,kube-proxy-uid`] : []),
      ].join('\n') + '\n',
    );
    const { publicKey, privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
    fs.writeFileSync(path.join(certDir, 'sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }));
    fs.writeFileSync(path.join(certDir, 'sa.key'), privateKey.export({ type: 'pkcs8', format: 'pem' }));

    // kube-apiserver. It writes a self-signed serving certificate for 127.0.0.1 into --cert-dir;
    // that file (leaf + its CA) is what clients trust.
    const apiPort = await freePort();
    const host = realNode ? NODE_ADDRESS : '127.0.0.1';
    const server = `https://${host}:${apiPort}`;
    const auditLog = path.join(dir, 'audit.log');
    const auditPolicy = path.join(dir, 'audit-policy.yaml');
    fs.writeFileSync(
      auditPolicy,
      JSON.stringify({ apiVersion: 'audit.k8s.io/v1', kind: 'Policy', omitStages: ['RequestReceived'], rules: [{ level: 'Metadata', userGroups: ['system:serviceaccounts'] }, { level: 'None' }] }),
    );
    const apiserverArgs = [
      `--etcd-servers=${etcdUrl}`,
      `--cert-dir=${certDir}`,
      ...(realNode
        ? [
            // Pods reach the API server through the `kubernetes` Service, whose endpoint is the
            // node address (inside the run's network namespace); the node authorizes as a node.
            `--bind-address=${NODE_ADDRESS}`,
            `--advertise-address=${NODE_ADDRESS}`,
            '--authorization-mode=Node,RBAC',
            '--enable-admission-plugins=NodeRestriction',
            '--kubelet-preferred-address-types=InternalIP',
            `--audit-policy-file=${auditPolicy}`,
            `--audit-log-path=${auditLog}`,
            '--audit-log-format=json',
          ]
        : [
            '--bind-address=127.0.0.1',
            '--advertise-address=127.0.0.1',
            // 127.0.0.1 may not be written into the `kubernetes` Endpoints; nothing needs them here.
            '--endpoint-reconciler-type=none',
            '--authorization-mode=RBAC',
          ]),
      `--secure-port=${apiPort}`,
      '--service-cluster-ip-range=10.96.0.0/16',
      `--token-auth-file=${path.join(certDir, 'tokens.csv')}`,
      `--service-account-issuer=${server}`,
      `--service-account-key-file=${path.join(certDir, 'sa.pub')}`,
      `--service-account-signing-key-file=${path.join(certDir, 'sa.key')}`,
      '--allow-privileged=true',
      '--profiling=false',
      // Without kube-controller-manager no `default` ServiceAccount is ever created.
      ...(options.mode === 'apiserver' ? ['--disable-admission-plugins=ServiceAccount'] : []),
    ];
    let apiserver = startProcess('kube-apiserver', tools.kubeApiserver, apiserverArgs, { logDir: dir });
    processes.push(apiserver);
    const certFile = path.join(certDir, 'apiserver.crt');
    // The file exists before it is fully written: reading it early can yield the leaf without its
    // CA, and every TLS check then fails with "self-signed certificate in certificate chain". The
    // API server writes the key after the certificate, so both complete means the chain is whole.
    const keyFile = path.join(certDir, 'apiserver.key');
    const certificateWritten = () =>
      fs.existsSync(keyFile) && fs.statSync(keyFile).size > 0 && (fs.readFileSync(certFile, 'utf8').match(/-----END CERTIFICATE-----/g) ?? []).length >= 2;
    await waitFor('kube-apiserver serving certificate and its CA', async () => certificateWritten(), { process: apiserver, timeoutMs: 60000 });
    const ca = fs.readFileSync(certFile);

    const kubeconfigPath = path.join(dir, 'kubeconfig');
    const kubeconfigFor = (user: string, token: string) => ({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'test', cluster: { server, 'certificate-authority-data': ca.toString('base64') } }],
      users: [{ name: user, user: { token } }],
      contexts: [{ name: 'test', context: { cluster: 'test', user } }],
      'current-context': 'test',
    });
    fs.writeFileSync(kubeconfigPath, JSON.stringify(kubeconfigFor('admin', adminToken), null, 2), { mode: 0o600 });
    const kubeConfig = () => {
      const kc = new k8s.KubeConfig();
      kc.loadFromFile(kubeconfigPath);
      return kc;
    };
    const userKubeConfig = (name: string) => {
      const user = users.find((u) => u.name === name);
      if (!user) throw new Error(`no test user ${name}; known: ${users.map((u) => u.name).join(', ')}`);
      const kc = new k8s.KubeConfig();
      kc.loadFromString(JSON.stringify(kubeconfigFor(name, user.token)));
      return kc;
    };

    const readyz = async () => {
      const res = await httpsGet(`${server}/readyz`, { ca, token: adminToken });
      return res.status === 200;
    };
    await waitFor('kube-apiserver /readyz', readyz, { process: apiserver, timeoutMs: 120000 });
    const core = kubeConfig().makeApiClient(k8s.CoreV1Api);
    await waitFor('namespace default', async () => !!(await core.readNamespace({ name: 'default' })), { timeoutMs: 60000 });
    // The Gateways' namespace exists before the chart, as after installing Envoy Gateway (the
    // chart's proxy Role goes there: platform.proxyStatus, docs/installation.md).
    await core.createNamespace({ body: { metadata: { name: GATEWAY_NAMESPACE } } });

    let node: RealNode | undefined;
    if (options.mode === 'cluster' || realNode) {
      processes.push(
        startProcess('kube-controller-manager', tools.kubeControllerManager, [
          `--kubeconfig=${kubeconfigPath}`,
          '--leader-elect=false',
          '--bind-address=127.0.0.1',
          '--secure-port=0',
          `--service-account-private-key-file=${path.join(certDir, 'sa.key')}`,
          `--root-ca-file=${certFile}`,
          '--node-monitor-grace-period=60s',
        ], { logDir: dir }),
        startProcess('kube-scheduler', tools.kubeScheduler, [
          `--kubeconfig=${kubeconfigPath}`,
          '--leader-elect=false',
          '--bind-address=127.0.0.1',
          '--secure-port=0',
        ], { logDir: dir }),
      );
    }
    if (realNode) {
      node = await startRealNode({
        dir,
        creds: { server, ca, nodeToken, proxyToken },
        registryHost: options.realNode!.registryHost,
        pauseImage: options.realNode!.pauseImage,
        isReady: async () => {
          const found = await core.readNode({ name: NODE_NAME }).catch(() => undefined);
          return !!found?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
        },
      });
    }
    if (options.mode === 'cluster') {
      const stages = fs.readdirSync(tools.kwokStagesDir).map((f) => `--config=${path.join(tools.kwokStagesDir, f)}`);
      processes.push(
        startProcess('kwok', tools.kwok, [
          `--kubeconfig=${kubeconfigPath}`,
          '--manage-all-nodes=true',
          '--cidr=10.244.0.0/16',
          '--node-ip=127.0.0.1',
          // Without a lease duration kwok never renews the nodes' Leases, so the node lifecycle
          // controller marks them unreachable after its grace period and every pod goes NotReady.
          '--node-lease-duration-seconds=40',
          ...stages,
        ], { logDir: dir, env: { HOME: dir } }),
      );
      await createSimulatedNodes(kubeConfig(), options.nodes ?? 3);
    }
    if (options.mode !== 'apiserver') {
      await waitFor('a Ready default ServiceAccount', async () => {
        const sa = await core.readNamespacedServiceAccount({ name: 'default', namespace: 'default' });
        return !!sa;
      }, { timeoutMs: 60000 });
    }

    const conversion = (options.conversion ?? !realNode) ? await startConversionWiring(kubeConfig()) : undefined;

    const restartApiServer = async () => {
      await apiserver.stop();
      processes.splice(processes.indexOf(apiserver), 1, (apiserver = startProcess('kube-apiserver', tools.kubeApiserver, apiserverArgs, { logDir: dir })));
      await waitFor('kube-apiserver /readyz after restart', readyz, { process: apiserver, timeoutMs: 120000 });
    };

    return {
      mode: options.mode,
      dir,
      kubeconfigPath,
      server,
      etcdUrl,
      users,
      node,
      auditLog: realNode ? auditLog : undefined,
      kubeConfig,
      userKubeConfig,
      conversion,
      restartApiServer,
      pids: () => ({ etcd: etcd.child.pid!, apiserver: apiserver.child.pid! }),
      stop: async () => {
        await conversion?.stop();
        await node?.stop();
        await stopAll();
        if (!options.keepFiles) fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await stopAll();
    throw new Error(`control plane did not start (files kept in ${dir}): ${(err as Error).message}`);
  }
}

/** A GET over HTTPS trusting one CA, with a bearer token. */
export function httpsGet(url: string, opts: { ca: Buffer; token?: string }): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get(url, { ca: opts.ca, headers: opts.token ? { authorization: `Bearer ${opts.token}` } : {}, timeout: 5000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on('error', reject);
  });
}

/** Nodes that kwok manages: Ready, schedulable, with room for GPU workloads. */
async function createSimulatedNodes(kc: k8s.KubeConfig, count: number): Promise<void> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const capacity = { cpu: '32', memory: '256Gi', pods: '110', 'nvidia.com/gpu': '8', 'ephemeral-storage': '1Ti' };
  for (let i = 0; i < count; i++) {
    const name = `kwok-node-${i}`;
    await core.createNode({
      body: {
        metadata: {
          name,
          labels: { 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', 'kubernetes.io/hostname': name, type: 'kwok' },
          annotations: { 'kwok.x-k8s.io/node': 'fake' },
        },
        status: { capacity, allocatable: capacity },
      },
    });
  }
  await waitFor(`${count} Ready simulated nodes`, async () => {
    const nodes = await core.listNode({ labelSelector: 'type=kwok' });
    return nodes.items.filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length === count;
  }, { timeoutMs: 60000 });
}
