// Usage per key, owner and model, read from a real Prometheus: the AI Gateway extproc's GenAI
// token metrics labelled with the client ID our API-key check forwards (the AI Gateway controller
// installed with `metricsRequestHeaderAttributes`, docs/observability.md), joined with the
// operator's `nls_api_key_info`. Prometheus scrapes exactly what the chart's ServiceMonitor and
// PodMonitor objects select, by a scrape configuration this suite derives from those objects as
// the API server stores them (test/e2e/support/prometheus.ts; no Prometheus Operator runs; the
// suite resolves the selected targets and hands them over by file), plus the Envoy proxies and
// the extproc sidecars.
// Runs after dataplane.test.ts (test/e2e/support/sequencer.js) on the data plane it leaves
// installed, with its own stand-in provider (answering for the providers of the models gamma and
// azure, which that file leaves Programmed) and its own keys.
// The chart's alert rules are on (short `for` and rate window), and the PrometheusRule as the API
// server stored it is this Prometheus's rule file: a model whose stand-in provider answers 500
// fires NebariLLMModelRequestErrors for real, while the healthy gamma, called alongside, does not.
// Streamed requests and requests past a quota tier's limit, on the proxies scraped here, give the
// time-to-first-token histogram and Envoy's rate-limit refusals, and fire NebariLLMQuotaExhausted.
// The key portal is on (the values product.test.ts gives it, with a real OpenID Provider on the
// node address), reads this Prometheus (portal.prometheusURL: it listens on the node address so the
// portal pod reaches it) and is scraped through its own ServiceMonitor. A key minted on its page is
// sent traffic through Envoy, and its usage page and /api/usage, seen in the real browser by the
// key's owner and by an admin, show the tokens and cost the stand-in answered.
// The LLMModel tiny of dataplane.test.ts asked for monitoring (spec.serving.monitoring.enabled): once
// the CRDs below exist the operator applies its PodMonitor, which this Prometheus scrapes as stored;
// its engine (the stand-in vLLM, test/e2e/standins/engine.js) counts what it answers through the
// gateway in vLLM's metric names.
// Last, the chart's Grafana dashboards (grafanaDashboards.enabled), read as the API server stored
// their ConfigMaps: every query of every dashboard returns data here (a portal user losing their
// group drives a revocation for the portal's; the serving-engine dashboard reads tiny's engine).
import * as fs from 'fs';
import * as path from 'path';
import { stringify } from 'yaml';
import type { Page } from 'puppeteer-core';
import { type KubeObject, objectRef } from '../../src/kube/rest';
import { installCRDs, upstreamCrdDir } from '../support/cluster';
import { NODE_ADDRESS } from '../support/node';
import { waitFor } from '../support/processes';
import { repoRoot, toolPaths } from '../support/tools';
import { admin, CHART, helmOk, NAMESPACE, nls, pods, RELEASE, waitForObject } from './support/e2e';
import { type FaultyProvider, ROUTING_STAND_INS, type RoutingStandIn, startFaultyProviders } from './support/fault-providers';
import { e2eState } from './support/state';
import { dataPlaneCa, EG_NAMESPACE, proxyAddress, startRedis } from './support/dataplane';
import { chat, gatewayRequest, type GatewayTarget } from './support/gateway-client';
import { startStandInProviders, type StandInProviders } from './support/providers';
import { dataPlaneScrapeJobs, monitorScrapeJobs, type Prometheus, type PrometheusAlert, startPrometheus } from './support/prometheus';
import { type Issuer, launchBrowser, logIn, startIssuer, startTlsFront } from './support/portal';
import { formatCost } from '../../src/usage/prometheus-usage';
import type { QuotaShare } from '../../src/usage/quota-window';
import { shareText } from '../../src/portal/pages/usage';

const state = e2eState();
const ca = dataPlaneCa();
const EXTERNAL = { name: 'nebari-gateway', hostname: 'llm.example.test' };
/** The models dataplane.test.ts leaves Programmed, at their providers' host names (CoreDNS answers them with the node address). */
const GAMMA = { name: 'gamma', answersAs: 'gamma-model', host: 'api.gamma.example' };
const AZURE = { name: 'azure', answersAs: 'gpt-azure', host: 'res.openai.azure.example' };
/** Tokens the stand-in reports per answer (test/e2e/support/providers.ts). */
const INPUT_TOKENS = 3;
const OUTPUT_TOKENS = 1;
/** The total of the extproc's token histogram (OpenTelemetry `gen_ai.client.token.usage`) as its Prometheus exporter names it. */
const TOKENS = 'gen_ai_client_token_usage_sum';
const SCRAPE_INTERVAL = '2s';
/** The alert fired here, and the short window and `for` the e2e install gives it (Prometheus evaluates every 2 s). */
const ALERT = 'NebariLLMModelRequestErrors';
const ALERT_VALUES = [
  'prometheusRule.enabled=true', 'prometheusRule.rateWindow=30s', 'prometheusRule.alerts.modelRequestErrors.for=4s', 'prometheusRule.alerts.quotaExhausted.for=4s',
];
const QUOTA_ALERT = 'NebariLLMQuotaExhausted';
/** The quota tier dataplane.test.ts configured on the release (2 requests a minute), kept by `--reuse-values`. */
const TINY_TIER = 'tiny';
/** The label the dashboard ConfigMaps carry by default (the Grafana sidecar's). */
const DASHBOARD_LABEL = 'grafana_dashboard=1';
/** The dashboards; every query of each must return data here. */
const DASHBOARDS = ['nls-gateway-overview', 'nls-operator', 'nls-portal', 'nls-serving-engines', 'nls-usage'];
/** dataplane.test.ts's LLMModel, its monitoring on, and the PodMonitor the operator names after it. */
const TINY = { name: 'tiny', answersAs: 'e2e/tiny-chat', podMonitor: 'tiny-vllm' };
/** Answers tiny's engine is sent for the engine-metrics test. */
const ENGINE_ANSWERS = 3;
/**
 * Concrete windows for Grafana's range variables: everything this file's Prometheus has scraped
 * falls within them (a fixed window missed the last admissions when the file ran longer than it).
 */
const scrapedWindow = () => `${Math.ceil((Date.now() - prometheusStarted) / 1000) + 60}s`;
let prometheusStarted = 0;
/** A PassthroughModel whose provider (a routing stand-in, test/e2e/support/fault-providers.ts) answers 500. */
const FAILING = { name: 'obs-failing', standIn: 'flaky' as RoutingStandIn };
/** The price table the e2e install carries (per million tokens), for the spend recording rules. */
const PRICES = { [GAMMA.name]: { input: 2.5, output: 10, cachedInput: 0.25 }, [AZURE.name]: { input: 0.5, output: 1.5 } } as const;
const PRICING = { currency: 'EUR', models: Object.entries(PRICES).map(([model, p]) => ({ model, ...p })) };
const figures: Record<string, string> = {};
let providers: StandInProviders;
let faulty: Record<RoutingStandIn, FaultyProvider> | undefined;
let prometheus: Prometheus;
let redis: Awaited<ReturnType<typeof startRedis>> | undefined;
/** The alert rules as the API server stored them. */
let storedRules: { name: string; rules: { alert: string; expr: string }[] }[] = [];
let external: GatewayTarget;
let setupDone = 0;

