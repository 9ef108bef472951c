// spec.routing proven by requests through the real data plane dataplane.test.ts leaves installed
// (Envoy Gateway, the AI Gateway, both Gateways' proxies; test/e2e/support/sequencer.js runs this
// file after it): retries against a flaky provider, fallback when the primary fails or refuses
// connections, timeouts against a stalled provider and a long steady stream, and weighted splits,
// with stand-in providers on the node address that misbehave on request and record every attempt.
// Prints the figures (attempt counts, switch latency, timeout accuracy, split shares).
import { type KubeObject, objectRef } from '../../src/kube/rest';
import { waitFor } from '../support/processes';
import { admin, NAMESPACE, nls, waitForObject } from './support/e2e';
import { dataPlaneCa, proxyAddress } from './support/dataplane';
import { type FaultyProvider, ROUTING_STAND_INS, type RoutingStandIn, startFaultyProviders } from './support/fault-providers';
import { chat, gatewayRequest, type GatewayResponse, type GatewayTarget } from './support/gateway-client';

const GROUP = 'llm.nebari.dev/v1beta1';
const figures: Record<string, unknown> = {};
let stand: Record<RoutingStandIn, FaultyProvider>;
let external: GatewayTarget;
const keys: Record<string, string> = {};

/** A PassthroughModel serving `id` (its name) from the stand-in `host` (or a port where nothing listens). */
function model(name: string, host: RoutingStandIn, routing?: object, port?: number): KubeObject {
  const s = ROUTING_STAND_INS[host];
  return {
    apiVersion: GROUP, kind: 'PassthroughModel', metadata: { name, namespace: NAMESPACE },
    spec: {
      provider: { hostname: s.hostname, port: port ?? s.port, credential: { secretRef: { name: 'provider-credentials' } } },
      models: { declared: [name] },
      access: { groups: ['team-routing'] },
      ...(routing ? { routing } : {}),
    },
  } as KubeObject;
}

const FALLBACK = { retries: { attempts: 1, retryOn: ['connect-failure', 'reset'], statusCodes: [429, 500, 503] }, fallback: [{ name: 'rt-backup', model: 'rt-backup' }] };
/** Created in this order: fallback and split targets before the models that name them (admission checks they exist). */
const MODELS = [
  model('rt-backup', 'backup'),
  model('rt-canary', 'canary'),
  model('rt-flaky', 'flaky', { retries: { attempts: 1, statusCodes: [503] } }),
  model('rt-primary', 'primary', FALLBACK),
  // Nothing listens on this port: every connection is refused.
  model('rt-refused', 'primary', FALLBACK, 8609),
  model('rt-stalled', 'slow', { timeouts: { request: '3s' } }),
  model('rt-stream', 'slow', { retries: { attempts: 1 }, timeouts: { request: '60s', streamIdle: '1s' } }),
  model('rt-split', 'backup', { weight: 75, split: [{ name: 'rt-canary', weight: 25, model: 'rt-canary' }] }),
];
const CALLED = ['rt-flaky', 'rt-primary', 'rt-refused', 'rt-stalled', 'rt-stream', 'rt-split'];

function programmed(obj: KubeObject): boolean {
  const conditions = (obj.status as { conditions?: { type: string; status: string; observedGeneration?: number }[] } | undefined)?.conditions ?? [];
  return conditions.some((c) => c.type === 'Programmed' && c.status === 'True' && c.observedGeneration === obj.metadata.generation);
}

