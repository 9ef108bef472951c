// Benchmark (`npm run bench -- dataplane-scale`): the data plane as PassthroughModels pile up. On
// the end-to-end suite's real node and data plane (test/bench/support/data-plane.ts: Envoy
// Gateway, the AI Gateway controller, Envoy with the extproc sidecar), PassthroughModels on the
// external endpoint, each with one key minted the way `nls keys mint` mints it, all answered by
// one stand-in provider. For each size in `NLS_BENCH_DATAPLANE_MODELS` (default 100,1000), in
// ascending order and adding to the models already there:
// - batch: the models up to the size minus LAST are created and keyed (16 at a time); the clock
//   runs until every one of them answers 200 through Envoy with its own key;
// - quiet: the time until the data plane has finished with the batch (below, `untilQuiet`);
// - the last LAST models alone, each on a quiet data plane: created, keyed, and the time until it
//   answers 200 (their median is the figure the issue compares between sizes);
// - one change: the last model gains a second served model id; the time until a request naming it
//   answers 200;
// - then, settled: restarts of the release's and the data plane's pods, the resident memory of Envoy, the extproc, Envoy Gateway and the AI Gateway
//   controller, their CPU seconds over the size's steps, and the size of Envoy's configuration
//   (its admin `/config_dump`, read inside the proxy pod's network namespace).
// Per model figures divide the growth over the data plane serving one model (the AI Gateway
// injects its extproc only once a Gateway has a route of its own). Bounded: each wait has a
// deadline that grows with the size. Needs root (the node), like the end-to-end suite.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as path from 'node:path';
import { type KubeObject, objectRef } from '../../src/kube/rest';
import { mintKey } from '../../src/api-keys/key-store';
import { waitFor } from '../support/processes';
import * as dp from '../e2e/support/dataplane';
import { admin, imageRoot, NAMESPACE, pods } from '../e2e/support/e2e';
import { pool } from './operator';
import { envoyWithTlsClusters } from './support/envoy-tls-clusters';
import { BENCH_GATEWAY, cpuSeconds, DATA_PLANE_PROCESSES, type DataPlaneOptions, processes, PROVIDER_CREDENTIAL, residentMiB, send, startDataPlaneBench, type Target } from './support/data-plane';
import { median } from './support/stats';

const UPSTREAM_HOST = 'api.scale.example';
const CONCURRENCY = 16;
/** How many models of each size are timed alone at the end (their median is the size's figure). */
const LAST = 3;
const modelName = (i: number) => `scale-${i}`;

interface Keyed {
  readonly name: string;
  readonly target: Target;
}

function passthroughModel(name: string, ids: string[]): KubeObject {
  return {
    apiVersion: 'llm.nebari.dev/v1beta1', kind: 'PassthroughModel', metadata: { name, namespace: NAMESPACE },
    spec: { provider: { hostname: UPSTREAM_HOST, credential: { secretRef: { name: PROVIDER_CREDENTIAL } } }, models: { declared: ids }, access: { public: true }, endpoints: { internal: { enabled: false } } },
  } as KubeObject;
}

/** Create the model and mint its key (waiting for the operator's key objects, as `nls keys mint` does). */
async function createKeyed(gateway: Target, name: string): Promise<Keyed> {
  await admin().create(passthroughModel(name, [name]));
  const minted = await mintKey(admin(), { kind: 'PassthroughModel', name, namespace: NAMESPACE }, 'bench', undefined, { waitMs: 600_000 });
  return { name, target: { ...gateway, token: minted.apiKey } };
}

async function answers(agent: https.Agent, m: Keyed, model = m.name): Promise<boolean> {
  const r = await send(agent, m.target, JSON.stringify({ model, messages: [{ role: 'user', content: 'ping' }], max_tokens: 1 })).catch(() => ({ status: 0 }));
  return r.status === 200;
}

/**
 * Seconds until every model answers 200, asking the ones that do not yet every `intervalMs` (once a
 * second for a batch; a model timed alone is asked every 200 ms, as the change is).
 */