/**
 * Where Prometheus listens: the node address (inside the run's network namespace), so the portal
 * pod reads it at portal.prometheusURL, which the upgrade sets before Prometheus starts.
 */
const PROMETHEUS_LISTEN = `${NODE_ADDRESS}:9090`;
/** The key portal at its default host name (llm-keys.<platform.baseDomain>), reached through a TLS front as in product.test.ts. */
const PORTAL_HOST = 'llm-keys.example.test';
const PORTAL_URL = `https://${PORTAL_HOST}`;
/** The portal's Service, which its ServiceMonitor selects (and so the `job` of its metrics). */
const PORTAL_SERVICE = `${RELEASE}-portal`;
const PORTAL_ADMIN_GROUP = 'platform-admins';
/**
 * The portal's users: one mints a key for gamma (access group team-g) and sends traffic with it,
 * one mints a key and then leaves team-g (the group refresh revokes it: the portal dashboard's
 * revocation series), one is an admin. Not `obs-*`: the usage tests above count those owners.
 */
const PORTAL_USER = 'portal-pat';
const LEAVING_USER = 'portal-quinn';
const PORTAL_ADMIN = 'portal-root';
const PORTAL_ACCOUNTS = {
  [PORTAL_USER]: { username: PORTAL_USER, groups: ['team-g'] },
  [LEAVING_USER]: { username: LEAVING_USER, groups: ['team-g'] },
  [PORTAL_ADMIN]: { username: PORTAL_ADMIN, groups: [PORTAL_ADMIN_GROUP] },
};
/** Answers sent with the key minted on the portal's page. */
const PORTAL_ANSWERS = 4;
/** The usage page's screenshots (test-artifacts/ is not tracked; docs/images keeps one). */
const USAGE_ARTIFACTS = path.join(repoRoot, 'test-artifacts', 'portal');
let issuer: Issuer | undefined;
/** The key LEAVING_USER minted before leaving team-g; the dashboard test waits for its revocation. */
let leavingClientId: string | undefined;

/** The keys of this file: who owns them, for which model, and how many answers each is sent. */
const KEYS = [
  { owner: 'obs-ann', model: GAMMA, answers: 2 },
  { owner: 'obs-bo', model: GAMMA, answers: 3 },
  { owner: 'obs-ann', model: AZURE, answers: 4 },
] as const;
const minted: { clientId: string; key: string }[] = [];

/**
 * Sends chat requests for `model` with a new key until `answers` are answered: the key is refused
 * (403, before the extproc) only until the operator has authorized it.
 */
async function answerNewKey(key: string, model: { name: string; answersAs: string }, what: string, answers: number): Promise<void> {
  let answered = 0;
  await waitFor(`${what} answered`, async () => {
    const r = await gatewayRequest(external, 'POST', '/v1/chat/completions', { token: key, body: chat(model.answersAs) });
    if (r.status === 200) answered++;
    else if (r.status !== 403) throw new Error(`unexpected ${r.status}: ${r.body}`);
    return r.status === 200;
  }, { timeoutMs: 60000, intervalMs: 500 });
  while (answered < answers) {
    const r = await gatewayRequest(external, 'POST', '/v1/chat/completions', { token: key, body: chat(model.answersAs) });
    expect(r.status).toBe(200);
    answered++;
  }
}

/** The condition `type` of an object's status, if it has one. */
function condition(obj: KubeObject, type: string): { status: string; reason: string } | undefined {
  return ((obj.status as { conditions?: { type: string; status: string; reason: string }[] } | undefined)?.conditions ?? []).find((c) => c.type === type);
}

function seconds(since: number): string {
  return `${((Date.now() - since) / 1000).toFixed(1)} s`;
}

/** `{label}` → value of each sample of an instant query, sorted by label, for exact comparisons. */
async function byLabel(promql: string, label: string): Promise<Record<string, number>> {
  return sorted(Object.fromEntries((await prometheus.query(promql)).map((s) => [s.metric[label] ?? '', s.value])));
}

beforeAll(async () => {
  const started = Date.now();
  // The Prometheus Operator's CRDs, as a cluster with kube-prometheus-stack has them, so the chart
  // renders its monitors; then the release dataplane.test.ts installed, with them turned on.
  // The PrometheusRule CRD from the Prometheus Operator module the tools pin (same tag).
  await installCRDs([
    ...['servicemonitors', 'podmonitors'].map((kind) => path.join(upstreamCrdDir(), 'prometheus-operator', 'v0.93.0', `monitoring.coreos.com_${kind}.yaml`)),
    toolPaths().prometheusRuleCrd,
  ]);
  // The portal's OpenID Provider, its CA and client secret, as product.test.ts gives them.
  issuer = await startIssuer(path.join(state.dir, 'obs-issuer'), {
    redirectUri: `${PORTAL_URL}/auth/callback`, clientId: 'nls-portal', clientSecret: 'e2e-portal-client-secret', accounts: PORTAL_ACCOUNTS,
  });
  await admin().apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'portal-issuer-ca', namespace: NAMESPACE }, data: { 'ca.crt': issuer.ca.certPem } } as never, { fieldManager: 'e2e', force: true });
  await admin().apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'portal-oidc', namespace: NAMESPACE }, type: 'Opaque', stringData: { 'client-secret': 'e2e-portal-client-secret' } } as never, { fieldManager: 'e2e', force: true });
  const upgradeStarted = Date.now();
  await helmOk(4, [
    'upgrade', RELEASE, `${state.chartRepo}/${CHART}`, '--version', state.version, '-n', NAMESPACE, '--reuse-values', '--wait', '--timeout', '5m',
    '--set', 'serviceMonitor.enabled=true', '--set', `serviceMonitor.interval=${SCRAPE_INTERVAL}`,
    ...ALERT_VALUES.flatMap((v) => ['--set', v]), '--set', 'grafanaDashboards.enabled=true',
    '--set-json', `pricing=${JSON.stringify(PRICING)}`,
    // The portal, reading this file's Prometheus. Its issuer becomes platform.jwt.issuer: the
    // internal endpoint (not called in this file, the last of the suite) then trusts it, with the
    // signing keys URL dataplane.test.ts set.
    '--set', 'portal.enabled=true', '--set', `platform.jwt.issuer=${issuer.url}`,
    '--set', 'portal.oidc.clientId=nls-portal', '--set', 'portal.oidc.clientSecret.name=portal-oidc', '--set', 'portal.oidc.caConfigMap.name=portal-issuer-ca',
    '--set', `portal.adminGroups={${PORTAL_ADMIN_GROUP}}`, '--set', 'portal.groupRefreshSeconds=30',
    '--set', `portal.prometheusURL=http://${PROMETHEUS_LISTEN}`,
  ]);
  figures.upgradeWithPortalReady = seconds(upgradeStarted);
  // The rate-limit service's Redis at its fixed address: dataplane.test.ts stopped its own at the end.
  redis = await startRedis(fs.mkdtempSync(path.join(state.dir, 'redis-')));
  // With the PodMonitor CRD installed above, the operator applies tiny's PodMonitor at its next
  // look for the missing CRD (every 60 s, mostly spent in the upgrade); the monitors are read once it is there.
  await waitForObject<KubeObject>('llm.nebari.dev/v1beta1', 'LLMModel', TINY.name, (m) => condition(m, 'MonitoringReady')?.reason === 'Applied', 120000);
  const monitors: KubeObject[] = [];
  for (const kind of ['ServiceMonitor', 'PodMonitor']) monitors.push(...(await admin().list('monitoring.coreos.com/v1', kind, { namespace: NAMESPACE })).items);
  // The alert and spend rules exactly as the API server stored the chart's two PrometheusRules.
  const rules = (await admin().list<KubeObject & { spec: { groups: typeof storedRules } }>('monitoring.coreos.com/v1', 'PrometheusRule', { namespace: NAMESPACE })).items;
  if (rules.length !== 2) throw new Error(`expected the chart's two PrometheusRules (alerts, spend) in ${NAMESPACE}, found ${rules.length}`);
  storedRules = rules.flatMap((r) => r.spec.groups);
  const dir = fs.mkdtempSync(path.join(state.dir, 'prometheus-'));
  const rulesFile = path.join(dir, 'chart-alerts.yaml');
  fs.writeFileSync(rulesFile, stringify({ groups: rules.flatMap((r) => r.spec.groups) }, { lineWidth: 0 }));
  prometheusStarted = Date.now();
  prometheus = await startPrometheus(dir, admin(), [
    ...monitors.flatMap((m) => monitorScrapeJobs(m)),
    ...dataPlaneScrapeJobs(EG_NAMESPACE, SCRAPE_INTERVAL),
  ], [rulesFile], PROMETHEUS_LISTEN);
  providers = await startStandInProviders(ca, [GAMMA.host, AZURE.host]);
  external = { address: await proxyAddress(EXTERNAL.name), hostname: EXTERNAL.hostname, ca: ca.certPem };
  figures.setup = seconds(started);
  setupDone = Date.now();
}, 600000);

