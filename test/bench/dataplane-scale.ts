// Benchmark (`npm run bench -- dataplane-scale`): the data plane as PassthroughModels pile up. On
// the end-to-end suite's real node and data plane (test/bench/support/data-plane.ts: Envoy
// Gateway, the AI Gateway controller, Envoy with the extproc sidecar), PassthroughModels on the
// external endpoint, each with one key minted the way `nls keys mint` mints it, all answered by
// one stand-in provider. For each size in `NLS_BENCH_DATAPLANE_MODELS` (default 100,1000), in
// ascending order and adding to the models already there:
// - batch: the models up to the size minus one are created and keyed (16 at a time); the clock
//   runs until every one of them answers 200 through Envoy with its own key;
// - the last model alone: created, keyed, and the time until it answers 200 (the figure the issue
//   compares between sizes);
// - one change: that model gains a second served model id; the time until a request naming it
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
import { admin, imageRoot, NAMESPACE } from '../e2e/support/e2e';
import { pool } from './operator';
import { envoyWithTlsClusters } from './support/envoy-tls-clusters';
import { BENCH_GATEWAY, cpuSeconds, DATA_PLANE_PROCESSES, processes, PROVIDER_CREDENTIAL, residentMiB, send, startDataPlaneBench, type Target } from './support/data-plane';

const UPSTREAM_HOST = 'api.scale.example';
const CONCURRENCY = 16;
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

/** Seconds until every model answers 200, asking the ones that do not yet once a second. */
async function untilAllAnswer(models: Keyed[], timeoutMs: number): Promise<number> {
  const started = Date.now();
  const agent = new https.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  let waiting = models;
  try {
    await waitFor(`${models.length} models answering 200 through Envoy`, async () => {
      const still: Keyed[] = [];
      await pool(waiting, CONCURRENCY, async (m) => { if (!(await answers(agent, m))) still.push(m); });
      waiting = still;
      return waiting.length === 0;
    }, { timeoutMs, intervalMs: 1000 }).catch((err: Error) => {
      throw new Error(`${err.message}: ${waiting.length} of ${models.length} still not answering 200 (e.g. ${waiting.slice(0, 3).map((m) => m.name).join(', ')})`);
    });
  } finally {
    agent.destroy();
  }
  return (Date.now() - started) / 1000;
}

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
  if (sizes.some((n) => !Number.isInteger(n) || n < 2)) throw new Error(`NLS_BENCH_DATAPLANE_MODELS must list sizes of at least 2, got ${process.env.NLS_BENCH_DATAPLANE_MODELS}`);
  // NLS_BENCH_DATAPLANE_PROVIDER_CA=1: the provider verified against a ConfigMap of its CA (no
  // file watch per model); NLS_BENCH_DATAPLANE_RELAXED_PROBE=1: the AI Gateway controller's
  // liveness probe relaxed, as docs/compatibility-gateway.md advises for hundreds of models at once.
  // NLS_BENCH_DATAPLANE_EXTENSION_MESSAGE_MIB=<n>: Envoy Gateway's and the AI Gateway's limit on
  // their extension messages raised from 4 MiB.
  const extensionMessageMiB = Number(process.env.NLS_BENCH_DATAPLANE_EXTENSION_MESSAGE_MIB ?? 0) || undefined;
  const options = { providerCA: process.env.NLS_BENCH_DATAPLANE_PROVIDER_CA === '1', relaxedControllerProbe: process.env.NLS_BENCH_DATAPLANE_RELAXED_PROBE === '1', extensionMessageMiB };
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
      'one model: Envoy RSS (heap) / extproc / Envoy Gateway / AI Gateway controller MiB': `${base.envoy.toFixed(0)} (${base.envoyHeap.toFixed(0)}) / ${base.extproc.toFixed(0)} / ${base.envoyGateway.toFixed(0)} / ${base.aiGateway.toFixed(0)}`,
      'one model: Envoy configuration KiB': base.configBytes / 1024,
      'Envoy alone, heap MiB per TLS cluster with the system CA bundle (200 clusters): own secret each / one shared secret': `${((alone.separate - alone.one) / 199).toFixed(3)} / ${((alone.shared - alone.one) / 199).toFixed(3)}`,
      'the system CA bundle, KiB': fs.statSync(bundle).size / 1024,
    };
    for (const size of sizes) {
      const cpuBefore = cpu();
      const batchStarted = Date.now();
      const names = Array.from({ length: size - 1 - all.length }, (_, i) => modelName(all.length + i + 1));
      const batch: Keyed[] = [];
      await pool(names, CONCURRENCY, async (name) => { batch.push(await createKeyed(bench.gateway, name)); });
      all.push(...batch);
      await untilAllAnswer(batch, 600_000 + size * 600);
      const batchSeconds = (Date.now() - batchStarted) / 1000;

      const lastStarted = Date.now();
      const last = await createKeyed(bench.gateway, modelName(size));
      all.push(last);
      await untilAllAnswer([last], 300_000 + size * 120);
      const lastSeconds = (Date.now() - lastStarted) / 1000;

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
      figures[`${at} model number ${size} from apply to first 200, s`] = lastSeconds;
      figures[`${at} one change (a second served id) until it answers, s`] = changeSeconds;
      figures[`${at} Envoy RSS (heap) / extproc / Envoy Gateway / AI Gateway controller MiB`] = `${now.envoy.toFixed(0)} (${now.envoyHeap.toFixed(0)}) / ${now.extproc.toFixed(0)} / ${now.envoyGateway.toFixed(0)} / ${now.aiGateway.toFixed(0)}`;
      figures[`${at} Envoy MiB per model over one model, RSS / heap`] = `${growth('envoy').toFixed(3)} / ${growth('envoyHeap').toFixed(3)}`;
      figures[`${at} Envoy configuration MiB; KiB per model`] = `${(now.configBytes / 2 ** 20).toFixed(1)}; ${(growth('configBytes') / 1024).toFixed(1)}`;
      figures[`${at} CPU s over this size's steps: Envoy+extproc / Envoy Gateway / AI Gateway controller`] = `${(used.envoy - cpuBefore.envoy).toFixed(1)} / ${(used.envoyGateway - cpuBefore.envoyGateway).toFixed(1)} / ${(used.aiGateway - cpuBefore.aiGateway).toFixed(1)}`;
      figures[`${at} load average (1 min)`] = loadAverage();
      figures[`${at} restarts of the release's and the data plane's pods`] = await restarts();
      console.log(`dataplane-scale, ${size} models done: ${JSON.stringify(Object.fromEntries(Object.entries(figures).filter(([k]) => k.startsWith(at))))}`);
    }
    const first = figures[`${sizes[0]} models: model number ${sizes[0]} from apply to first 200, s`] as number;
    const final = figures[`${sizes.at(-1)} models: model number ${sizes.at(-1)} from apply to first 200, s`] as number;
    figures[`ratio: apply to first 200 of model number ${sizes.at(-1)} / number ${sizes[0]} (goal ≤ 2)`] = final / first;
    return figures;
  } catch (err) {
    throw new Error(
      `${(err as Error).message}\nrestarts of the release's and the data plane's pods: ${await restarts().catch((e) => (e as Error).message)}\nfigures so far: ${JSON.stringify(figures, null, 1)}`,
    );
  } finally {
    await bench.stop();
  }
}
