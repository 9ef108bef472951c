// What the data-plane benchmarks share: the end-to-end suite's environment (registry, images,
// control plane with the real node, upstream CRDs, the signed chart), the real data plane on it
// (CoreDNS, AI Gateway, Envoy Gateway, one platform Gateway), the chart installed, a provider
// credential, and the stand-in provider (stand-in-provider.ts, its own process) on the node
// address under `upstreamHost`. Also how they send requests and read a process's CPU and memory.
// Needs root (the node), like the end-to-end suite.
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as path from 'node:path';
import { issueCertificateAuthority, issueServingCertificate, type KeyPair } from '../../../src/webhook/certificates';
import globalSetup from '../../e2e/support/global-setup';
import globalTeardown from '../../e2e/support/global-teardown';
import * as dp from '../../e2e/support/dataplane';
import { admin, CHART, helmOk, imageRoot, NAMESPACE, RELEASE } from '../../e2e/support/e2e';
import { type KubeObject, objectRef } from '../../../src/kube/rest';
import { waitFor } from '../../support/processes';
import { e2eState } from '../../e2e/support/state';

const repoRoot = path.resolve(__dirname, '../../..');

/** The platform Gateway the benchmarks route through. */
export const BENCH_GATEWAY = { name: 'nebari-gateway', listener: 'llm-https', hostname: 'llm.example.test' };
/** The Secret every bench model's provider credential comes from. */
export const PROVIDER_CREDENTIAL = 'provider-credentials';

/** Where a request goes: an address and port, the TLS name and CA, and a key if any. */
export interface Target {
  readonly address: string;
  readonly port: number;
  readonly hostname: string;
  readonly ca: string;
  readonly token?: string;
}

export interface DataPlaneBench {
  readonly ca: KeyPair;
  /** The Gateway's proxy Service, without a key. */
  readonly gateway: Target;
  /** Stop the stand-in and everything the e2e setup started. */
  stop(): Promise<void>;
}

/** Set-up choices of a data-plane benchmark. */
export interface DataPlaneOptions {
  /**
   * Verify the provider against a ConfigMap holding the bench CA (chart value
   * platform.providerTLS.caConfigMap) instead of the proxies' system bundle.
   */
  readonly providerCA?: boolean;
  /**
   * Give the AI Gateway controller's liveness probe 10 s to answer and 6 tries, every 10 s (its
   * chart's 1 s every 2 s kills it while hundreds of models are created at once on 2 cores:
   * docs/performance.md), as docs/compatibility-gateway.md advises for such loads.
   */
  readonly relaxedControllerProbe?: boolean;
  /**
   * The largest message between Envoy Gateway and the AI Gateway's extension server, MiB, on both
   * sides (4 MiB by default; Envoy Gateway stops publishing any update once a translation's
   * message to the extension server is larger: docs/performance.md).
   */
  readonly extensionMessageMiB?: number;
  /**
   * Envoy Gateway's log level. At `info` (the AI Gateway's recommended values) it logs two lines per
   * object of every translation, so its log grows with models × changes.
   */
  readonly envoyGatewayLogLevel?: dp.EnvoyGatewayTuning['logLevel'];
}