afterAll(async () => {
  if (setupDone) figures.testsAfterSetup = seconds(setupDone);
  console.log(`observability figures: ${JSON.stringify(figures, null, 2)}`);
  await providers?.stop();
  await admin().delete(objectRef('llm.nebari.dev/v1beta1', 'PassthroughModel', FAILING.name, NAMESPACE)).catch(() => undefined);
  for (const f of Object.values(faulty ?? {})) await f.stop().catch(() => undefined);
  await prometheus?.stop();
  await redis?.process.stop();
  await issuer?.stop();
});

test('Prometheus scrapes what the chart\'s ServiceMonitors select (the operator, the portal), the Envoy proxies and the extproc sidecars', async () => {
  const started = Date.now();
  const jobsUp = async () => byLabel('sum by (job) (up)', 'job');
  const downTargets = async () => (await prometheus.query('up == 0')).map((s) => `${s.metric.job} ${s.metric.pod}`);
  await waitFor('every target scraped', async () => {
    const up = await jobsUp();
    return up['nebari-llm-serving-metrics'] >= 1 && up[PORTAL_SERVICE] >= 1 && up.envoy >= 1 && up['aigw-extproc'] >= 1 && (await downTargets()).length === 0;
  }, { timeoutMs: 60000, intervalMs: 1000 }).catch(async (err: Error) => {
    throw new Error(`${err.message}\nup by job: ${JSON.stringify(await jobsUp())}; down: ${JSON.stringify(await downTargets())}`);
  });
  figures.firstScrapes = seconds(started);
  // The operator's own metrics, from the target the ServiceMonitor selected: one leader.
  expect(await byLabel('sum by (job) (nls_leader)', 'job')).toEqual({ 'nebari-llm-serving-metrics': 1 });
  // Envoy's stats and the extproc's GenAI metrics exist for the requests dataplane.test.ts sent.
  const names = await prometheus.metricNames();
  expect(names.filter((n) => /^(envoy_cluster_upstream_rq_total|gen_ai_.*)$/.test(n))).toEqual(
    expect.arrayContaining(['envoy_cluster_upstream_rq_total', 'gen_ai_server_request_duration_seconds_count', TOKENS]),
  );
});

test('tokens per client ID, owner and model in Prometheus equal what the stand-in provider answered', async () => {
  const started = Date.now();
  for (const k of KEYS) {
    const r = await nls(['keys', 'mint', '--model', k.model.name, '--kind', 'PassthroughModel', '--user', k.owner, '--over-limit', '-n', NAMESPACE, '-o', 'json']);
    if (r.code !== 0) throw new Error(`nls keys mint --model ${k.model.name} exited ${r.code}: ${r.output}`);
    const { apiKey, clientId } = JSON.parse(r.output) as { apiKey: string; clientId: string };
    minted.push({ clientId, key: apiKey });
  }
  for (const [i, k] of KEYS.entries()) await answerNewKey(minted[i].key, k.model, `the key of ${k.owner} for ${k.model.name}`, k.answers);
  figures.trafficSent = seconds(started);
  // What the stand-in answered, and that the client ID went no further than the gateway.
  for (const model of [GAMMA, AZURE]) {
    expect(providers.to(model.answersAs).length).toBe(KEYS.filter((k) => k.model === model).reduce((n, k) => n + k.answers, 0));
  }
  expect(providers.requests.filter((r) => 'x-llm-client-id' in r.headers)).toEqual([]);

  const ours = `client_id=~"${minted.map((m) => m.clientId).join('|')}"`;
  const expectedInput = Object.fromEntries(KEYS.map((k, i) => [minted[i].clientId, k.answers * INPUT_TOKENS]));
  const inputByClient = `sum by (client_id) (${TOKENS}{gen_ai_token_type="input", ${ours}})`;
  await waitFor('the answered tokens scraped', async () => JSON.stringify(await byLabel(inputByClient, 'client_id')) === JSON.stringify(sorted(expectedInput)), { timeoutMs: 30000, intervalMs: 1000 }).catch(async (err: Error) => {
    const sample = (await prometheus.query(`topk(3, ${TOKENS})`)).map((s) => s.metric);
    throw new Error(`${err.message}: ${JSON.stringify(await byLabel(inputByClient, 'client_id'))}, expected ${JSON.stringify(expectedInput)}; series seen: ${JSON.stringify(sample)}`);
  });
  figures.usageScraped = seconds(started);
  expect(await byLabel(inputByClient, 'client_id')).toEqual(expectedInput);
  expect(await byLabel(`sum by (client_id) (${TOKENS}{gen_ai_token_type="output", ${ours}})`, 'client_id')).toEqual(
    Object.fromEntries(KEYS.map((k, i) => [minted[i].clientId, k.answers * OUTPUT_TOKENS])),
  );
  // The extproc's own model label: the model the request named.
  expect(await byLabel(`sum by (gen_ai_request_model) (${TOKENS}{gen_ai_token_type="input", ${ours}})`, 'gen_ai_request_model')).toEqual({
    [GAMMA.answersAs]: (2 + 3) * INPUT_TOKENS,
    [AZURE.answersAs]: 4 * INPUT_TOKENS,
  });
  // Joined with the operator's key records: per owner and per model object.
  const info = `max by (client_id, owner, model) (nls_api_key_info{${ours}})`;
  await waitFor('nls_api_key_info for the new keys', async () => (await prometheus.query(info)).length === KEYS.length, { timeoutMs: 30000, intervalMs: 1000 });
  expect(await byLabel(`sum by (owner) (${TOKENS}{gen_ai_token_type="input"} * on (client_id) group_left (owner) ${info})`, 'owner')).toEqual({
    'obs-ann': (2 + 4) * INPUT_TOKENS,
    'obs-bo': 3 * INPUT_TOKENS,
  });
  expect(await byLabel(`sum by (model) (${TOKENS}{gen_ai_token_type="input"} * on (client_id) group_left (model) ${info})`, 'model')).toEqual({
    gamma: (2 + 3) * INPUT_TOKENS,
    azure: 4 * INPUT_TOKENS,
  });
});

