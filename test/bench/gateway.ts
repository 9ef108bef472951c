// Benchmark (`npm run bench -- gateway`): what the gateway adds to a request. On the end-to-end
// suite's real node and data plane (test/e2e/support: Envoy Gateway, AI Gateway controller, Envoy
// 1.38 with the extproc sidecar, all pods), one PassthroughModel with a minted key, and a stand-in
// provider (HTTPS, its own child process on the node address) that answers at once. Three paths,
// side by side, each over HTTPS with kept-alive connections:
// - direct: client → stand-in;
// - bare Envoy: client → Envoy (same binary, a minimal static configuration: TLS in, one route,
//   TLS out, no filters; the ceiling of any Envoy-based gateway) → stand-in;
// - gateway: client → the proxy pod with our configuration (API-key auth, the AI Gateway's
//   extproc, RBAC, upstream TLS, provider credential) → stand-in.
// At concurrency 1, 16 and 64: p50/p99 latency, added p50/p99 over direct, requests/s, and the
// proxy pod's CPU (envoy + extproc) per request; then streaming time to first byte.
// Bounded: `requests` per measurement. Needs root (the node), like the e2e suite.
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import { type KubeObject, objectRef } from '../../src/kube/rest';
import { issueServingCertificate, type KeyPair } from '../../src/webhook/certificates';
import { NODE_ADDRESS } from '../support/node';
import { waitFor } from '../support/processes';
import { toolPaths } from '../support/tools';
import * as dp from '../e2e/support/dataplane';
import { admin, NAMESPACE, nls } from '../e2e/support/e2e';
import { BENCH_GATEWAY, cpuSeconds, DATA_PLANE_PROCESSES, PROVIDER_CREDENTIAL, send, startDataPlaneBench, type Target } from './support/data-plane';
import { percentile } from './support/stats';

const UPSTREAM_HOST = 'api.bench.example';
const MODEL = 'bench-model';

/** `requests` chat completions at `concurrency`, on kept-alive connections; fails on any non-200. */
async function load(t: Target, concurrency: number, requests: number, stream = false): Promise<{ p50: number; p99: number; rps: number; firstByteP50: number }> {
  const agent = new https.Agent({ keepAlive: true, maxSockets: concurrency });
  const body = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'ping' }], max_tokens: 1, ...(stream ? { stream: true } : {}) });
  // Warm the connections first.
  await Promise.all(Array.from({ length: concurrency }, () => send(agent, t, body)));
  const latencies: number[] = [];
  const firstBytes: number[] = [];
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < requests) {
      next++;
      const r = await send(agent, t, body);
      if (r.status !== 200) throw new Error(`${t.hostname}:${t.port} answered ${r.status}`);
      latencies.push(r.totalMs);
      firstBytes.push(r.firstByteMs);
    }
  }));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  firstBytes.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), rps: latencies.length / seconds, firstByteP50: percentile(firstBytes, 50) };
}

function bareEnvoyConfig(dir: string, ca: KeyPair, port: number): string {
  const serving = issueServingCertificate({ ca, dnsNames: [BENCH_GATEWAY.hostname] });
  fs.writeFileSync(path.join(dir, 'tls.crt'), serving.certPem);
  fs.writeFileSync(path.join(dir, 'tls.key'), serving.keyPem);
  fs.writeFileSync(path.join(dir, 'ca.crt'), ca.certPem);
  const config = {
    static_resources: {
      listeners: [{
        address: { socket_address: { address: '127.0.0.1', port_value: port } },
        filter_chains: [{
          transport_socket: { name: 'tls', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext', common_tls_context: { tls_certificates: [{ certificate_chain: { filename: path.join(dir, 'tls.crt') }, private_key: { filename: path.join(dir, 'tls.key') } }] } } },
          filters: [{
            name: 'hcm',
            typed_config: {
              '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
              stat_prefix: 'bench',
              route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster: 'upstream', host_rewrite_literal: UPSTREAM_HOST } }] }] },
              http_filters: [{ name: 'router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } }],
            },
          }],
        }],
      }],
      clusters: [{
        name: 'upstream', type: 'STATIC', connect_timeout: '5s',
        load_assignment: { cluster_name: 'upstream', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: NODE_ADDRESS, port_value: 443 } } } }] }] },
        transport_socket: { name: 'tls', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext', sni: UPSTREAM_HOST, common_tls_context: { validation_context: { trusted_ca: { filename: path.join(dir, 'ca.crt') } } } } },
      }],
    },
  };
  const file = path.join(dir, 'envoy.json');
  fs.writeFileSync(file, JSON.stringify(config));
  return file;
}