/** Set up the data plane and the chart; `upstreamHost` resolves (CoreDNS) to the stand-in provider. */
export async function startDataPlaneBench(upstreamHost: string, options: DataPlaneOptions = {}): Promise<DataPlaneBench> {
  await globalSetup();
  const children: ChildProcess[] = [];
  const stop = async () => {
    for (const child of children) child.kill('SIGTERM');
    await globalTeardown();
  };
  try {
    const state = e2eState();
    const ca = issueCertificateAuthority({ commonName: 'nls data-plane bench CA' });
    const serving = issueServingCertificate({ ca, dnsNames: [upstreamHost] });
    const upstream = fork(path.join(repoRoot, 'scripts/ts-run.js'), [path.join(__dirname, 'stand-in-provider.ts')], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    children.push(upstream);
    await new Promise<void>((resolve, reject) => {
      upstream.once('message', () => resolve());
      upstream.once('exit', (code) => reject(new Error(`stand-in provider exited with ${code}`)));
      upstream.send({ cert: serving.certPem, key: serving.keyPem });
    });
    const bundle = fs.readFileSync(path.join(imageRoot(), 'etc', 'ssl', 'certs', 'ca-certificates.crt'), 'utf8');
    const images = dp.pushDataPlaneImages(state.images.operator.repository.split('/')[0], ca, bundle);
    await dp.installCoreDns(images.coredns, [upstreamHost]);
    await dp.installAiGateway(images, undefined, options.extensionMessageMiB);
    if (options.relaxedControllerProbe) await relaxControllerProbe();
    await dp.installEnvoyGateway(images, fs.mkdtempSync(path.join(state.dir, 'eg-')), undefined, { extensionMessageMiB: options.extensionMessageMiB, logLevel: options.envoyGatewayLogLevel });
    await dp.installPlatformGateways([BENCH_GATEWAY], ca, images.envoy);
    const caValues = options.providerCA ? ['--set', `platform.providerTLS.caConfigMap=${PROVIDER_CA}`] : [];
    await helmOk(4, ['install', RELEASE, `${state.chartRepo}/${CHART}`, '--version', state.version, '-n', NAMESPACE, '--create-namespace', '--wait', '--timeout', '5m', '--set', 'platform.baseDomain=example.test', ...caValues]);
    if (options.providerCA) {
      await admin().apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: PROVIDER_CA, namespace: NAMESPACE }, data: { 'ca.crt': ca.certPem } } as never, { fieldManager: 'bench', force: true });
    }
    await admin().apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: PROVIDER_CREDENTIAL, namespace: NAMESPACE }, type: 'Opaque', stringData: { apiKey: 'sk-bench-provider-key-0123456789' } } as never, { fieldManager: 'bench', force: true });
    const gateway: Target = { address: await dp.proxyAddress(BENCH_GATEWAY.name), port: 443, hostname: BENCH_GATEWAY.hostname, ca: ca.certPem };
    return { ca, gateway, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The ConfigMap of provider CAs with `DataPlaneOptions.providerCA`. */
const PROVIDER_CA = 'provider-ca';

/** The AI Gateway controller's liveness probe as `DataPlaneOptions.relaxedControllerProbe` says, and its pod rolled. */
async function relaxControllerProbe(): Promise<void> {
  const [deployment] = (await admin().list<KubeObject>('apps/v1', 'Deployment', { namespace: dp.AIGW_NAMESPACE })).items;
  if (!deployment) throw new Error(`no AI Gateway controller Deployment in ${dp.AIGW_NAMESPACE}`);
  const probe = { grpc: { port: 1063 }, initialDelaySeconds: 5, periodSeconds: 10, timeoutSeconds: 10, failureThreshold: 6 };
  await admin().jsonPatch(objectRef('apps/v1', 'Deployment', deployment.metadata.name, dp.AIGW_NAMESPACE), [{ op: 'replace', path: '/spec/template/spec/containers/0/livenessProbe', value: probe }]);
  await waitFor('the AI Gateway controller rolled with the relaxed probe', async () => {
    const d = await admin().get<KubeObject & { status?: { updatedReplicas?: number; readyReplicas?: number; replicas?: number; observedGeneration?: number } }>(objectRef('apps/v1', 'Deployment', deployment.metadata.name, dp.AIGW_NAMESPACE));
    const st = d?.status;
    return !!d && st?.observedGeneration === d.metadata.generation && st?.updatedReplicas === st?.replicas && st?.readyReplicas === st?.replicas;
  }, { timeoutMs: 180_000, intervalMs: 1000 });
}

/** One chat completion (`body` as given); the status and when the first and last bytes came. */
export function send(agent: https.Agent, t: Target, body: string): Promise<{ status: number; firstByteMs: number; totalMs: number }> {
  const started = process.hrtime.bigint();
  const ms = () => Number(process.hrtime.bigint() - started) / 1e6;
  return new Promise((resolve, reject) => {
    const req = https.request({
      host: t.address, port: t.port, method: 'POST', path: '/v1/chat/completions', servername: t.hostname, ca: t.ca, agent,
      headers: { host: t.hostname, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...(t.token ? { authorization: `Bearer ${t.token}` } : {}) },
    }, (res) => {
      let first = 0;
      res.on('data', () => { if (!first) first = ms(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, firstByteMs: first || ms(), totalMs: ms() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The pids of the processes whose command line (arguments joined by spaces) matches. */
export function processes(match: (cmdline: string) => boolean): number[] {
  const pids: number[] = [];
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (match(fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' '))) pids.push(Number(pid));
    } catch {
      // the process went away
    }
  }
  return pids;
}

/** CPU seconds (user + system) used so far by the processes whose command line matches. */
export function cpuSeconds(match: (cmdline: string) => boolean): number {
  const tick = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  let total = 0;
  for (const pid of processes(match)) {
    try {
      const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      total += (Number(fields[11]) + Number(fields[12])) / tick;
    } catch {
      // the process went away
    }
  }
  return total;
}

/** Resident memory (VmRSS) of the matching processes together, in MiB. */
export function residentMiB(match: (cmdline: string) => boolean): number {
  let kib = 0;
  for (const pid of processes(match)) {
    try {
      kib += Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      // the process went away
    }
  }
  return kib / 1024;
}

/** The data plane's programs, by the paths their images start them from (test/e2e/support/dataplane.ts). */
export const DATA_PLANE_PROCESSES = {
  envoy: (c: string) => c.startsWith('/usr/local/bin/envoy ') || c.startsWith('envoy '),
  extproc: (c: string) => c.includes('aigw-extproc'),
  envoyGateway: (c: string) => c.startsWith('/usr/local/bin/envoy-gateway'),
  aiGatewayController: (c: string) => c.startsWith('/usr/local/bin/aigw-controller'),
} as const;