// The same figures through `nls usage` as shipped in the image, against this Prometheus: one row per
// owner and model object, every row equal to what the stand-in answered, and what it cost.
test('nls usage reports the tokens and cost per owner and model that the stand-in answered', async () => {
  const usage = async (...args: string[]) => {
    const r = await nls(['usage', '--prometheus', prometheus.url, '-n', NAMESPACE, '-o', 'json', ...args]);
    if (r.code !== 0) throw new Error(`nls usage ${args.join(' ')} exited ${r.code}: ${r.output}`);
    return (JSON.parse(r.output) as { rows: { namespace: string; model: string; owner: string; tokens: Record<string, number> }[] }).rows;
  };
  // Both models have a price, so each row carries its cost in the table's currency.
  const expected = (model: keyof typeof PRICES, owner: string, answers: number) => ({
    namespace: NAMESPACE, model, owner, tokens: { input: answers * INPUT_TOKENS, output: answers * OUTPUT_TOKENS },
    cost: expect.closeTo((answers * INPUT_TOKENS * PRICES[model].input + answers * OUTPUT_TOKENS * PRICES[model].output) / 1e6, 12), currency: PRICING.currency,
  });
  expect((await usage()).filter((r) => r.owner.startsWith('obs-'))).toEqual([expected('azure', 'obs-ann', 4), expected('gamma', 'obs-ann', 2), expected('gamma', 'obs-bo', 3)]);
  expect(await usage('--model', 'gamma', '--user', 'obs-bo', '--since', '1h')).toEqual([expected('gamma', 'obs-bo', 3)]);
  const none = await nls(['usage', '--prometheus', prometheus.url, '--user', 'nobody-at-all']);
  expect(none).toEqual({ code: 0, output: 'no tokens counted for API keys in the last 30d for user nobody-at-all\n' });
});

// Spend from the chart's recording rules (the price table above, as the API server stored the
// PrometheusRule), for the answers of the usage test: tokens the stand-in reported × price. Runs
// before the alert test, which sends more gamma traffic with obs-ann's key.
test('the recorded spend per key, owner and model equals the answered tokens times the price table', async () => {
  const started = Date.now();
  const spend = (model: typeof GAMMA | typeof AZURE, answers: number) => {
    const p = PRICES[model.name];
    return (answers * INPUT_TOKENS * p.input + answers * OUTPUT_TOKENS * p.output) / 1e6;
  };
  const expected = (pick: (k: (typeof KEYS)[number]) => string) => {
    const out: Record<string, number> = {};
    for (const k of KEYS) out[pick(k)] = (out[pick(k)] ?? 0) + spend(k.model, k.answers);
    return sorted(out);
  };
  // Floating point only: each value is a few products of whole token counts and prices, divided
  // once by a million; a token or price off by one would move it by more than 1e-7 of itself.
  const expectSpend = (got: Record<string, number>, want: Record<string, number>) => {
    expect(Object.keys(got)).toEqual(Object.keys(want));
    for (const [k, v] of Object.entries(want)) expect(Math.abs(got[k] - v)).toBeLessThanOrEqual(v * 1e-12);
  };
  const close = (got: Record<string, number>, want: Record<string, number>) =>
    JSON.stringify(Object.keys(got)) === JSON.stringify(Object.keys(want)) && Object.entries(want).every(([k, v]) => Math.abs(got[k] - v) <= v * 1e-12);
  const ours = 'owner=~"obs-ann|obs-bo"';
  const byOwnerModel = async () => byLabel(`sum by (k) (label_join(nls:owner_model_spend{${ours}, currency="EUR"}, "k", "/", "owner", "model"))`, 'k');
  const byOwner = async () => byLabel(`nls:owner_spend{${ours}, currency="EUR"}`, 'owner');
  const byKey = async () => byLabel(`nls:api_key_spend{client_id=~"${minted.map((m) => m.clientId).join('|')}"}`, 'client_id');
  const want = expected((k) => `${k.owner}/${k.model.name}`);
  const wantByOwner = expected((k) => k.owner);
  const wantByKey = sorted(Object.fromEntries(KEYS.map((k, i) => [minted[i].clientId, spend(k.model, k.answers)])));
  // The rules build on each other (per proxy, per key, per owner), each evaluated at the group's
  // interval, so a series can trail the last answers by a few evaluations: wait until all three
  // hold the whole spend, then assert each.
  await waitFor('the spend recorded for the usage test', async () => close(await byOwnerModel(), want) && close(await byOwner(), wantByOwner) && close(await byKey(), wantByKey), { timeoutMs: 60000, intervalMs: 1000 }).catch(async (err: Error) => {
    throw new Error(`${err.message}: ${JSON.stringify(await byOwnerModel())}, expected ${JSON.stringify(want)}; prices ${JSON.stringify(await prometheus.query('nls:token_price_per_million'))}`);
  });
  figures.spendRecorded = seconds(started);
  expectSpend(await byOwnerModel(), want);
  expectSpend(await byOwner(), wantByOwner);
  expectSpend(await byKey(), wantByKey);
  figures.spendObsAnnGammaEUR = String((await byOwnerModel())['obs-ann/gamma']);
  // The price series as set, per model and token type; no cached-input price for azure.
  expect(await byLabel(`label_join(nls:token_price_per_million{model_namespace="${NAMESPACE}", currency="EUR"}, "k", "/", "model", "gen_ai_token_type")`, 'k')).toEqual(sorted({
    'azure/input': 0.5, 'azure/output': 1.5, 'gamma/cached_input': 0.25, 'gamma/input': 2.5, 'gamma/output': 10,
  }));
});

/** Mints a gamma key on the portal's page as the logged-in user; the page shows the key once. */
async function mintOnPage(page: Page, description: string): Promise<{ clientId: string; apiKey: string }> {
  await page.goto(`${PORTAL_URL}/`, { waitUntil: 'load' });
  await page.select('#model', `PassthroughModel/${GAMMA.name}`);
  await page.type('#description', description);
  await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click('form[action="/keys"] button[type=submit]')]);
  const apiKey = await page.$eval('#api-key', (el) => el.textContent ?? '');
  const clientId = await page.$eval('section[aria-labelledby=key-h] code', (el) => el.textContent ?? '');
  if (!apiKey.startsWith('sk-') || !clientId) throw new Error(`no key shown after minting: ${await page.$eval('body', (b) => b.textContent ?? '')}`);
  return { clientId, apiKey };
}

