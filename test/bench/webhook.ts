// Benchmark: admission latency (p50/p99) and requests per second of the webhook server over
// loopback TLS at concurrency 1, 16 and 64, side by side with a minimal Node HTTPS server that
// answers a fixed allow response (the ceiling of Node + TLS on this machine), and with a second
// baseline that also decodes the body (JSON.parse of the AdmissionReview) and answers with its uid
// (`baseline-parse`, reported separately): the least any webhook must do, so the gap splits into
// what parsing costs and what the webhook adds on top. All three listen with the same TLS and
// server settings (the webhook server's). Each server runs in
// its own child process so the load generator does not share its event loop, on the Node binary
// of the operator image (as production; `node: 'current'` for the smoke test), the TypeScript
// transpiled as `npm run synth` does (scripts/ts-run.js: the compiler's output, no ts-node in the
// process: ts-node loads node:domain, which slows every EventEmitter of both servers). The webhook runs the
// real routes and rules (/validate-llmmodel, a CREATE with the placement checks) with in-memory
// cluster lookups, so the figures are the server's own cost, not the API server's.
// Bounded: at most `requests` per measurement and `secondsPerRun` seconds each.
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as https from 'node:https';
import * as path from 'node:path';
import { admittedKinds } from '../../src/webhook';
import { admissionRoutes } from '../../src/webhook/admission';
import { issueCertificateAuthority, issueServingCertificate } from '../../src/webhook/certificates';
import { admissionServerSettings, listenAdmissionServer } from '../../src/webhook/server';
import type { ServerResponse } from 'node:http';
import { clusterState, memoryLookups } from '../unit/webhook/fixtures';
import { admissionReview, isWellFormedAnswer, post } from '../support/webhook/tls-client';
import { imageNode } from '../support/image-node';
import { percentile } from './support/stats';

type ServerKind = 'webhook' | 'baseline' | 'baseline-parse';
interface Certificates {
  cert: string;
  key: string;
}

const operatorNamespace = 'nebari-llm-serving-system';
const repoRoot = path.resolve(__dirname, '../..');

// ---- child process: one server --------------------------------------------------------------

async function serve(kind: ServerKind, certificates: Certificates): Promise<number> {
  if (kind === 'baseline' || kind === 'baseline-parse') {
    const fixed = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'fixed', allowed: true } });
    const answer = (res: ServerResponse, body: string) => {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    };
    // The webhook server's TLS and timeout settings, so only the request handling differs.
    const server = https.createServer({ ...admissionServerSettings({ cert: certificates.cert, key: certificates.key }) }, (req, res) => {
      if (kind === 'baseline') {
        req.on('data', () => undefined);
        req.on('end', () => answer(res, fixed));
        return;
      }
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request: { uid: string } };
        answer(res, JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: review.request.uid, allowed: true } }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as { port: number }).port;
  }
  const routes = admissionRoutes(admittedKinds, { operatorNamespace, agentNamespaces: [operatorNamespace], lookups: memoryLookups(clusterState()) });
  const server = await listenAdmissionServer({ routes, certificate: certificates, host: '127.0.0.1', port: 0 });
  return server.port;
}

if (process.argv[2] === '--serve') {
  process.once('SIGINT', () => process.exit(0));
  process.once('message', (message: { kind: ServerKind; certificates: Certificates }) => {
    serve(message.kind, message.certificates).then(
      (port) => process.send?.({ port }),
      (error: Error) => {
        console.error(error);
        process.exit(1);
      },
    );
  });
}

// ---- parent: load generator -----------------------------------------------------------------