export async function run(opts: { requests?: number } = {}): Promise<Record<string, number | string>> {
  const requests = opts.requests ?? 2000;
  const bench = await startDataPlaneBench(UPSTREAM_HOST);
  const children: ChildProcess[] = [];
  try {
    const ca = bench.ca;
    await admin().create({
      apiVersion: 'llm.nebari.dev/v1beta1', kind: 'PassthroughModel', metadata: { name: 'bench', namespace: NAMESPACE },
      spec: { provider: { hostname: UPSTREAM_HOST, credential: { secretRef: { name: PROVIDER_CREDENTIAL } } }, models: { declared: [MODEL] }, access: { public: true }, endpoints: { internal: { enabled: false } } },
    } as KubeObject);
    await waitFor('the bench model Ready', async () => (await admin().get<KubeObject & { status?: { phase?: string } }>(objectRef('llm.nebari.dev/v1beta1', 'PassthroughModel', 'bench', NAMESPACE)))?.status?.phase === 'Ready', { timeoutMs: 120000 });
    const minted = JSON.parse((await nls(['keys', 'mint', '--model', 'bench', '--kind', 'PassthroughModel', '-n', NAMESPACE, '-o', 'json'])).output) as { apiKey: string };
    const gateway: Target = { ...bench.gateway, token: minted.apiKey };
    await waitFor('the gateway answering 200', async () => {
      const list = await dp.proxyPods(BENCH_GATEWAY.name);
      if (!list.length || !list.every((p) => p.ready && p.withSidecar)) return false;
      const agent = new https.Agent({ keepAlive: false });
      return (await send(agent, gateway, JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'ping' }] })).catch(() => ({ status: 0 }))).status === 200;
    }, { timeoutMs: 240000, intervalMs: 1000 });

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-bench-envoy-'));
    const bare = spawn(toolPaths().envoy, ['-c', bareEnvoyConfig(dir, ca, 10443), '--concurrency', '1', '--log-level', 'error', '--base-id', '7'], { stdio: 'ignore' });
    children.push(bare);
    const bareTarget: Target = { address: '127.0.0.1', port: 10443, hostname: BENCH_GATEWAY.hostname, ca: ca.certPem };
    await waitFor('bare Envoy answering', async () => (await send(new https.Agent(), bareTarget, '{}').catch(() => ({ status: 0 }))).status === 200, { timeoutMs: 30000 });
    const direct: Target = { address: NODE_ADDRESS, port: 443, hostname: UPSTREAM_HOST, ca: ca.certPem };

    const proxyCpu = () => cpuSeconds((c) => DATA_PLANE_PROCESSES.envoy(c) && !c.includes('--base-id 7')) + cpuSeconds(DATA_PLANE_PROCESSES.extproc);
    const figures: Record<string, number | string> = { 'requests per measurement': requests, 'Envoy threads (gateway and bare)': 1 };
    for (const concurrency of [1, 16, 64]) {
      const d = await load(direct, concurrency, requests);
      const b = await load(bareTarget, concurrency, requests);
      const cpuBefore = proxyCpu();
      const g = await load(gateway, concurrency, requests);
      const cpuPerRequestUs = ((proxyCpu() - cpuBefore) / (requests + concurrency)) * 1e6;
      const c = `c${concurrency}`;
      figures[`${c} p50 ms direct / bare Envoy / gateway`] = `${d.p50.toFixed(2)} / ${b.p50.toFixed(2)} / ${g.p50.toFixed(2)}`;
      figures[`${c} p99 ms direct / bare Envoy / gateway`] = `${d.p99.toFixed(2)} / ${b.p99.toFixed(2)} / ${g.p99.toFixed(2)}`;
      figures[`${c} added p50 ms, bare Envoy / gateway`] = `${(b.p50 - d.p50).toFixed(2)} / ${(g.p50 - d.p50).toFixed(2)}`;
      figures[`${c} added p99 ms, bare Envoy / gateway`] = `${(b.p99 - d.p99).toFixed(2)} / ${(g.p99 - d.p99).toFixed(2)}`;
      figures[`${c} requests/s direct / bare Envoy / gateway`] = `${d.rps.toFixed(0)} / ${b.rps.toFixed(0)} / ${g.rps.toFixed(0)}`;
      figures[`${c} gateway proxy CPU per request (envoy + extproc), µs`] = cpuPerRequestUs;
      figures[`${c} ratio gateway / bare Envoy requests/s`] = g.rps / b.rps;
    }
    const streamed = { direct: await load(direct, 1, 200, true), bare: await load(bareTarget, 1, 200, true), gateway: await load(gateway, 1, 200, true) };
    figures['stream first byte p50 ms direct / bare Envoy / gateway'] = `${streamed.direct.firstByteP50.toFixed(2)} / ${streamed.bare.firstByteP50.toFixed(2)} / ${streamed.gateway.firstByteP50.toFixed(2)}`;
    figures['stream first byte added p50 ms, gateway'] = streamed.gateway.firstByteP50 - streamed.direct.firstByteP50;
    return figures;
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await bench.stop();
  }
}