/**
 * The one row of the usage page's table in a section that has a cell `rowKey`, as cells by column
 * header (so a column added to the page does not move what is read).
 */
async function usageRow(page: Page, sectionId: string, rowKey: string): Promise<Record<string, string>> {
  const table = await page.$eval(`section[aria-labelledby=${sectionId}] table`, (t) => ({
    head: [...t.querySelectorAll('thead th')].map((th) => th.textContent?.trim() ?? ''),
    rows: [...t.querySelectorAll('tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim() ?? '')),
  })).catch(async () => {
    throw new Error(`no table in section ${sectionId}: ${await page.$eval('main', (m) => m.textContent ?? '').catch(() => '')}`);
  });
  const rows = table.rows.filter((cells) => cells.includes(rowKey));
  if (rows.length !== 1) throw new Error(`expected one row for ${rowKey} in ${sectionId}, found ${rows.length}: ${JSON.stringify(table)}`);
  return Object.fromEntries(table.head.map((h, i) => [h, rows[0][i]]));
}

interface UsageAmount {
  tokens: Record<string, number>;
  cost?: number;
}
interface UsageJson {
  currency?: string;
  periods: Record<'today' | 'month', string>;
  keys: { clientId: string; owner: string; today: UsageAmount; month: UsageAmount; quota?: QuotaShare }[];
  byUser?: { name: string; today: UsageAmount; month: UsageAmount }[];
}

// A key minted on the portal's page by a user of team-g, answered through the real Envoy; the
// usage page and /api/usage read this Prometheus (portal.prometheusURL), by the key owner's subject
// for the user and for every user for the admin. Another user mints a key and leaves team-g first,
// so the group refresh revokes it while the rest runs (the portal dashboard's revocation series).
test('the portal\'s usage page and /api/usage show the tokens and cost the stand-in answered for a key minted on the portal, to its owner and to an admin', async () => {
  const started = Date.now();
  const service = await admin().get<KubeObject & { spec: { clusterIP: string; ports: { name: string; port: number }[] } }>(objectRef('v1', 'Service', PORTAL_SERVICE, NAMESPACE));
  const http = service!.spec.ports.find((p) => p.name !== 'metrics')!;
  const front = await startTlsFront(issuer!.ca, PORTAL_HOST, { host: service!.spec.clusterIP, port: http.port });
  const browser = await launchBrowser(PORTAL_HOST);
  fs.mkdirSync(USAGE_ARTIFACTS, { recursive: true });
  try {
    const leaving = await logIn(browser, PORTAL_URL, LEAVING_USER);
    leavingClientId = (await mintOnPage(leaving, 'e2e: revoked when its owner leaves team-g')).clientId;
    issuer!.setAccounts({ ...PORTAL_ACCOUNTS, [LEAVING_USER]: { username: LEAVING_USER, groups: [] } });

    const user = await logIn(browser, PORTAL_URL, PORTAL_USER);
    const { clientId, apiKey } = await mintOnPage(user, 'e2e usage');
    figures.portalLoginsAndMints = seconds(started);
    const answersBefore = providers.to(GAMMA.answersAs).length;
    const trafficStarted = Date.now();
    await answerNewKey(apiKey, GAMMA, `the key ${PORTAL_USER} minted on the portal`, PORTAL_ANSWERS);
    // What the stand-in answered: every answer reports INPUT_TOKENS and OUTPUT_TOKENS.
    const answered = providers.to(GAMMA.answersAs).length - answersBefore;
    expect(answered).toBe(PORTAL_ANSWERS);
    const tokens = { input: answered * INPUT_TOKENS, output: answered * OUTPUT_TOKENS };
    const cost = (tokens.input * PRICES.gamma.input + tokens.output * PRICES.gamma.output) / 1e6;

    const scraped = async () => JSON.stringify(await byLabel(`sum by (gen_ai_token_type) (${TOKENS}{client_id="${clientId}"})`, 'gen_ai_token_type')) === JSON.stringify(sorted(tokens)) &&
      (await prometheus.query(`nls_api_key_info{client_id="${clientId}", owner="${PORTAL_USER}"}`)).length > 0;
    await waitFor('the portal key\'s tokens and record scraped', scraped, { timeoutMs: 30000, intervalMs: 1000 });
    figures.portalUsageScraped = seconds(trafficStarted);

    // A period that began after the first answer (a run across midnight UTC) holds only part of them.
    const expectPeriod = (periodStart: string, got: UsageAmount) => {
      if (Date.parse(periodStart) <= trafficStarted) {
        expect(got.tokens).toEqual(tokens);
        expect(Math.abs(got.cost! - cost)).toBeLessThanOrEqual(cost * 1e-12);
      } else {
        expect(got.tokens.input ?? 0).toBeLessThanOrEqual(tokens.input);
      }
    };
    const expectJson = (report: UsageJson, got: { today: UsageAmount; month: UsageAmount } | undefined) => {
      expect(report.currency).toBe(PRICING.currency);
      expect(got).toBeDefined();
      expectPeriod(report.periods.today, got!.today);
      expectPeriod(report.periods.month, got!.month);
    };
    // The page as shown: each amount equals the JSON's, the cost written the way the page writes costs.
    const expectRow = (row: Record<string, string>, amounts: { today: UsageAmount; month: UsageAmount }) => {
      for (const [period, label] of [['today', 'today'], ['month', 'this month']] as const) {
        expect(row[`Input ${label}`]).toBe(String(amounts[period].tokens.input));
        expect(row[`Output ${label}`]).toBe(String(amounts[period].tokens.output));
        const [shown, currency] = row[`Cost ${label}`].split(' ');
        expect(currency).toBe(PRICING.currency);
        expect(shown).toBe(formatCost(amounts[period].cost!));
      }
    };

    // The key's owner: their own key, by subject.
    const own = await user.evaluate(async () => (await fetch('/api/usage')).json()) as UsageJson;
    const ownKey = own.keys.find((k) => k.clientId === clientId);
    expectJson(own, ownKey);
    expect(own.keys.map((k) => k.clientId)).toEqual([clientId]);
    await user.goto(`${PORTAL_URL}/usage`, { waitUntil: 'load' });
    const ownRow = await usageRow(user, 'mine-h', clientId);
    expectRow(ownRow, ownKey!);
    // The share of the key's tier: `standard` (dataplane.test.ts: 1,000,000 tokens a day, TotalToken,
    // the default tier), counted since midnight UTC, and not enforced since gamma is a PassthroughModel.
    const quota = ownKey!.quota;
    expect(quota).toMatchObject({ tier: 'standard', limit: 1_000_000, unit: 'Day', enforced: false });
    if (Date.parse(quota!.windowStart) <= trafficStarted) expect(quota!.used).toBe(tokens.input + tokens.output);
    expect(ownRow['Share of tier']).toBe(shareText(quota!));
    await user.screenshot({ path: path.join(USAGE_ARTIFACTS, 'usage-e2e.png'), fullPage: true });

    // An admin: the owner's total among every user's.
    const root = await logIn(browser, PORTAL_URL, PORTAL_ADMIN);
    const all = await root.evaluate(async () => (await fetch('/api/usage?all=true')).json()) as UsageJson;
    const byUser = all.byUser?.find((u) => u.name === PORTAL_USER);
    expectJson(all, byUser);
    await root.goto(`${PORTAL_URL}/usage`, { waitUntil: 'load' });
    expectRow(await usageRow(root, 'users-h', PORTAL_USER), byUser!);
    await root.screenshot({ path: path.join(USAGE_ARTIFACTS, 'usage-admin-e2e.png'), fullPage: true });
    figures.portalUsageShown = `${tokens.input} input, ${tokens.output} output tokens, ${cost} ${PRICING.currency}`;
  } finally {
    await browser.close();
    await front.stop();
  }
  figures.portalUsageTest = seconds(started);
});

test(`${ALERT} fires for a model whose provider answers 500, with its labels and runbook, and not for the healthy model called alongside`, async () => {
  const started = Date.now();
  faulty = await startFaultyProviders(ca);
  faulty[FAILING.standIn].behave({ kind: 'status', status: 500 });
  const standIn = ROUTING_STAND_INS[FAILING.standIn];
  await admin().create({
    apiVersion: 'llm.nebari.dev/v1beta1', kind: 'PassthroughModel', metadata: { name: FAILING.name, namespace: NAMESPACE },
    spec: {
      provider: { hostname: standIn.hostname, port: standIn.port, credential: { secretRef: { name: 'provider-credentials' } } },
      models: { declared: [FAILING.name] },
      access: { groups: ['team-observability'] },
    },
  } as KubeObject);
  await waitForObject<KubeObject>('llm.nebari.dev/v1beta1', 'PassthroughModel', FAILING.name, (o) => {
    const conditions = (o.status as { conditions?: { type: string; status: string; observedGeneration?: number }[] } | undefined)?.conditions ?? [];
    return conditions.some((c) => c.type === 'Programmed' && c.status === 'True' && c.observedGeneration === o.metadata.generation);
  }, 300000);
  const mint = await nls(['keys', 'mint', '--model', FAILING.name, '--kind', 'PassthroughModel', '--user', 'obs-cy', '--over-limit', '-n', NAMESPACE, '-o', 'json']);
  if (mint.code !== 0) throw new Error(`nls keys mint --model ${FAILING.name} exited ${mint.code}: ${mint.output}`);
  const failingKey = (JSON.parse(mint.output) as { apiKey: string }).apiKey;
  const healthyKey = minted[KEYS.findIndex((k) => k.model === GAMMA)].key;
  figures.alertModelProgrammed = seconds(started);

  // Bounded traffic while waiting (one failing and one healthy request per round, at most 30
  // rounds): the failing model's requests reach its provider and come back 500 once the key is
  // authorized (403 before); gamma's are answered.
  const statuses = { failing: [] as number[], healthy: [] as number[] };
  let rounds = 0;
  let firing: PrometheusAlert | undefined;
  const trafficStarted = Date.now();
  await waitFor(`${ALERT} firing for ${FAILING.name}`, async () => {
    if (++rounds > 30) throw new Error(`no ${ALERT} after 30 rounds; statuses ${JSON.stringify(statuses)}; alerts ${JSON.stringify(await prometheus.alerts())}`);
    statuses.failing.push((await gatewayRequest(external, 'POST', '/v1/chat/completions', { token: failingKey, body: chat(FAILING.name) })).status);
    statuses.healthy.push((await gatewayRequest(external, 'POST', '/v1/chat/completions', { token: healthyKey, body: chat(GAMMA.answersAs) })).status);
    firing = (await prometheus.alerts()).find((a) => a.labels.alertname === ALERT && a.labels.gen_ai_request_model === FAILING.name && a.state === 'firing');
    return firing !== undefined;
  }, { timeoutMs: 90000, intervalMs: 2000 });
  figures.alertFiredAfterTraffic = seconds(trafficStarted);
  figures.alertRounds = String(rounds);

  // What reached the provider: every authorized request was answered 500, and the client saw 500.
  expect(faulty[FAILING.standIn].attempts.length).toBeGreaterThan(0);
  expect(faulty[FAILING.standIn].attempts.every((a) => a.outcome === 'status 500' && a.model === FAILING.name)).toBe(true);
  figures.alertStatuses = JSON.stringify(statuses.failing);
  expect(statuses.failing).toContain(500);
  expect(statuses.healthy.every((st) => st === 200)).toBe(true);

  expect(firing!.labels).toEqual({ alertname: ALERT, severity: 'critical', namespace: EG_NAMESPACE, gen_ai_request_model: FAILING.name });
  expect(firing!.annotations.runbook_url).toBe(`https://github.com/nebari-dev/nebari-llm-serving/blob/main/docs/runbooks/${ALERT}.md`);
  expect(firing!.annotations.summary).toBe(`Model ${FAILING.name}: 100% of requests through the gateway in namespace ${EG_NAMESPACE} fail`);
  // gamma was measured in the same window (its request rate is above 0) and raised nothing.
  const healthyRate = await prometheus.query(`sum(rate(gen_ai_server_request_duration_seconds_count{gen_ai_request_model="${GAMMA.answersAs}"}[30s]))`);
  expect(healthyRate[0]?.value).toBeGreaterThan(0);
  const alerts = await prometheus.alerts();
  expect(alerts.filter((a) => a.labels.gen_ai_request_model === GAMMA.answersAs)).toEqual([]);
  // No other alert of the chart fires on this healthy installation (pending ones have longer `for`s).
  expect(alerts.filter((a) => a.state === 'firing').map((a) => `${a.labels.alertname} ${a.labels.gen_ai_request_model ?? ''}`)).toEqual([`${ALERT} ${FAILING.name}`]);

  // The metrics the other alerts read exist in the real system.
  const names = await prometheus.metricNames();
  expect(names).toEqual(expect.arrayContaining([
    'nls_webhook_admission_requests_total', 'nls_webhook_admission_duration_seconds_bucket', 'nls_webhook_certificate_expiry_timestamp_seconds', 'nls_model_ready',
    'envoy_cluster_upstream_rq_xx', 'envoy_cluster_upstream_cx_connect_fail', 'envoy_cluster_upstream_rq_total',
  ]));
  figures.alertMetricsSeenOnlyIfUsed = JSON.stringify(['envoy_cluster_ratelimit_over_limit', 'gen_ai_server_time_to_first_token_seconds_bucket', 'nls_api_key_expiry_timestamp_seconds'].filter((n) => names.includes(n)));
  expect(await byLabel(`max by (model) (nls_model_ready{model="${FAILING.name}"})`, 'model')).toEqual({ [FAILING.name]: 1 });
  const certExpiry = await prometheus.query('min(nls_webhook_certificate_expiry_timestamp_seconds)');
  expect(certExpiry[0].value).toBeGreaterThan(Date.now() / 1000 + 86400);
  figures.alertTest = seconds(started);
});

/** Streamed answers sent in the second batch (after the first has made the histogram's series exist). */
const STREAMED = 3;

/** An alert rule of the chart as the API server stored it. */
function storedRule(alert: string): { alert: string; expr: string } {
  const rule = storedRules.flatMap((g) => g.rules).find((r) => r.alert === alert);
  if (!rule) throw new Error(`${alert} is not in the stored PrometheusRule`);
  return rule;
}

// The first streamed answer makes the histogram's series appear (a new series' first sample is no
// increase for rate()); the second batch is then what the alert's 30 s rate sees.
test('streamed answers on the scraped proxies give the time-to-first-token histogram NebariLLMTimeToFirstTokenSlow reads', async () => {
  const started = Date.now();
  const key = minted[KEYS.findIndex((k) => k.model === GAMMA)].key;
  const streamedBefore = providers.to(GAMMA.answersAs).filter((r) => r.stream).length;
  const count = `sum(gen_ai_server_time_to_first_token_seconds_count{gen_ai_request_model="${GAMMA.answersAs}"})`;
  const stream = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const r = await gatewayRequest(external, 'POST', '/v1/chat/completions', { token: key, body: chat(GAMMA.answersAs, { stream: true }) });
      expect(r.status).toBe(200);
      expect(String(r.headers['content-type'])).toContain('text/event-stream');
    }
  };
  const scraped = async (atLeast: number) => waitFor(`${atLeast} streamed answers' time to first token scraped`, async () => ((await prometheus.query(count))[0]?.value ?? 0) >= atLeast, { timeoutMs: 30000, intervalMs: 1000 });
  await stream(1);
  await scraped(1);
  const first = (await prometheus.query(count))[0].value;
  await stream(STREAMED);
  await scraped(first + STREAMED);
  expect(providers.to(GAMMA.answersAs).filter((r) => r.stream).length - streamedBefore).toBe(1 + STREAMED);
  // The alert's expression as stored, without its threshold: a finite p99 for gamma.
  const rule = storedRule('NebariLLMTimeToFirstTokenSlow');
  const withoutThreshold = rule.expr.replace(/ > [0-9.]+$/, '');
  expect(withoutThreshold).not.toBe(rule.expr);
  const gamma = (await prometheus.query(withoutThreshold)).find((sample) => sample.metric.gen_ai_request_model === GAMMA.answersAs);
  expect(gamma?.metric.namespace).toBe(EG_NAMESPACE);
  expect(Number.isFinite(gamma?.value)).toBe(true);
  figures.ttftP99Seconds = String(gamma!.value);
  figures.streamTest = seconds(started);
});