function call(name: string, extra: Record<string, unknown> = {}, timeoutMs?: number): Promise<GatewayResponse> {
  return gatewayRequest(external, 'POST', '/v1/chat/completions', { token: keys[name], body: chat(name, extra), timeoutMs });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const round = (ms: number) => Math.round(ms);

beforeAll(async () => {
  const started = Date.now();
  const ca = dataPlaneCa();
  stand = await startFaultyProviders(ca);
  for (const m of MODELS) await admin().create(m);
  for (const m of MODELS) await waitForObject<KubeObject>(GROUP, 'PassthroughModel', m.metadata.name, programmed, 300000);
  for (const name of CALLED) {
    const r = await nls(['keys', 'mint', '--model', name, '--kind', 'PassthroughModel', '--over-limit', '-n', NAMESPACE, '-o', 'json']);
    if (r.code !== 0) throw new Error(`nls keys mint --model ${name} exited ${r.code}: ${r.output}`);
    keys[name] = (JSON.parse(r.output) as { apiKey: string }).apiKey;
  }
  external = { address: await proxyAddress('nebari-gateway'), hostname: 'llm.example.test', ca: ca.certPem };
  // The keys reach the external SecurityPolicy of each model: wait until each answers.
  await waitFor('every routed model answers with its key', async () => {
    for (const name of ['rt-flaky', 'rt-primary', 'rt-split']) if ((await call(name)).status !== 200) return false;
    return true;
  }, { timeoutMs: 120000 });
  figures.setup = `${((Date.now() - started) / 1000).toFixed(1)} s`;
}, 600000);

afterAll(async () => {
  console.log(`routing figures: ${JSON.stringify(figures, null, 2)}`);
  for (const m of [...MODELS].reverse()) await admin().delete(objectRef(GROUP, 'PassthroughModel', m.metadata.name, NAMESPACE)).catch(() => undefined);
  for (const s of Object.values(stand ?? {})) await s.stop().catch(() => undefined);
});

test('retries: a provider failing every other request with 503 gives 100 % success, two attempts per request in its log', async () => {
  stand.flaky.behave({ kind: 'everyOther', status: 503 });
  const before = stand.flaky.attempts.length;
  const statuses: number[] = [];
  for (let i = 0; i < 20; i++) statuses.push((await call('rt-flaky')).status);
  const attempts = stand.flaky.attempts.slice(before);
  figures.retries = { requests: statuses.length, ok: statuses.filter((s) => s === 200).length, upstreamAttempts: attempts.length };
  expect(statuses.filter((s) => s !== 200)).toEqual([]);
  expect(attempts.map((a) => a.outcome)).toEqual(Array.from({ length: 20 }, () => ['status 503', 'answer']).flat());
});

test('fallback: with the primary answering 500, clients get the backup\'s answers; the first pays one failed try, the next skip the primary', async () => {
  stand.primary.behave({ kind: 'answer' });
  const baseline: number[] = [];
  for (let i = 0; i < 10; i++) baseline.push((await call('rt-primary')).totalMs);
  stand.primary.behave({ kind: 'status', status: 500 });
  const [primaryBefore, backupBefore] = [stand.primary.attempts.length, stand.backup.attempts.length];
  const first = await call('rt-primary');
  const afterFirst = { primary: stand.primary.attempts.slice(primaryBefore).map((a) => a.outcome), backup: stand.backup.attempts.length - backupBefore, status: first.status, body: first.body.slice(0, 200) };
  const after: GatewayResponse[] = [];
  for (let i = 0; i < 10; i++) after.push(await call('rt-primary'));
  const primaryTries = stand.primary.attempts.slice(primaryBefore);
  const backupTries = stand.backup.attempts.slice(backupBefore);
  figures.fallback500 = {
    afterFirst,
    statuses: [first, ...after].map((r) => r.status),
    baselineMedianMs: round(median(baseline)),
    firstAfterFailureMs: round(first.totalMs),
    switchLatencyMs: round(first.totalMs - median(baseline)),
    laterMedianMs: round(median(after.map((r) => r.totalMs))),
    primaryAttemptsDuring11Requests: primaryTries.length,
    backupAttempts: backupTries.length,
  };
  expect([first, ...after].map((r) => r.status)).toEqual(Array(11).fill(200));
  expect(backupTries.map((a) => a.model)).toEqual(Array(11).fill('rt-backup'));
  // The passive health check ejected the primary after its first 500.
  expect(primaryTries.length).toBe(1);
  stand.primary.behave({ kind: 'answer' });
});

test('fallback: with the primary refusing connections, clients get the backup\'s answers', async () => {
  const backupBefore = stand.backup.attempts.length;
  const responses: GatewayResponse[] = [];
  for (let i = 0; i < 10; i++) responses.push(await call('rt-refused'));
  expect(responses.map((r) => r.status)).toEqual(Array(10).fill(200));
  expect(stand.backup.attempts.length - backupBefore).toBe(10);
  figures.fallbackRefused = { firstMs: round(responses[0].totalMs), laterMedianMs: round(median(responses.slice(1).map((r) => r.totalMs))) };
});

test('timeouts: a stalled provider is cut at timeouts.request (3 s) with 504; a 4 s stream of steady chunks outlives a 1 s streamIdle', async () => {
  stand.slow.behave({ kind: 'stall' });
  const stalled = await call('rt-stalled', {}, 20000);
  expect(stalled.status).toBe(504);
  figures.stalledCutMs = round(stalled.totalMs);
  expect(stalled.totalMs).toBeGreaterThanOrEqual(2900);
  expect(stalled.totalMs).toBeLessThan(4500);

  stand.slow.behave({ kind: 'slowStream', chunks: 20, intervalMs: 200 });
  const streamed = await call('rt-stream', { stream: true }, 30000);
  expect(streamed.status).toBe(200);
  const pieces = streamed.body.split('\n').filter((l) => l.startsWith('data: {')).map((l) => (JSON.parse(l.slice(6)) as { choices: { delta: { content?: string } }[] }).choices[0].delta.content);
  expect(pieces).toEqual(Array.from({ length: 20 }, (_, i) => `p${i + 1}`));
  expect(streamed.body).toContain('data: [DONE]');
  figures.longStream = { totalMs: round(streamed.totalMs), chunks: pieces.length };
  expect(streamed.totalMs).toBeGreaterThan(3800);
  stand.slow.behave({ kind: 'answer' });
});

/** `count` requests to rt-split, `concurrency` at a time; returns their statuses. */
async function load(count: number, concurrency: number): Promise<number[]> {
  const statuses: number[] = [];
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < count) {
      next++;
      statuses.push(await call('rt-split').then((r) => r.status, () => 0));
    }
  }));
  return statuses;
}