async function untilAllAnswer(models: Keyed[], timeoutMs: number, intervalMs = 1000): Promise<number> {
  const started = Date.now();
  const agent = new https.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  let waiting = models;
  try {
    await waitFor(`${models.length} models answering 200 through Envoy`, async () => {
      const still: Keyed[] = [];
      await pool(waiting, CONCURRENCY, async (m) => { if (!(await answers(agent, m))) still.push(m); });
      waiting = still;
      return waiting.length === 0;
    }, { timeoutMs, intervalMs }).catch((err: Error) => {
      throw new Error(`${err.message}: ${waiting.length} of ${models.length} still not answering 200 (e.g. ${waiting.slice(0, 3).map((m) => m.name).join(', ')})`);
    });
  } finally {
    agent.destroy();
  }
  return (Date.now() - started) / 1000;
}

/** How long the data plane must show no activity to count as quiet. */
const QUIET_MS = 10_000;

/**
 * Seconds until the data plane has finished with what was applied before, not counting the quiet
 * window itself. A model answers 200 after the AI Gateway controller's first pass over its route,
 * but the controller passes over every route a second time once it has seen the model's
 * BackendSecurityPolicy (BackendSecurityPolicy → AIServiceBackend → AIGatewayRoute, v1.1), and
 * after a burst those second passes queue for minutes; a model created meanwhile waits behind
 * them (docs/performance.md, thirteenth round). Quiet: the AI Gateway controller stamped no new
 * filter configuration on the proxy pods (it does so on every Gateway pass, and every route pass
 * asks for one) and Envoy counted no xDS update attempt, both for QUIET_MS.
 */
async function untilQuiet(timeoutMs: number): Promise<number> {
  const started = Date.now();
  let seen = '';
  let since = Date.now();
  await waitFor('the data plane quiet', async () => {
    const now = await dataPlaneActivity();
    if (now !== seen) {
      seen = now;
      since = Date.now();
    }
    return Date.now() - since >= QUIET_MS;
  }, { timeoutMs, intervalMs: 1000 });
  return (since - started) / 1000;
}

/** What changes while the data plane works: the proxy pods' filter configuration stamps and Envoy's xDS update attempts. */
async function dataPlaneActivity(): Promise<string> {
  const proxies = await pods(dp.proxySelector(BENCH_GATEWAY.name), dp.EG_NAMESPACE);
  const stamps = proxies.map((p) => `${p.metadata.name}=${p.metadata.annotations?.[FILTER_CONFIG_STAMP] ?? ''}`).sort();
  // Only the xDS resources: a cluster's own update_attempt also counts its DNS refreshes.
  const attempts = envoyAdmin(await envoyPid(), '/stats?filter=update_attempt').toString().split('\n').filter((line) => XDS_UPDATE_ATTEMPTS.test(line));
  return `${stamps.join(',')}\n${attempts.join('\n')}`;
}

/** Envoy's counters of configuration updates received: clusters (CDS), listeners (LDS), route tables (RDS). */
const XDS_UPDATE_ATTEMPTS = /^(cluster_manager\.cds|listener_manager\.lds|http\..+\.rds\..+)\.update_attempt: /;

/** The annotation the AI Gateway controller (v1.1) sets on a Gateway's pods with each filter configuration it writes. */
const FILTER_CONFIG_STAMP = 'aigateway.envoyproxy.io/uuid';

/** The proxy pods' Envoy (started by Envoy Gateway with a service cluster), not Envoy alone below. */
const proxyEnvoy = (cmdline: string) => DATA_PLANE_PROCESSES.envoy(cmdline) && cmdline.includes('--service-cluster');

/** The proxy's Envoy process, once only one runs (a roll of the proxy pods has finished). */
async function envoyPid(): Promise<number> {
  let pids: number[] = [];
  await waitFor('one Envoy proxy process', async () => {
    pids = processes(proxyEnvoy);
    return pids.length === 1;
  }, { timeoutMs: 120_000, intervalMs: 1000 });
  return pids[0];
}

/** GET a path of Envoy's admin port, which listens on loopback inside the proxy pod's network namespace. */
function envoyAdmin(pid: number, adminPath: string): Buffer {
  return execFileSync('nsenter', ['-t', String(pid), '-n', 'curl', '-sS', '--fail', '--max-time', '300', `http://127.0.0.1:19000${adminPath}`], { maxBuffer: 2 ** 31 - 1 });
}