test(`${QUOTA_ALERT} fires when a key of the ${TINY_TIER} tier goes past its limit, from Envoy's rate-limit refusals on the scraped proxies`, async () => {
  const started = Date.now();
  const mint = await nls(['keys', 'mint', '--model', GAMMA.name, '--kind', 'PassthroughModel', '--user', 'obs-dee', '--tier', TINY_TIER, '--over-limit', '-n', NAMESPACE, '-o', 'json']);
  if (mint.code !== 0) throw new Error(`nls keys mint --tier ${TINY_TIER} exited ${mint.code}: ${mint.output}`);
  const tinyKey = (JSON.parse(mint.output) as { apiKey: string }).apiKey;
  // One request a second, at most 240: refused until the key is authorized, its 2 a minute answered, then 429.
  const statuses: number[] = [];
  let firing: PrometheusAlert | undefined;
  await waitFor(`${QUOTA_ALERT} firing`, async () => {
    if (statuses.length >= 240) throw new Error(`no ${QUOTA_ALERT} after ${statuses.length} requests`);
    statuses.push((await gatewayRequest(external, 'POST', '/v1/chat/completions', { token: tinyKey, body: chat(GAMMA.answersAs) }).catch(() => ({ status: 0 }))).status);
    firing = (await prometheus.alerts()).find((a) => a.labels.alertname === QUOTA_ALERT && a.state === 'firing');
    return firing !== undefined;
  }, { timeoutMs: 300000, intervalMs: 1000 }).catch(async (err: Error) => {
    const refusals = await prometheus.query('envoy_cluster_ratelimit_over_limit').catch((e: Error) => e.message);
    const limiter = (await pods('app.kubernetes.io/component=ratelimit', EG_NAMESPACE).catch(() => [])).map((p) => `${p.metadata.name} ${JSON.stringify(p.status?.containerStatuses?.map((c) => c.ready))}`);
    throw new Error(`${err.message}; statuses ${JSON.stringify(statuses.slice(-30))} (${statuses.length} requests); refusals ${JSON.stringify(refusals)}; rate-limit pods ${JSON.stringify(limiter)}`);
  });
  figures.quotaAlertFired = `${seconds(started)}, ${statuses.length} requests`;
  figures.quotaStatuses = JSON.stringify(statuses);
  expect(statuses).toContain(429);
  // 401/403 only until the operator has authorized the new key.
  expect(statuses.filter((st) => ![401, 403, 200, 429].includes(st))).toEqual([]);
  // Refused for gamma's upstream cluster only, which is what the alert names.
  const refusing = await byLabel('sum by (envoy_cluster_name) (envoy_cluster_ratelimit_over_limit) > 0', 'envoy_cluster_name');
  expect(Object.keys(refusing)).toEqual([firing!.labels.envoy_cluster_name]);
  expect(firing!.labels.envoy_cluster_name).toContain(GAMMA.name);
  expect(firing!.labels).toEqual({ alertname: QUOTA_ALERT, severity: 'info', namespace: EG_NAMESPACE, envoy_cluster_name: firing!.labels.envoy_cluster_name });
  expect(firing!.annotations.runbook_url).toBe(`https://github.com/nebari-dev/nebari-llm-serving/blob/main/docs/runbooks/${QUOTA_ALERT}.md`);
  expect(firing!.annotations.summary).toContain(`Callers of upstream cluster ${firing!.labels.envoy_cluster_name} in namespace ${EG_NAMESPACE} are over their token quota`);
  // The gamma key of the default tier goes on being answered.
  const healthyKey = minted[KEYS.findIndex((k) => k.model === GAMMA)].key;
  expect((await gatewayRequest(external, 'POST', '/v1/chat/completions', { token: healthyKey, body: chat(GAMMA.answersAs) })).status).toBe(200);
  figures.quotaTest = seconds(started);
});