test('splits: over 1,000 requests each model\'s share is within 5 points of its weight; changing the weights under load fails no request', async () => {
  const [ownBefore, canaryBefore] = [stand.backup.attempts.length, stand.canary.attempts.length];
  const started = Date.now();
  const statuses = await load(1000, 16);
  const own = stand.backup.attempts.slice(ownBefore).filter((a) => a.model === 'rt-split').length;
  const canary = stand.canary.attempts.slice(canaryBefore).filter((a) => a.model === 'rt-canary').length;
  figures.split = { requests: statuses.length, failed: statuses.filter((s) => s !== 200).length, ownShare: own / 1000, canaryShare: canary / 1000, seconds: (Date.now() - started) / 1000 };
  expect(statuses.filter((s) => s !== 200)).toEqual([]);
  expect(own + canary).toBe(1000);
  expect(Math.abs(own / 1000 - 0.75)).toBeLessThanOrEqual(0.05);
  expect(Math.abs(canary / 1000 - 0.25)).toBeLessThanOrEqual(0.05);

  // Weights to 50/50 while 600 requests run.
  const running = load(600, 8);
  await new Promise((r) => setTimeout(r, 300));
  await admin().mergePatch(objectRef(GROUP, 'PassthroughModel', 'rt-split', NAMESPACE), { spec: { routing: { weight: 50, split: [{ name: 'rt-canary', weight: 50, model: 'rt-canary' }] } } });
  const during = await running;
  figures.weightChange = { requests: during.length, failed: during.filter((s) => s !== 200).length };
  expect(during.filter((s) => s !== 200)).toEqual([]);
});