/** What the data plane holds now: memory per program (MiB) and Envoy's configuration (bytes). */
async function footprint(dumpTo?: string): Promise<{ envoy: number; envoyHeap: number; extproc: number; envoyGateway: number; aiGateway: number; configBytes: number }> {
  const pid = await envoyPid();
  const config = envoyAdmin(pid, '/config_dump');
  if (dumpTo) fs.writeFileSync(dumpTo, config);
  const allocated = /server\.memory_allocated: (\d+)/.exec(envoyAdmin(pid, '/stats?filter=server.memory_allocated').toString())?.[1];
  return {
    envoy: residentMiB(proxyEnvoy),
    envoyHeap: Number(allocated ?? NaN) / 2 ** 20,
    extproc: residentMiB(DATA_PLANE_PROCESSES.extproc),
    envoyGateway: residentMiB(DATA_PLANE_PROCESSES.envoyGateway),
    aiGateway: residentMiB(DATA_PLANE_PROCESSES.aiGatewayController),
    configBytes: config.length,
  };
}

function cpu(): Record<'envoy' | 'envoyGateway' | 'aiGateway', number> {
  return {
    envoy: cpuSeconds(proxyEnvoy) + cpuSeconds(DATA_PLANE_PROCESSES.extproc),
    envoyGateway: cpuSeconds(DATA_PLANE_PROCESSES.envoyGateway),
    aiGateway: cpuSeconds(DATA_PLANE_PROCESSES.aiGatewayController),
  };
}

type Pod = KubeObject & { status?: { containerStatuses?: { name: string; restartCount: number; lastState?: { terminated?: { reason?: string } } }[] } };

/**
 * Restarts of the release's and the data plane's pods and why, e.g. `envoy-gateway-…/envoy-gateway:
 * 4 (OOMKilled)`: a size at which one of them restarts has reached its limit.
 */
async function restarts(): Promise<string> {
  const found: string[] = [];
  for (const namespace of [NAMESPACE, dp.EG_NAMESPACE, dp.AIGW_NAMESPACE]) {
    const pods = (await admin().list<Pod>('v1', 'Pod', { namespace })).items;
    found.push(...pods.flatMap((p) => (p.status?.containerStatuses ?? []).filter((c) => c.restartCount > 0).map((c) => `${p.metadata.name}/${c.name}: ${c.restartCount} (${c.lastState?.terminated?.reason ?? 'running'})`)));
  }
  return found.join(', ') || 'none';
}