interface StoredDashboard {
  uid: string;
  templating: { list: { name: string; type: string; query?: unknown }[] };
  panels: { title: string; targets: { refId: string; expr: string }[] }[];
}

/** A panel's PromQL with Grafana's variables made concrete: match-all for the dashboard's own, fixed windows for the built-in ones. */
function concretePromql(expr: string): string {
  const promql = expr.replace(/"\$\w+"/g, '".*"').replaceAll('$__rate_interval', scrapedWindow()).replaceAll('$__range', scrapedWindow());
  if (promql.includes('$')) throw new Error(`a variable is left in ${promql}`);
  return promql;
}

// Runs after the usage, portal and alert tests, whose totals this traffic would change.
test('the LLMModel\'s PodMonitor, as stored, has its engine scraped: the vLLM token counters and time-to-first-token histogram grow by what the engine answered through the gateway', async () => {
  const started = Date.now();
  const monitor = await admin().get<KubeObject & { spec: unknown }>(objectRef('monitoring.coreos.com/v1', 'PodMonitor', TINY.podMonitor, NAMESPACE));
  expect(monitor!.spec).toEqual({ selector: { matchLabels: { 'llm.nebari.dev/model': TINY.name, 'llm.nebari.dev/role': 'serving' } }, podMetricsEndpoints: [{ port: 'http', path: '/metrics' }] });
  expect(monitor!.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'LLMModel', name: TINY.name, controller: true })]);
  const engine = `{job="${NAMESPACE}/${TINY.podMonitor}", model_name="${TINY.answersAs}"}`;
  const series = {
    prompt: `vllm:prompt_tokens_total${engine}`, generated: `vllm:generation_tokens_total${engine}`, firstTokens: `vllm:time_to_first_token_seconds_count${engine}`,
  };
  const read = async () => Object.fromEntries(await Promise.all(Object.entries(series).map(async ([k, q]) => [k, (await prometheus.query(`sum(${q})`))[0]?.value]))) as Record<keyof typeof series, number | undefined>;
  await waitFor('tiny\'s engine scraped', async () => Object.values(await read()).every((v) => v !== undefined), { timeoutMs: 30000, intervalMs: 1000 });
  const before = await read();
  const mint = await nls(['keys', 'mint', '--model', TINY.name, '--kind', 'LLMModel', '--over-limit', '-n', NAMESPACE, '-o', 'json']);
  if (mint.code !== 0) throw new Error(`nls keys mint --model ${TINY.name} exited ${mint.code}: ${mint.output}`);
  await answerNewKey((JSON.parse(mint.output) as { apiKey: string }).apiKey, TINY, 'a key for tiny', ENGINE_ANSWERS);
  // One prompt and one generated token per answer (what the stand-in engine reports), one first token each.
  const want = { prompt: before.prompt! + ENGINE_ANSWERS, generated: before.generated! + ENGINE_ANSWERS, firstTokens: before.firstTokens! + ENGINE_ANSWERS };
  await waitFor('the answers counted by the engine, and scraped', async () => JSON.stringify(await read()) === JSON.stringify(want), { timeoutMs: 30000, intervalMs: 1000 }).catch(async (err: Error) => {
    throw new Error(`${err.message}: ${JSON.stringify(await read())}, expected ${JSON.stringify(want)}`);
  });
  // The target labels the dashboard groups by: the pod's, and vLLM's own.
  const [running] = await prometheus.query(`vllm:num_requests_running${engine}`);
  expect(running.metric).toEqual(expect.objectContaining({ namespace: NAMESPACE, pod: expect.stringMatching(/^tiny-vllm-/), container: 'vllm', engine: '0' }));
  figures.engineTest = seconds(started);
});