function startServer(kind: ServerKind, certificates: Certificates, node: string): Promise<{ port: number; child: ChildProcess }> {
  const child = fork(path.join(repoRoot, 'scripts/ts-run.js'), [__filename, '--serve', kind], {
    execPath: node,
    // NLS_BENCH_PROFILE=<dir>: each server writes a V8 CPU profile there when it exits
    // (docs/performance.md reads it with scripts/cpu-profile-summary.ts).
    execArgv: process.env.NLS_BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.NLS_BENCH_PROFILE}`] : [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (message: { port: number }) => resolve({ port: message.port, child }));
    child.once('exit', (code) => reject(new Error(`${kind} server exited with ${code}`)));
    child.send({ kind, certificates });
  });
}

interface Measurement {
  /** The server process's CPU time per request, µs: steadier than times on a loaded machine. */
  serverCpuUs: number;
  p50Ms: number;
  p99Ms: number;
  requestsPerSecond: number;
  requests: number;
}

function meanOf(a: Measurement, b: Measurement): Measurement {
  return { serverCpuUs: (a.serverCpuUs + b.serverCpuUs) / 2, p50Ms: (a.p50Ms + b.p50Ms) / 2, p99Ms: (a.p99Ms + b.p99Ms) / 2, requestsPerSecond: (a.requestsPerSecond + b.requestsPerSecond) / 2, requests: a.requests + b.requests };
}

async function measure(port: number, serverPid: number, ca: string, body: string, concurrency: number, requests: number, secondsPerRun: number): Promise<Measurement> {
  const agent = new https.Agent({ keepAlive: true, maxSockets: concurrency });
  const call = async () => {
    const response = await post({ port, ca, agent, path: '/validate-llmmodel', body });
    if (response.status !== 200 || !isWellFormedAnswer(response)) throw new Error(`unexpected answer ${response.status} ${response.body.slice(0, 200)}`);
    if (!JSON.parse(response.body).response.allowed) throw new Error(`the benchmark request was denied: ${response.body}`);
  };
  // Warm-up: connections, TLS sessions and JIT.
  await Promise.all(Array.from({ length: Math.min(concurrency * 4, 200) }, call));
  const latencies: number[] = [];
  const cpuBefore = cpuSeconds(serverPid);
  const deadline = Date.now() + secondsPerRun * 1000;
  let issued = 0;
  const started = process.hrtime.bigint();
  const worker = async () => {
    while (issued < requests && Date.now() < deadline) {
      issued++;
      const t0 = process.hrtime.bigint();
      await call();
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const serverCpuUs = ((cpuSeconds(serverPid) - cpuBefore) / latencies.length) * 1e6;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return { serverCpuUs, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99), requestsPerSecond: latencies.length / seconds, requests: latencies.length };
}

/** User + system CPU seconds a process has used so far (/proc/<pid>/stat; clock ticks of 1/100 s). */
function cpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export async function run(requests = 8000, secondsPerRun = 6, options: { node?: 'image' | 'current' } = {}): Promise<Record<string, number | string>> {
  const nodeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-bench-node-'));
  try {
    return await measureAll(requests, secondsPerRun, options.node === 'current' ? process.execPath : imageNode(nodeDir));
  } finally {
    fs.rmSync(nodeDir, { recursive: true, force: true });
  }
}

async function measureAll(requests: number, secondsPerRun: number, node: string): Promise<Record<string, number | string>> {
  const ca = issueCertificateAuthority({ commonName: 'bench-ca' });
  const serving = issueServingCertificate({ ca, dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
  const certificates = { cert: serving.certPem, key: serving.keyPem };
  const body = JSON.stringify(
    admissionReview({
      apiVersion: 'llm.nebari.dev/v1beta1',
      kind: 'LLMModel',
      metadata: { name: 'bench', namespace: operatorNamespace },
      spec: { model: { name: 'Qwen/Qwen3-0.6B', source: 'huggingface' }, resources: { gpu: { count: 1, type: 'nvidia' } }, access: { public: true } },
    }),
  );
  const servers = {
    webhook: await startServer('webhook', certificates, node),
    baseline: await startServer('baseline', certificates, node),
    'baseline-parse': await startServer('baseline-parse', certificates, node),
  };
  const figures: Record<string, number | string> = {
    path: '/validate-llmmodel (CREATE, in-memory lookups)',
    'servers run on': `${execFileSync(node, ['--version'], { encoding: 'utf8' }).trim()}${node === process.execPath ? ' (this process\'s Node)' : ' (the operator image\'s Node)'}`,
  };
  try {
    for (const concurrency of [1, 16, 64]) {
      // Twice each in the order webhook, baseline, parse, parse, baseline, webhook (ABCCBA) and
      // averaged, so drifting background load on the machine and the load generator's own warm-up
      // (the first measurement of a run pays for its JIT) hit every server alike.
      const m = (kind: ServerKind) => measure(servers[kind].port, servers[kind].child.pid!, ca.certPem, body, concurrency, requests, secondsPerRun);
      const [w1, b1, p1, p2, b2, w2] = [await m('webhook'), await m('baseline'), await m('baseline-parse'), await m('baseline-parse'), await m('baseline'), await m('webhook')];
      const webhook = meanOf(w1, w2);
      const baseline = meanOf(b1, b2);
      const parse = meanOf(p1, p2);
      for (const [name, m] of [['webhook', webhook], ['baseline', baseline], ['baseline-parse', parse]] as const) {
        figures[`c${concurrency}_${name}_p50_ms`] = m.p50Ms;
        figures[`c${concurrency}_${name}_p99_ms`] = m.p99Ms;
        figures[`c${concurrency}_${name}_req_per_s`] = m.requestsPerSecond;
        figures[`c${concurrency}_${name}_requests`] = m.requests;
        figures[`c${concurrency}_${name}_server_cpu_us_per_request`] = m.serverCpuUs;
      }
      figures[`c${concurrency}_throughput_ratio_webhook_to_baseline`] = webhook.requestsPerSecond / baseline.requestsPerSecond;
      figures[`c${concurrency}_p99_ratio_webhook_to_baseline`] = webhook.p99Ms / baseline.p99Ms;
      figures[`c${concurrency}_throughput_ratio_webhook_to_baseline-parse`] = webhook.requestsPerSecond / parse.requestsPerSecond;
      figures[`c${concurrency}_p99_ratio_webhook_to_baseline-parse`] = webhook.p99Ms / parse.p99Ms;
    }
  } finally {
    // SIGINT lets a profiling child write its profile on the way out.
    for (const { child } of Object.values(servers)) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGINT');
      await exited;
    }
  }
  return figures;
}

if (require.main === module && process.argv[2] !== '--serve') {
  run().then(
    (figures) => {
      for (const [key, value] of Object.entries(figures)) console.log(`${key}: ${typeof value === 'number' ? Number(value.toPrecision(4)) : value}`);
    },
    (error: Error) => {
      console.error(error);
      process.exit(1);
    },
  );
}