function loadAverage(): number {
  return Number(fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
}

export async function run(): Promise<Record<string, number | string>> {
  const sizes = (process.env.NLS_BENCH_DATAPLANE_MODELS ?? '100,1000').split(',').map(Number).sort((a, b) => a - b);
  if (sizes.some((n) => !Number.isInteger(n) || n < LAST + 2)) throw new Error(`NLS_BENCH_DATAPLANE_MODELS must list sizes of at least ${LAST + 2}, got ${process.env.NLS_BENCH_DATAPLANE_MODELS}`);
  // By default the data plane is set up as docs/installation.md and docs/compatibility-gateway.md
  // advise for hundreds of models, so that `npm run bench` reaches 1,000; each can be turned off.
  // NLS_BENCH_DATAPLANE_PROVIDER_CA=0: the provider verified against the system CA bundle instead
  // of a ConfigMap of its CA (one file watch per model); NLS_BENCH_DATAPLANE_RELAXED_PROBE=0: the
  // AI Gateway controller's liveness probe as its chart sets it;
  // NLS_BENCH_DATAPLANE_EXTENSION_MESSAGE_MIB=<n>: Envoy Gateway's and the AI Gateway's limit on
  // their extension messages (32 by default here; 0: their own 4 MiB).
  // NLS_BENCH_DATAPLANE_EG_LOG_LEVEL=warn: Envoy Gateway logs less than the `info` of the AI
  // Gateway's recommended values.
  const extensionMessageMiB = Number(process.env.NLS_BENCH_DATAPLANE_EXTENSION_MESSAGE_MIB ?? 32) || undefined;
  const envoyGatewayLogLevel = process.env.NLS_BENCH_DATAPLANE_EG_LOG_LEVEL as DataPlaneOptions['envoyGatewayLogLevel'];
  if (envoyGatewayLogLevel && !['debug', 'info', 'warn', 'error'].includes(envoyGatewayLogLevel)) throw new Error(`NLS_BENCH_DATAPLANE_EG_LOG_LEVEL must be debug, info, warn or error, got ${envoyGatewayLogLevel}`);
  const options: DataPlaneOptions = { providerCA: process.env.NLS_BENCH_DATAPLANE_PROVIDER_CA !== '0', relaxedControllerProbe: process.env.NLS_BENCH_DATAPLANE_RELAXED_PROBE !== '0', extensionMessageMiB, envoyGatewayLogLevel };
  const bench = await startDataPlaneBench(UPSTREAM_HOST, options);
  // Kept outside the try, so a size that fails still reports the sizes before it.
  let figures: Record<string, number | string> = {};
  try {
    // The AI Gateway injects its extproc into a Gateway's proxies once a route of its own is
    // attached: the baseline is the data plane serving one model.
    const all: Keyed[] = [await createKeyed(bench.gateway, modelName(1))];
    await waitFor('the proxy pods ready with the extproc sidecar', async () => {
      const pods = await dp.proxyPods(BENCH_GATEWAY.name);
      return pods.length > 0 && pods.every((p) => p.ready && p.withSidecar);
    }, { timeoutMs: 300_000, intervalMs: 1000 });
    await untilAllAnswer(all, 300_000);
    const dumps = process.env.NLS_BENCH_DATAPLANE_DUMPS;
    // The proxies' trust bundle, as their image holds it (test/e2e/support/dataplane.ts).
    const bundle = path.join(imageRoot(), 'etc', 'ssl', 'certs', 'ca-certificates.crt');
    // Envoy alone: is a model's cluster cost its trust bundle, and would sharing the secret save it?
    const heap = async (clusters: number, shared: boolean) => (await envoyWithTlsClusters({ bundle, clusters, shared })).allocatedMiB;
    const alone = { one: await heap(1, false), separate: await heap(200, false), shared: await heap(200, true) };
    const base = await footprint(dumps && path.join(dumps, 'config-1.json'));
    figures = {
      'load average at start (1 min)': loadAverage(),
      'provider verified against': options.providerCA ? 'a ConfigMap of its CA (platform.providerTLS.caConfigMap)' : 'the system CA bundle',
      'AI Gateway controller liveness probe': options.relaxedControllerProbe ? 'relaxed (10 s timeout, 6 tries every 10 s)' : "the chart's (1 s timeout every 2 s)",
      'extension messages between Envoy Gateway and the AI Gateway, MiB at most': extensionMessageMiB ?? '4 (the default)',
      'Envoy Gateway log level': envoyGatewayLogLevel ?? 'info (the AI Gateway\'s recommended values)',
      'one model: Envoy RSS (heap) / extproc / Envoy Gateway / AI Gateway controller MiB': `${base.envoy.toFixed(0)} (${base.envoyHeap.toFixed(0)}) / ${base.extproc.toFixed(0)} / ${base.envoyGateway.toFixed(0)} / ${base.aiGateway.toFixed(0)}`,
      'one model: Envoy configuration KiB': base.configBytes / 1024,
      'Envoy alone, heap MiB per TLS cluster with the system CA bundle (200 clusters): own secret each / one shared secret': `${((alone.separate - alone.one) / 199).toFixed(3)} / ${((alone.shared - alone.one) / 199).toFixed(3)}`,
      'the system CA bundle, KiB': fs.statSync(bundle).size / 1024,
    };
    for (const size of sizes) {
      const cpuBefore = cpu();
      const batchStarted = Date.now();
      const names = Array.from({ length: size - LAST - all.length }, (_, i) => modelName(all.length + i + 1));
      const batch: Keyed[] = [];
      await pool(names, CONCURRENCY, async (name) => { batch.push(await createKeyed(bench.gateway, name)); });
      all.push(...batch);
      await untilAllAnswer(batch, 600_000 + size * 600);
      const batchSeconds = (Date.now() - batchStarted) / 1000;
      const quietSeconds = await untilQuiet(600_000 + size * 600);

      // One model's time varies by seconds from run to run: the median of the last few, each
      // created once the data plane is quiet again.
      const lastTimes: number[] = [];
      for (let n = size - LAST + 1; n <= size; n++) {
        if (lastTimes.length > 0) await untilQuiet(300_000 + size * 120);
        const started = Date.now();
        const model = await createKeyed(bench.gateway, modelName(n));
        all.push(model);
        await untilAllAnswer([model], 300_000 + size * 120, 200);
        lastTimes.push((Date.now() - started) / 1000);
      }
      const last = all[all.length - 1];

      const changeStarted = Date.now();
      const secondId = `${last.name}-second`;
      await admin().mergePatch(objectRef('llm.nebari.dev/v1beta1', 'PassthroughModel', last.name, NAMESPACE), { spec: { models: { declared: [last.name, secondId] } } });
      const agent = new https.Agent({ keepAlive: true });
      await waitFor(`${secondId} answering 200`, () => answers(agent, last, secondId), { timeoutMs: 300_000 + size * 120, intervalMs: 200 });
      agent.destroy();
      const changeSeconds = (Date.now() - changeStarted) / 1000;

      const used = cpu();
      const now = await footprint(dumps && path.join(dumps, `config-${size}.json`));
      const growth = (k: keyof typeof now) => (now[k] - base[k]) / (size - 1);
      const at = `${size} models:`;
      figures[`${at} created, keyed and all answering 200, s`] = batchSeconds;
      figures[`${at} after all answer, until the data plane is quiet (${QUIET_MS / 1000} s without a new AI Gateway filter configuration or Envoy xDS update), s`] = quietSeconds;
      figures[`${at} the last ${LAST} models, each created on the quiet data plane, from apply to first 200, median, s`] = median(lastTimes);
      figures[`${at} the last ${LAST} models, each, s`] = lastTimes.map((t) => t.toFixed(2)).join(' / ');
      figures[`${at} one change (a second served id) until it answers, s`] = changeSeconds;
      figures[`${at} Envoy RSS (heap) / extproc / Envoy Gateway / AI Gateway controller MiB`] = `${now.envoy.toFixed(0)} (${now.envoyHeap.toFixed(0)}) / ${now.extproc.toFixed(0)} / ${now.envoyGateway.toFixed(0)} / ${now.aiGateway.toFixed(0)}`;
      figures[`${at} Envoy MiB per model over one model, RSS / heap`] = `${growth('envoy').toFixed(3)} / ${growth('envoyHeap').toFixed(3)}`;
      figures[`${at} Envoy configuration MiB; KiB per model`] = `${(now.configBytes / 2 ** 20).toFixed(1)}; ${(growth('configBytes') / 1024).toFixed(1)}`;
      figures[`${at} CPU s over this size's steps: Envoy+extproc / Envoy Gateway / AI Gateway controller`] = `${(used.envoy - cpuBefore.envoy).toFixed(1)} / ${(used.envoyGateway - cpuBefore.envoyGateway).toFixed(1)} / ${(used.aiGateway - cpuBefore.aiGateway).toFixed(1)}`;
      figures[`${at} load average (1 min)`] = loadAverage();
      figures[`${at} restarts of the release's and the data plane's pods`] = await restarts();
      console.log(`dataplane-scale, ${size} models done: ${JSON.stringify(Object.fromEntries(Object.entries(figures).filter(([k]) => k.startsWith(at))))}`);
    }
    const lastMedian = (size: number) => figures[`${size} models: the last ${LAST} models, each created on the quiet data plane, from apply to first 200, median, s`] as number;
    figures[`ratio: apply to first 200 of the last models at ${sizes.at(-1)} / at ${sizes[0]}, medians (goal ≤ 2)`] = lastMedian(sizes.at(-1)!) / lastMedian(sizes[0]);
    return figures;
  } catch (err) {
    throw new Error(
      `${(err as Error).message}\nrestarts of the release's and the data plane's pods: ${await restarts().catch((e) => (e as Error).message)}\nfigures so far: ${JSON.stringify(figures, null, 1)}`,
    );
  } finally {
    await bench.stop();
  }
}