test('every query of every dashboard, as their ConfigMaps were stored, returns data', async () => {
  const started = Date.now();
  // The portal's revocation series exists once the refresh round has revoked the key of the user
  // who left team-g in the usage test (the round runs every 30 s).
  await waitFor(`the key of ${LEAVING_USER} revoked by the group refresh, and scraped`, async () =>
    (await prometheus.query(`nls_portal_keys_revoked_total{job="${PORTAL_SERVICE}", reason="user-lost-access"} > 0`)).length > 0, { timeoutMs: 90000, intervalMs: 1000 });
  const leavingSecret = await admin().get<KubeObject & { data?: Record<string, string> }>(objectRef('v1', 'Secret', `${GAMMA.name}-api-keys`, NAMESPACE));
  expect(leavingClientId).toBeDefined();
  expect(leavingSecret?.data?.[leavingClientId!]).toBeUndefined();
  // The portal's counters, as scraped, are what the usage test did: three logins, two keys minted on
  // the page, one revoked because its owner left the group.
  const portal = `job="${PORTAL_SERVICE}"`;
  expect(await byLabel(`sum by (outcome) (nls_portal_logins_total{${portal}})`, 'outcome')).toEqual({ failed: 0, success: Object.keys(PORTAL_ACCOUNTS).length });
  expect(await byLabel(`sum by (job) (nls_portal_keys_minted_total{${portal}})`, 'job')).toEqual({ [PORTAL_SERVICE]: 2 });
  expect(await byLabel(`sum by (reason) (nls_portal_keys_revoked_total{${portal}})`, 'reason')).toEqual({ 'user-lost-access': 1 });
  const maps = (await admin().list<KubeObject & { data: Record<string, string> }>('v1', 'ConfigMap', { namespace: NAMESPACE, labelSelector: DASHBOARD_LABEL })).items;
  const dashboards = maps.flatMap((m) => Object.values(m.data).map((json) => JSON.parse(json) as StoredDashboard));
  expect(dashboards.map((d) => d.uid).sort()).toEqual(DASHBOARDS);
  // An admission inside the scraped window: the helm upgrade above may have restarted the operator,
  // and rate() sees no increase in a counter's first sample (the failing model's create may be
  // it). A label edit of that model is one more admission; repeated until rate() sees one.
  let edits = 0;
  await waitFor('an admission counted by rate()', async () => {
    const seen = (await prometheus.query(`sum(rate(nls_webhook_admission_duration_seconds_count{kind="PassthroughModel"}[${scrapedWindow()}])) > 0`)).length > 0;
    if (!seen) await admin().mergePatch(objectRef('llm.nebari.dev/v1beta1', 'PassthroughModel', FAILING.name, NAMESPACE), { metadata: { labels: { 'e2e.nebari.dev/dashboard-check': String(++edits) } } });
    return seen;
  }, { timeoutMs: 60000, intervalMs: 2500 });
  const empty: string[] = [];
  let queries = 0;
  for (const d of dashboards) {
    // Query variables: Grafana's label_values(metric, label), asked as PromQL.
    for (const v of d.templating.list.filter((x) => x.type === 'query')) {
      const m = /^label_values\((.+), (\w+)\)$/.exec((v.query as { query: string }).query);
      if (!m) throw new Error(`${d.uid} variable ${v.name}: not a label_values query: ${JSON.stringify(v.query)}`);
      const values = await prometheus.query(`count by (${m[2]}) (${m[1]})`);
      queries++;
      if (values.length === 0) empty.push(`${d.uid} variable ${v.name}: no ${m[2]} on ${m[1]}`);
    }
    // Panels: a query that does not parse fails here (the API answers an error); each must give a number.
    for (const p of d.panels) {
      for (const t of p.targets) {
        const promql = concretePromql(t.expr);
        const result = await prometheus.query(promql);
        queries++;
        if (!result.some((sample) => Number.isFinite(sample.value))) empty.push(`${d.uid} "${p.title}" ${t.refId}: ${promql} gave ${JSON.stringify(result.slice(0, 3))}`);
      }
    }
  }
  expect(empty).toEqual([]);
  figures.dashboardQueries = String(queries);
  // The serving-engine series come from the LLMModel's PodMonitor alone.
  expect(Object.keys(await byLabel('count by (job) ({__name__=~"vllm:.+"})', 'job'))).toEqual([`${NAMESPACE}/${TINY.podMonitor}`]);
  figures.dashboardTest = seconds(started);
});

/** A copy of `record` with its keys in sorted order (Prometheus answers series in no set order). */
function sorted(record: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
}
