// Requests through the real gateway: the chart from the registry, Envoy Gateway v1.8.1 and the AI
// Gateway v1.1.0 controller from their upstream charts, Envoy 1.38 proxy pods with the extproc
// sidecar, the real endpoint picker for LLMModels and CoreDNS as the cluster DNS, all as pods on
// the real node. Clients send HTTPS with SNI to the endpoint host names; stand-in providers on the
// node address record what reaches them. Each test is a claim of our docs proven by requests.
// Runs after product.test.ts (test/e2e/support/sequencer.js), whose release it removes first.
import * as fs from 'fs';
import * as path from 'path';
import { type KubeObject, objectRef } from '../../src/kube/rest';
import { waitFor } from '../support/processes';
import { admin, CHART, helmOk, imageRoot, NAMESPACE, nls, OPERATOR_SELECTOR, podLogs, pods, readyAtGeneration, RELEASE, waitForObject } from './support/e2e';
import { e2eState } from './support/state';
import { type AwsCredentials, dataPlaneCa, EG_NAMESPACE, extprocSamples, installAiGateway, installCoreDns, installEnvoyGateway, installPlatformGateways, proxyAddress, proxyPods, pushDataPlaneImages, REDIS_HOST, startRedis } from './support/dataplane';
import { chat, gatewayRequest, type GatewayTarget, JWT_AUDIENCE, type JwtIssuer, startJwtIssuer } from './support/gateway-client';
import { sigV4Problem, STREAM_PIECES, startStandInProviders, type StandInProviders } from './support/providers';
import { startSteadyTraffic, type TrafficTarget } from './support/traffic';
import { ROUTING_STAND_INS } from './support/fault-providers';
import { type ReceivedSpan, startTraceCollector, type TraceCollector } from './support/trace-collector';
import { NODE_ADDRESS } from '../support/node';
import { issueCertificateAuthority } from '../../src/webhook/certificates';

const state = e2eState();
const GROUP = 'llm.nebari.dev/v1beta1';
const EXTERNAL = { name: 'nebari-gateway', listener: 'llm-https', hostname: 'llm.example.test' };
const INTERNAL = { name: 'nebari-internal-gateway', listener: 'llm-internal-https', hostname: 'llm-internal.example.test' };
const ISSUER_HOST = 'issuer.example.test';
const PROVIDER_KEY = 'sk-e2e-provider-key-0123456789';
const figures: Record<string, string> = {};
const ca = dataPlaneCa();
let providers: StandInProviders;
let issuer: JwtIssuer;
let redis: Awaited<ReturnType<typeof startRedis>>;
let traces: TraceCollector;
let external: GatewayTarget;
let internal: GatewayTarget;
/** Minted keys by model. */
const keys: Record<string, { key: string; clientId: string }> = {};

/**
 * The models, created in this order (so neither the first nor the last is special): an OpenAI-
 * compatible provider under a path prefix, Azure OpenAI (deployment path, api-version), another
 * OpenAI-compatible provider, and an LLMModel behind its InferencePool and endpoint picker.
 * `answersAs` is the model name a request names; `upstreamPath` what the provider must see.
 */
const MODELS = [
  { name: 'gamma', kind: 'PassthroughModel', answersAs: 'gamma-model', upstreamHost: 'api.gamma.example', upstreamPath: '/api/v1/chat/completions', groups: ['team-g'] },
  { name: 'azure', kind: 'PassthroughModel', answersAs: 'gpt-azure', upstreamHost: 'res.openai.azure.example', upstreamPath: '/openai/deployments/gpt-azure/chat/completions?api-version=2025-01-01-preview', groups: ['team-a'] },
  { name: 'alpha', kind: 'PassthroughModel', answersAs: 'alpha-model', upstreamHost: 'api.alpha.example', upstreamPath: '/v1/chat/completions', groups: ['team-a'] },
  { name: 'tiny', kind: 'LLMModel', answersAs: 'e2e/tiny-chat', groups: ['team-g'] },
] as const;
const PASSTHROUGH = MODELS.filter((m) => m.kind === 'PassthroughModel');
/** A provider whose certificate no trusted CA signed. */
const UNTRUSTED_HOST = 'api.untrusted.example';
/**
 * Providers with their own APIs, at their real default host names (CoreDNS answers them with the
 * node address inside the run's network namespace): Anthropic (key as `x-api-key`) and Bedrock
 * (SigV4 with the extproc's AWS credentials, as IRSA would give them).
 */
const ANTHROPIC = { name: 'claude', answersAs: 'claude-haiku-4-5', upstreamHost: 'api.anthropic.com' };
const BEDROCK = { name: 'bedrock', answersAs: 'amazon.nova-pro-v1:0', upstreamHost: 'bedrock-runtime.us-east-1.amazonaws.com' };
const AWS: AwsCredentials = { accessKeyId: 'AKIAE2ESTANDIN000001', secretAccessKey: 'e2e-stand-in-secret-access-key-0123456789' };

/** The key and client ID of `nls keys mint -o json`. */
function mintedKey(output: string): { key: string; clientId: string } {
  const parsed = JSON.parse(output) as { apiKey?: string; clientId?: string };
  if (!parsed.apiKey || !parsed.clientId) throw new Error(`nls keys mint printed no key: ${output}`);
  return { key: parsed.apiKey, clientId: parsed.clientId };
}

/**
 * `nls keys mint` for a model, as the administrator. With `nls smoke`'s keys, this file mints more
 * keys in an hour than the per-user limit allows (20, docs/api-keys.md), hence `--over-limit`.
 */
async function mint(model: string, kind: string, ...flags: string[]): Promise<{ key: string; clientId: string }> {
  const r = await nls(['keys', 'mint', '--model', model, '--kind', kind, ...flags, '--over-limit', '-n', NAMESPACE, '-o', 'json']);
  if (r.code !== 0) throw new Error(`nls keys mint --model ${model} exited ${r.code}: ${r.output}`);
  return mintedKey(r.output);
}

function seconds(since: number): string {
  return `${((Date.now() - since) / 1000).toFixed(1)} s`;
}

function modelObject(m: (typeof MODELS)[number]): KubeObject {
  const access = { groups: [...m.groups] };
  if (m.kind === 'LLMModel') {
    return {
      apiVersion: GROUP, kind: 'LLMModel', metadata: { name: m.name, namespace: NAMESPACE },
      spec: {
        model: { name: m.answersAs, source: 'huggingface', storage: { type: 'emptyDir' } },
        resources: { gpu: { count: 0 }, requests: { cpu: '50m', memory: '64Mi' } },
        // Its PodMonitor waits for the Prometheus Operator's CRDs, which observability.test.ts installs.
        serving: { replicas: 1, monitoring: { enabled: true } },
        access,
      },
    } as KubeObject;
  }
  const provider: Record<string, unknown> = { hostname: m.upstreamHost, credential: { secretRef: { name: 'provider-credentials' } } };
  if (m.name === 'gamma') provider.pathPrefix = '/api/v1';
  if (m.name === 'azure') provider.backend = { type: 'AzureOpenAI', azureOpenAI: { apiVersion: '2025-01-01-preview' } };
  return { apiVersion: GROUP, kind: 'PassthroughModel', metadata: { name: m.name, namespace: NAMESPACE }, spec: { provider, models: { declared: [m.answersAs] }, access } } as KubeObject;
}

/** The model's Programmed condition is True for its current generation. */
function programmed(obj: KubeObject): boolean {
  const conditions = ((obj.status as { conditions?: { type: string; status: string; observedGeneration?: number }[] } | undefined)?.conditions ?? []);
  return conditions.some((c) => c.type === 'Programmed' && c.status === 'True' && c.observedGeneration === obj.metadata.generation);
}

/** Every proxy pod of the Gateway Ready and carrying the extproc sidecar, and no other pod left. */
async function proxiesServing(gateway: string): Promise<boolean> {
  const list = await proxyPods(gateway);
  return list.length > 0 && list.every((p) => p.ready && p.withSidecar);
}

async function dataPlaneLogs(): Promise<string> {
  return [
    await podLogs('app.kubernetes.io/name=envoy', EG_NAMESPACE).catch(() => ''),
    await podLogs('control-plane=envoy-gateway', EG_NAMESPACE).catch(() => ''),
    await podLogs('app.kubernetes.io/name=ai-gateway-helm', 'envoy-ai-gateway-system').catch(() => ''),
  ].join('\n');
}

beforeAll(async () => {
  // product.test.ts leaves its release and models behind; this file starts from the CRDs alone.
  for (const kind of ['AgentDeployment', 'LLMModel', 'PassthroughModel']) {
    const list = await admin().list('llm.nebari.dev/v1beta1', kind, { namespace: NAMESPACE }).catch(() => ({ items: [] as KubeObject[] }));
    for (const o of list.items) await admin().delete(objectRef(GROUP, kind, o.metadata.name, NAMESPACE)).catch(() => undefined);
  }
  await waitFor('the previous models gone', async () => {
    for (const kind of ['AgentDeployment', 'LLMModel', 'PassthroughModel']) {
      if ((await admin().list('llm.nebari.dev/v1beta1', kind, { namespace: NAMESPACE }).catch(() => ({ items: [] }))).items.length > 0) return false;
    }
    return true;
  }, { timeoutMs: 180000 });
  await helmOk(4, ['uninstall', RELEASE, '-n', NAMESPACE, '--wait']).catch(() => undefined);

  const started = Date.now();
  const providerHosts = [...PASSTHROUGH.map((m) => m.upstreamHost), ANTHROPIC.upstreamHost, BEDROCK.upstreamHost];
  // routing.test.ts runs its own stand-ins after this file, on the data plane it leaves: their names resolve here and their certificates come from this CA.
  const standInHosts = [...providerHosts, UNTRUSTED_HOST, ISSUER_HOST, REDIS_HOST, ...Object.values(ROUTING_STAND_INS).map((s) => s.hostname)];
  providers = await startStandInProviders(ca, providerHosts, [UNTRUSTED_HOST]);
  issuer = await startJwtIssuer(ca, ISSUER_HOST, 8443);
  const bundle = fs.readFileSync(path.join(imageRoot(), 'etc', 'ssl', 'certs', 'ca-certificates.crt'), 'utf8');
  const images = pushDataPlaneImages(state.images.operator.repository.split('/')[0], ca, bundle);
  await installCoreDns(images.coredns, standInHosts);
  await installAiGateway(images, AWS);
  redis = await startRedis(fs.mkdtempSync(path.join(state.dir, 'redis-')));
  await installEnvoyGateway(images, fs.mkdtempSync(path.join(state.dir, 'eg-')), redis.url);
  traces = await startTraceCollector(NODE_ADDRESS);
  await installPlatformGateways([EXTERNAL, INTERNAL], ca, images.envoy, traces);
  figures.dataPlaneInstalled = seconds(started);

  await helmOk(4, [
    'install', RELEASE, `${state.chartRepo}/${CHART}`, '--version', state.version, '-n', NAMESPACE, '--create-namespace', '--wait', '--timeout', '5m',
    '--set', 'platform.baseDomain=example.test',
    '--set', `platform.jwt.issuer=${issuer.url}`, '--set', `platform.jwt.jwksUri=${issuer.jwksUri}`, '--set', `platform.jwt.audiences={${JWT_AUDIENCE}}`,
    '--set', `providers.vllm.image=${state.images.standIn}`, '--set', `providers.modelDownloader.image=${state.images.standIn}`,
    '--set', `providers.endpointPicker.image=${images.epp}`,
    '--set', 'platform.tracing.enabled=true',
  ]);
  await admin().apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'provider-credentials', namespace: NAMESPACE }, type: 'Opaque', stringData: { apiKey: PROVIDER_KEY } } as never, { fieldManager: 'e2e', force: true });
}, 900000);

afterAll(async () => {
  console.log(`data-plane figures: ${JSON.stringify(figures, null, 2)}`);
  await providers?.stop();
  await issuer?.stop();
  await redis?.process.stop();
  await traces?.stop();
});

test('models created out of order are Ready, then Programmed once a request would reach them: the proxies rolled with the sidecar and the gateway answers at once', async () => {
  const started = Date.now();
  for (const m of MODELS) {
    await admin().create(modelObject(m));
    // Distinct creation seconds, so route age differs between every pair of models.
    await new Promise((r) => setTimeout(r, 1100));
  }
  for (const m of MODELS) await waitForObject<KubeObject>(GROUP, m.kind, m.name, readyAtGeneration, 300000);
  figures.modelsReady = seconds(started);
  // No Prometheus Operator CRDs yet: tiny serves regardless, and says why it is not scraped.
  const tiny = await admin().get<KubeObject>(objectRef(GROUP, 'LLMModel', 'tiny', NAMESPACE));
  const monitoring = (tiny!.status as { conditions: { type: string; status: string; reason: string; message: string }[] }).conditions.find((c) => c.type === 'MonitoringReady');
  expect(monitoring).toMatchObject({ status: 'False', reason: 'PodMonitorCRDUnavailable', message: expect.stringContaining('spec.serving.monitoring.enabled') });
  try {
    for (const m of MODELS) await waitForObject<KubeObject>(GROUP, m.kind, m.name, programmed, 300000);
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${await dataPlaneLogs()}`);
  }
  figures.modelsProgrammed = seconds(started);
  // Programmed means servable: every proxy pod already carries the sidecar, and the first
  // request (no retry) is answered by the routes, not by a pod without the extproc.
  for (const g of [EXTERNAL, INTERNAL]) expect(`${g.name}: ${await proxiesServing(g.name)}`).toBe(`${g.name}: true`);
  external = { address: await proxyAddress(EXTERNAL.name), hostname: EXTERNAL.hostname, ca: ca.certPem };
  internal = { address: await proxyAddress(INTERNAL.name), hostname: INTERNAL.hostname, ca: ca.certPem };
  const first = await gatewayRequest(external, 'POST', '/v1/chat/completions', { body: chat('alpha-model') });
  expect(first.status).toBe(401);
  figures.modelsCreatedToFirstAnswer = seconds(started);
});

test('each model\'s key works on its own model on the external endpoint, and only there', async () => {
  for (const m of MODELS) {
    keys[m.name] = await mint(m.name, m.kind);
  }
  const matrix: string[] = [];
  for (const owner of MODELS) {
    for (const target of MODELS) {
      const r = await gatewayRequest(external, 'POST', '/v1/chat/completions', { token: keys[owner.name].key, body: chat(target.answersAs) });
      matrix.push(`${owner.name} key → ${target.answersAs}: ${r.status}`);
      expect(`${owner.name} key → ${target.answersAs}: ${r.status}`).toBe(`${owner.name} key → ${target.answersAs}: ${owner === target ? 200 : 403}`);
    }
  }
  figures.keyMatrix = matrix.join('; ');
});

test('what reaches a provider: its own key, the model\'s path and host, nothing that identifies the caller', async () => {
  for (const m of PASSTHROUGH) {
    const before = providers.to(m.answersAs).length;
    const r = await gatewayRequest(external, 'POST', '/v1/chat/completions', { token: keys[m.name].key, body: chat(m.answersAs), headers: { 'x-llm-client-id': 'spoofed' } });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toMatchObject({ choices: [{ message: { content: 'pong' } }] });
    const seen = providers.to(m.answersAs).slice(before);
    expect(seen).toHaveLength(1);
    const [req] = seen;
    expect(req.path).toBe(m.upstreamPath);
    expect(req.host).toBe(m.upstreamHost);
    const credential = m.name === 'azure' ? req.headers['api-key'] : req.headers.authorization;
    expect(credential).toContain(PROVIDER_KEY);
    const sent = JSON.stringify(req.headers);
    expect(sent).not.toContain(keys[m.name].key);
    expect(sent).not.toContain(keys[m.name].clientId);
    expect(Object.keys(req.headers)).not.toContain('x-llm-client-id');
  }
});

test('requests without a key, with a wrong key or for an unknown model are refused', async () => {
  const noKey = await gatewayRequest(external, 'POST', '/v1/chat/completions', { body: chat('alpha-model') });
  expect(noKey.status).toBe(401);
  const wrong = await gatewayRequest(external, 'POST', '/v1/chat/completions', { token: 'nls-not-a-key-0123456789abcdef', body: chat('alpha-model') });
  expect(wrong.status).toBe(401);
  // An unknown model falls to the not-found rule of the oldest generated HTTPRoute, whose
  // authorization then runs: 404 for that model's keys, 403 for every other key
  // (docs/compatibility-gateway.md, Known limitations). Which route is oldest is the AI Gateway
  // controller's creation order, not the models'. Either way nothing reaches a provider.
  const before = providers.requests.length;
  const unknown: Record<string, number> = {};
  for (const m of MODELS) {
    const r = await gatewayRequest(external, 'POST', '/v1/chat/completions', { token: keys[m.name].key, body: chat('no-such-model') });
    unknown[m.name] = r.status;
    if (r.status === 404) expect(r.body).toMatch(/model|route/i);
  }
  expect(Object.values(unknown).sort()).toEqual([403, 403, 403, 404]);
  expect(providers.requests.length).toBe(before);
  const catalogNoKey = await gatewayRequest(external, 'GET', '/v1/models');
  expect(catalogNoKey.status).toBe(401);
});

test('every model\'s key lists exactly the external endpoint\'s models', async () => {
  const expected = MODELS.map((m) => m.answersAs).sort();
  for (const m of MODELS) {
    const r = await gatewayRequest(external, 'GET', '/v1/models', { token: keys[m.name].key });
    expect(`${m.name}: ${r.status}`).toBe(`${m.name}: 200`);
    const ids = (JSON.parse(r.body) as { data: { id: string }[] }).data.map((d) => d.id).sort();
    expect(ids).toEqual(expected);
  }
});

test('a streamed answer arrives intact, chunk by chunk', async () => {
  const r = await gatewayRequest(external, 'POST', '/v1/chat/completions', { token: keys.alpha.key, body: chat('alpha-model', { stream: true }) });
  expect(r.status).toBe(200);
  expect(String(r.headers['content-type'])).toContain('text/event-stream');
  const events = r.body.split('\n\n').filter((e) => e.startsWith('data: '));
  expect(events.at(-1)).toBe('data: [DONE]');
  const text = events.slice(0, -1).map((e) => (JSON.parse(e.slice(6)) as { choices: { delta: { content?: string } }[] }).choices[0].delta.content ?? '').join('');
  expect(text).toBe(STREAM_PIECES.join(''));
  figures.streamFirstByteMs = r.firstByteMs.toFixed(1);
});

test('an LLMModel answers through its InferencePool and the real endpoint picker', async () => {
  const answers: number[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await gatewayRequest(external, 'POST', '/v1/chat/completions', { token: keys.tiny.key, body: { model: 'e2e/tiny-chat', messages: [{ role: 'user', content: 'hello' }] } });
    if (r.status !== 200) throw new Error(`LLMModel request ${i}: ${r.status} ${r.body}\n${await podLogs('llm.nebari.dev/role=endpoint-picker')}`);
    expect(JSON.parse(r.body)).toMatchObject({ choices: [{ message: { content: 'echo: hello' } }] });
    answers.push(r.status);
  }
  expect(answers).toEqual([200, 200, 200]);
});

test('an Anthropic model answers Anthropic\'s Messages API; a Bedrock model gets requests signed with SigV4', async () => {
  const passthrough = (name: string, provider: object, declared: string) => ({
    apiVersion: GROUP, kind: 'PassthroughModel', metadata: { name, namespace: NAMESPACE },
    spec: { provider, models: { declared: [declared] }, access: { groups: ['team-a'] } },
  }) as KubeObject;
  await admin().create(passthrough(ANTHROPIC.name, { backend: { type: 'Anthropic' }, credential: { secretRef: { name: 'provider-credentials' } } }, ANTHROPIC.answersAs));
  await admin().create(passthrough(BEDROCK.name, { backend: { type: 'Bedrock', bedrock: { region: 'us-east-1' } } }, BEDROCK.answersAs));
  for (const m of [ANTHROPIC, BEDROCK]) {
    await waitForObject<KubeObject>(GROUP, 'PassthroughModel', m.name, readyAtGeneration);
    keys[m.name] = await mint(m.name, 'PassthroughModel');
  }

  // Anthropic: the client speaks Anthropic's API under /anthropic, with our key as a bearer token.
  const message = { model: ANTHROPIC.answersAs, max_tokens: 16, messages: [{ role: 'user', content: 'ping' }] };
  const anthropicHeaders = { 'anthropic-version': '2023-06-01' };
  let answer = { status: 0, body: '' };
  await waitFor('the Anthropic model answering', async () => {
    answer = await gatewayRequest(external, 'POST', '/anthropic/v1/messages', { token: keys.claude.key, body: message, headers: anthropicHeaders }).catch(() => ({ status: 0, body: '' }));
    return answer.status === 200;
  }, { timeoutMs: 120000, intervalMs: 1000 });
  expect(JSON.parse(answer.body)).toMatchObject({ type: 'message', content: [{ type: 'text', text: 'pong' }] });
  const [toAnthropic] = providers.to(ANTHROPIC.answersAs);
  expect({ path: toAnthropic.path, host: toAnthropic.host, key: toAnthropic.headers['x-api-key'], version: toAnthropic.headers['anthropic-version'] })
    .toEqual({ path: '/v1/messages', host: ANTHROPIC.upstreamHost, key: PROVIDER_KEY, version: '2023-06-01' });
  expect(JSON.stringify(toAnthropic.headers)).not.toContain(keys.claude.key);
  // Anthropic's SDKs send the key as x-api-key: accepted too, and replaced by the provider's key.
  const viaApiKey = await gatewayRequest(external, 'POST', '/anthropic/v1/messages', { body: message, headers: { ...anthropicHeaders, 'x-api-key': keys.claude.key } });
  expect(viaApiKey.status).toBe(200);
  expect(providers.to(ANTHROPIC.answersAs).at(-1)?.headers['x-api-key']).toBe(PROVIDER_KEY);
  expect((await gatewayRequest(external, 'POST', '/anthropic/v1/messages', { body: message, headers: { ...anthropicHeaders, 'x-api-key': 'nls-not-a-key-0123456789abcdef' } })).status).toBe(401);
  // Another model's key is refused, as for every model.
  expect((await gatewayRequest(external, 'POST', '/anthropic/v1/messages', { token: keys.alpha.key, body: message, headers: anthropicHeaders })).status).toBe(403);
  // AI Gateway 1.1.0 has no OpenAI-to-Anthropic translation: an OpenAI chat request for the model
  // is refused by the gateway and never reaches Anthropic (docs/compatibility-gateway.md).
  const before = providers.requests.length;
  const viaChat = await gatewayRequest(external, 'POST', '/v1/chat/completions', { token: keys.claude.key, body: chat(ANTHROPIC.answersAs) });
  figures.anthropicViaOpenAIChat = `${viaChat.status} ${viaChat.body.slice(0, 200)}`;
  expect(viaChat.status).toBeGreaterThanOrEqual(400);
  expect(providers.requests.length).toBe(before);

  // Bedrock: an OpenAI chat request becomes a Converse call, signed with the extproc's credentials.
  let converse = { status: 0, body: '' };
  await waitFor('the Bedrock model answering', async () => {
    converse = await gatewayRequest(external, 'POST', '/v1/chat/completions', { token: keys.bedrock.key, body: chat(BEDROCK.answersAs) }).catch(() => ({ status: 0, body: '' }));
    return converse.status === 200;
  }, { timeoutMs: 120000, intervalMs: 1000 });
  expect(JSON.parse(converse.body)).toMatchObject({ choices: [{ message: { role: 'assistant', content: 'pong' } }] });
  const [toBedrock] = providers.to(BEDROCK.answersAs);
  expect(decodeURIComponent(toBedrock.path)).toBe(`/model/${BEDROCK.answersAs}/converse`);
  expect(toBedrock.host).toBe(BEDROCK.upstreamHost);
  expect(sigV4Problem(toBedrock, AWS, 'bedrock')).toBeUndefined();
  expect(toBedrock.headers.authorization).toContain('/us-east-1/bedrock/aws4_request');
  expect(JSON.stringify(toBedrock.headers)).not.toContain(keys.bedrock.key);
  expect(JSON.stringify(toBedrock.headers)).not.toContain(keys.bedrock.clientId);
});

test('the internal endpoint takes the issuer\'s tokens and checks groups per model', async () => {
  const inTeamA = issuer.token({ sub: 'ana', groups: ['team-a'] });
  for (const m of MODELS) {
    const r = await gatewayRequest(internal, 'POST', '/v1/chat/completions', { token: inTeamA, body: chat(m.answersAs) });
    const allowed = (m.groups as readonly string[]).includes('team-a');
    expect(`${m.name}: ${r.status}`).toBe(`${m.name}: ${allowed ? 200 : 403}`);
  }
  const refused = [
    ['no token', undefined],
    ['expired', issuer.token({ sub: 'ana', groups: ['team-a'], expiresInS: -120 })],
    ['forged', issuer.forged({ sub: 'ana', groups: ['team-a'] })],
  ] as const;
  for (const [what, token] of refused) {
    const r = await gatewayRequest(internal, 'POST', '/v1/chat/completions', { token, body: chat('alpha-model') });
    expect(`${what}: ${r.status}`).toBe(`${what}: 401`);
  }
  // A valid token the issuer minted for another application (platform.jwt.audiences, issue 29
  // Medium 9): Envoy's JWT filter answers 403 "Audiences in Jwt are not allowed".
  const otherAudience = await gatewayRequest(internal, 'POST', '/v1/chat/completions', { token: issuer.token({ sub: 'ana', groups: ['team-a'], aud: 'another-app' }), body: chat('alpha-model') });
  expect(`${otherAudience.status} ${otherAudience.body}`).toMatch(/^403 .*audience/i);
  // An API key is not a token on the internal endpoint.
  const key = await gatewayRequest(internal, 'POST', '/v1/chat/completions', { token: keys.alpha.key, body: chat('alpha-model') });
  expect(key.status).toBe(401);
});

test('gateway tracing: each model request leaves a span tagged with its model and endpoint, though the platform samples nothing by default', async () => {
  // A user agent of its own tells this test's spans from those of earlier requests still in flight.
  const agent = `nls-e2e-tracing-${Date.now()}`;
  const viaKey = await gatewayRequest(external, 'POST', '/v1/chat/completions', { token: keys.alpha.key, body: chat('alpha-model'), headers: { 'user-agent': agent } });
  expect(viaKey.status).toBe(200);
  const viaToken = await gatewayRequest(internal, 'POST', '/v1/chat/completions', { token: issuer.token({ sub: 'ana', groups: ['team-a'] }), body: chat('alpha-model'), headers: { 'user-agent': agent } });
  expect(viaToken.status).toBe(200);
  const ours = () => traces.spans.filter((s: ReceivedSpan) => s.name === 'ingress' && s.attributes.user_agent === agent);
  // Envoy sends its spans in batches, every few seconds.
  await waitFor('the spans of both requests at the collector', async () => ours().length >= 2, { timeoutMs: 60000 });
  const tags = (s: ReceivedSpan) => Object.fromEntries(Object.entries(s.attributes).filter(([k]) => k.startsWith('nebari.llm.') || k === 'http.status_code'));
  expect(ours().map(tags).sort((a, b) => a['nebari.llm.endpoint'].localeCompare(b['nebari.llm.endpoint']))).toEqual(['external', 'internal'].map((endpoint) => ({
    'nebari.llm.model': 'alpha', 'nebari.llm.model_kind': 'PassthroughModel', 'nebari.llm.namespace': NAMESPACE, 'nebari.llm.endpoint': endpoint, 'http.status_code': '200',
  })));
  figures.tracedSpans = `${traces.spans.length} spans in ${traces.exports()} exports so far`;
});

test('usage on the internal endpoint is counted per token subject; a client-ID header the caller sends changes nothing and reaches no provider', async () => {
  // docs/observability.md, "Usage per caller": the JWT check writes the token's `sub` into the
  // client-ID header, which the extproc turns into `client_id` (USAGE_METRIC_HEADER_ATTRIBUTES).
  const subject = 'ana-usage';
  const forged = 'forged-caller';
  const inputTokens = async () => {
    const samples = (await extprocSamples(INTERNAL.name, 'gen_ai_client_token_usage_sum')).filter((s) => s.labels.gen_ai_token_type === 'input' && s.labels.gen_ai_request_model === 'alpha-model');
    const total = (clientId: string | undefined) => samples.filter((s) => s.labels.client_id === clientId).reduce((n, s) => n + s.value, 0);
    return { subject: total(subject), forged: total(forged), noClientId: total(undefined) };
  };
  const before = await inputTokens();
  const seenBefore = providers.to('alpha-model').length;
  const requests: { what: string; token: string; headers: Record<string, string> }[] = [
    { what: 'a token with the subject', token: issuer.token({ sub: subject, groups: ['team-a'] }), headers: {} },
    { what: 'the same subject sending a forged client ID', token: issuer.token({ sub: subject, groups: ['team-a'] }), headers: { 'x-llm-client-id': forged } },
    // Nothing for the JWT filter to write: the forged header must still not survive it.
    { what: 'a token without subject sending a forged client ID', token: issuer.token({ groups: ['team-a'] }), headers: { 'x-llm-client-id': forged } },
  ];
  for (const r of requests) {
    const res = await gatewayRequest(internal, 'POST', '/v1/chat/completions', { token: r.token, body: chat('alpha-model'), headers: r.headers });
    expect(`${r.what}: ${res.status}`).toBe(`${r.what}: 200`);
  }
  // On the wire at the stand-in provider: neither the header nor either value.
  const seen = providers.to('alpha-model').slice(seenBefore);
  expect(seen).toHaveLength(requests.length);
  for (const req of seen) {
    expect(Object.keys(req.headers)).not.toContain('x-llm-client-id');
    expect(JSON.stringify(req.headers)).not.toContain(subject);
    expect(JSON.stringify(req.headers)).not.toContain(forged);
  }
  // The stand-in reports 3 input tokens per answer: two answers for the subject, one without a
  // client_id, none for the forged value.
  const expected = { subject: before.subject + 6, forged: 0, noClientId: before.noClientId + 3 };
  let counted = before;
  await waitFor('the internal proxies\' extproc counted the answers', async () => JSON.stringify((counted = await inputTokens())) === JSON.stringify(expected), { timeoutMs: 15000, intervalMs: 500 }).catch(() => undefined);
  expect(counted).toEqual(expected);
  figures.internalUsageBySubject = JSON.stringify(counted);
});

test('a revoked key is refused within a second, and the other models\' keys keep working', async () => {
  const revoked = await nls(['keys', 'revoke', '--model', 'alpha', '--kind', 'PassthroughModel', '--client-id', keys.alpha.clientId, '-n', NAMESPACE]);
  expect(revoked).toMatchObject({ code: 0 });
  const started = Date.now();
  await waitFor('the revoked key refused', async () => (await gatewayRequest(external, 'POST', '/v1/chat/completions', { token: keys.alpha.key, body: chat('alpha-model') })).status === 401, { timeoutMs: 30000, intervalMs: 100 });
  const refusedAfter = Date.now() - started;
  figures.revokedKeyRefusedAfterMs = String(refusedAfter);
  expect(refusedAfter).toBeLessThan(5000);
  for (const m of MODELS.filter((x) => x.name !== 'alpha')) {
    const r = await gatewayRequest(external, 'POST', '/v1/chat/completions', { token: keys[m.name].key, body: chat(m.answersAs) });
    expect(`${m.name}: ${r.status}`).toBe(`${m.name}: 200`);
  }
  // A new key works at once: the time from `nls keys mint` returning to its first 200.
  const minted = await mint('alpha', 'PassthroughModel');
  keys.alpha = minted;
  const mintedAt = Date.now();
  await waitFor('the new key accepted', async () => (await gatewayRequest(external, 'POST', '/v1/chat/completions', { token: minted.key, body: chat('alpha-model') })).status === 200, { timeoutMs: 30000, intervalMs: 100 });
  figures.mintedKeyFirst200AfterMs = String(Date.now() - mintedAt);
});

test('an expired key is refused once its expiry passes, without anyone revoking it', async () => {
  const expiring = await mint('alpha', 'PassthroughModel', '--expires-in', '20s');
  const expiresAt = Date.now() + 20000;
  await waitFor('the expiring key accepted', async () => (await gatewayRequest(external, 'POST', '/v1/chat/completions', { token: expiring.key, body: chat('alpha-model') })).status === 200, { timeoutMs: 15000, intervalMs: 100 });
  await waitFor('the expired key refused', async () => (await gatewayRequest(external, 'POST', '/v1/chat/completions', { token: expiring.key, body: chat('alpha-model') })).status === 401, { timeoutMs: 60000, intervalMs: 100 });
  const refusedAfter = Date.now() - expiresAt;
  figures.expiredKeyRefusedAfterExpiryMs = String(refusedAfter);
  expect(refusedAfter).toBeLessThan(5000);
  expect((await gatewayRequest(external, 'POST', '/v1/chat/completions', { token: keys.alpha.key, body: chat('alpha-model') })).status).toBe(200);
});

test('a quota tier turned on by helm upgrade answers 429 to its keys only, once their requests are used', async () => {
  // The tier allows 2 requests a minute (counted when a request arrives). Token counts are not
  // charged for PassthroughModels (docs/key-quotas.md, Limits of the mechanism), so the tier's
  // token budget is left large here.
  await helmOk(4, [
    'upgrade', RELEASE, `${state.chartRepo}/${CHART}`, '--version', state.version, '-n', NAMESPACE, '--reuse-values', '--wait', '--timeout', '5m',
    '--set', `quotas.rateLimitBackend=redis://${redis.url}`, '--set', 'quotas.defaultTier=standard',
    '--set', 'quotas.tiers[0].name=standard', '--set', 'quotas.tiers[0].tokens=1000000', '--set', 'quotas.tiers[0].unit=Day',
    '--set', 'quotas.tiers[1].name=tiny', '--set', 'quotas.tiers[1].tokens=1000000', '--set', 'quotas.tiers[1].unit=Day', '--set', 'quotas.tiers[1].requestsPerMinute=2',
  ]);
  const tiny = await mint('alpha', 'PassthroughModel', '--tier', 'tiny');
  const started = Date.now();
  const statuses: number[] = [];
  let answered = 0;
  let limitedSentAt = 0;
  // Until the key's rules reach Envoy its requests are not counted; once they have, two a minute.
  try {
    await waitFor('the tiny tier answering 429', async () => {
      limitedSentAt = Date.now();
      const r = await gatewayRequest(external, 'POST', '/v1/chat/completions', { token: tiny.key, body: chat('alpha-model') }).catch(() => ({ status: 0 }));
      statuses.push(r.status);
      if (r.status === 200) answered++;
      return r.status === 429;
    }, { timeoutMs: 180000, intervalMs: 500 });
  } catch (err) {
    const policy = await admin().get(objectRef('gateway.envoyproxy.io/v1alpha1', 'BackendTrafficPolicy', 'alpha-external-quota', NAMESPACE)).catch((e: Error) => e.message);
    const counters = await redis.keys().catch((e: Error) => e.message);
    throw new Error(`${(err as Error).message}; statuses ${JSON.stringify(statuses.slice(-20))} (${statuses.length} requests)\nBackendTrafficPolicy: ${JSON.stringify(policy)}\nredis keys: ${counters}\n${await podLogs('app.kubernetes.io/component=ratelimit', EG_NAMESPACE).catch(() => '')}`);
  }
  figures.quota429After = `${seconds(started)}, ${answered} answers first`;
  // 403 only until the operator has added the new key to the model's authorization, before any answer.
  const afterFirstAnswer = statuses.slice(statuses.indexOf(200));
  expect(statuses.indexOf(200)).toBeGreaterThanOrEqual(0);
  expect(afterFirstAnswer.filter((s) => s !== 200 && s !== 429 && s !== 0 && s !== 503)).toEqual([]);
  expect(answered).toBeGreaterThanOrEqual(2);
  // Limited stays limited, within the minute of the 429: the rate-limit service counts in windows
  // aligned to the minute (on this machine's clock), so a request in the next one is allowed
  // again: checked only when both were sent and answered within one minute. The same model's key
  // in the standard tier and other models' keys go on.
  const again = (await gatewayRequest(external, 'POST', '/v1/chat/completions', { token: tiny.key, body: chat('alpha-model') })).status;
  const sameMinute = Math.floor(limitedSentAt / 60000) === Math.floor(Date.now() / 60000);
  expect(sameMinute ? again : 429).toBe(429);
  for (const m of MODELS) {
    const r = await gatewayRequest(external, 'POST', '/v1/chat/completions', { token: keys[m.name].key, body: chat(m.answersAs) });
    expect(`${m.name}: ${r.status}`).toBe(`${m.name}: 200`);
  }
});

/** Every PassthroughModel's BackendTLSPolicy as stored: its trust (`System` or the ConfigMap named) by model. */
async function providerTrust(): Promise<Record<string, string>> {
  const trust: Record<string, string> = {};
  for (const m of PASSTHROUGH) {
    const policy = await admin().get<KubeObject & { spec: { validation: { wellKnownCACertificates?: string; caCertificateRefs?: { kind: string; name: string }[] } } }>(objectRef('gateway.networking.k8s.io/v1', 'BackendTLSPolicy', `${m.name}-backend-tls`, NAMESPACE));
    const v = policy?.spec.validation;
    trust[m.name] = v?.caCertificateRefs ? v.caCertificateRefs.map((r) => `${r.kind}/${r.name}`).join(',') : (v?.wellKnownCACertificates ?? 'none');
  }
  return trust;
}

test('platform.providerTLS.caConfigMap: providers are verified against that ConfigMap\'s CAs alone, switching a release to it fails no request, and a missing ConfigMap is reported on the model', async () => {
  const setCA = (value: string) => helmOk(4, [
    'upgrade', RELEASE, `${state.chartRepo}/${CHART}`, '--version', state.version, '-n', NAMESPACE, '--reuse-values', '--wait', '--timeout', '5m',
    '--set', `platform.providerTLS.caConfigMap=${value}`,
  ]);
  const every = (trust: string) => Object.fromEntries(PASSTHROUGH.map((m) => [m.name, trust]));
  const putCA = (pem: string) => admin().apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'provider-ca', namespace: NAMESPACE }, data: { 'ca.crt': pem } } as never, { fieldManager: 'e2e', force: true });
  const ask = async (token: string, model: string) => (await gatewayRequest(external, 'POST', '/v1/chat/completions', { token, body: chat(model) }).catch(() => ({ status: 0 }))).status;
  const backendConfigured = (o: KubeObject) => ((o.status as { conditions?: { type: string; reason: string; message: string }[] } | undefined)?.conditions ?? []).find((c) => c.type === 'BackendConfigured');
  // A model created while the ConfigMap holds another CA: its upstream cluster is new, so no
  // connection verified earlier can carry its requests (a CA change applies to new connections).
  const check = { name: 'ca-check', answersAs: 'ca-check-model', upstreamHost: PASSTHROUGH.find((m) => m.name === 'alpha')!.upstreamHost };
  const checkModel = { apiVersion: GROUP, kind: 'PassthroughModel', metadata: { name: check.name, namespace: NAMESPACE }, spec: { provider: { hostname: check.upstreamHost, credential: { secretRef: { name: 'provider-credentials' } } }, models: { declared: [check.answersAs] }, access: { groups: ['team-a'] }, endpoints: { internal: { enabled: false } } } } as KubeObject;
  // The suite's CA, which signs the stand-in providers (the proxies' system bundle has it too).
  await putCA(ca.certPem);
  try {
    const traffic = startSteadyTraffic(PASSTHROUGH.map((m) => ({ name: `${m.name} via external`, gateway: external, model: m.answersAs, token: () => keys[m.name].key })), { maxMs: 480000 });
    let failed: Error | undefined;
    const started = Date.now();
    try {
      traffic.during('helm upgrade to the ConfigMap');
      await setCA('provider-ca');
      let trust: Record<string, string> = {};
      await waitFor('every BackendTLSPolicy naming the ConfigMap', async () => JSON.stringify(trust = await providerTrust()) === JSON.stringify(every('ConfigMap/provider-ca')), { timeoutMs: 120000, intervalMs: 1000 }).catch((err: Error) => {
        throw new Error(`${err.message}: ${JSON.stringify(trust)}`);
      });
      await waitFor('every model serving with the ConfigMap', everyModelServing, { timeoutMs: 180000, intervalMs: 1000 });
      traffic.during('served with the ConfigMap');
      await new Promise((r) => setTimeout(r, 5000));
    } catch (err) {
      failed = err as Error;
    }
    const tally = await traffic.stop();
    figures.providerCASwitch = `${seconds(started)}; ${tally.sent} requests, ${tally.failures.length} failed, slowest ${tally.slowestMs.toFixed(0)} ms`;
    if (failed) throw new Error(`${failed.message}\ntraffic meanwhile: ${figures.providerCASwitch}\n${JSON.stringify(tally.failures.slice(0, 20), null, 1)}`);
    expect(tally.failures).toEqual([]);
    // What reaches the provider is unchanged: its own key, on the model's path.
    for (const m of PASSTHROUGH) {
      const before = providers.to(m.answersAs).length;
      expect(`${m.name}: ${await ask(keys[m.name].key, m.answersAs)}`).toBe(`${m.name}: 200`);
      const [req] = providers.to(m.answersAs).slice(before);
      expect(req.path).toBe(m.upstreamPath);
      expect(m.name === 'azure' ? req.headers['api-key'] : req.headers.authorization).toContain(PROVIDER_KEY);
    }

    // Only the ConfigMap's CAs count: with another CA in it a provider gets no request, though the
    // proxies' system bundle still has the suite's CA; with the suite's CA back it answers.
    await putCA(issueCertificateAuthority({ commonName: 'e2e unrelated CA' }).certPem);
    const tlsFailuresBefore = providers.tlsFailures.filter((f) => f.servername === check.upstreamHost).length;
    await admin().create(checkModel);
    await waitForObject<KubeObject>(GROUP, 'PassthroughModel', check.name, readyAtGeneration);
    const checkKey = await mint(check.name, 'PassthroughModel');
    // Once its route is in Envoy (no more 401/404 while the proxies roll), Envoy's upstream TLS failure.
    await waitFor(`${check.name} refused while the ConfigMap holds another CA`, async () => (await ask(checkKey.key, check.answersAs)) === 503, { timeoutMs: 180000, intervalMs: 1000 });
    expect(providers.to(check.answersAs)).toEqual([]);
    expect(providers.tlsFailures.filter((f) => f.servername === check.upstreamHost).length).toBeGreaterThan(tlsFailuresBefore);
    await putCA(ca.certPem);
    await waitFor(`${check.name} answering with the suite's CA back`, async () => (await ask(checkKey.key, check.answersAs)) === 200, { timeoutMs: 120000, intervalMs: 1000 });

    // No ConfigMap: the model says which ConfigMap and chart value, and what to do.
    await admin().delete(objectRef('v1', 'ConfigMap', 'provider-ca', NAMESPACE));
    const reported = await waitForObject<KubeObject>(GROUP, 'PassthroughModel', 'alpha', (o) => backendConfigured(o)?.reason === 'ProviderCANotFound');
    expect((reported.status as { phase: string }).phase).toBe('Degraded');
    expect(backendConfigured(reported)?.message).toContain(`ConfigMap provider-ca (chart value platform.providerTLS.caConfigMap) does not exist in namespace ${NAMESPACE}`);
    await putCA(ca.certPem);
    await waitForObject<KubeObject>(GROUP, 'PassthroughModel', 'alpha', (o) => readyAtGeneration(o) && backendConfigured(o)?.reason === 'Applied');
  } finally {
    // Back to the system CAs, whatever happened: the tests after this one run on them.
    await admin().delete(objectRef(GROUP, 'PassthroughModel', check.name, NAMESPACE)).catch(() => undefined);
    await setCA('');
    await admin().delete(objectRef('v1', 'ConfigMap', 'provider-ca', NAMESPACE)).catch(() => undefined);
  }
  await waitFor('every BackendTLSPolicy on the system CAs again', async () => JSON.stringify(await providerTrust()) === JSON.stringify(every('System')), { timeoutMs: 120000, intervalMs: 1000 });
  await waitFor('every model serving with the system CAs', everyModelServing, { timeoutMs: 180000, intervalMs: 1000 });
  for (const m of PASSTHROUGH) await waitFor(`${m.name} answering on the system CAs`, async () => (await ask(keys[m.name].key, m.answersAs)) === 200, { timeoutMs: 120000, intervalMs: 1000 });
  await waitFor(`${check.name} gone`, async () => !(await admin().get(objectRef(GROUP, 'PassthroughModel', check.name, NAMESPACE))), { timeoutMs: 120000 });
});

/** Every model Ready and Programmed at its current generation. */
async function everyModelServing(): Promise<boolean> {
  for (const m of MODELS) {
    const o = await admin().get<KubeObject>(objectRef(GROUP, m.kind, m.name, NAMESPACE));
    if (!o || !readyAtGeneration(o) || !programmed(o)) return false;
  }
  return true;
}

test('steady traffic to two models on both endpoints fails no request while we roll the data plane, delete the operator leader, re-render every gateway object and upgrade the release', async () => {
  // A PassthroughModel and the LLMModel (InferencePool and endpoint picker), each with a key on
  // the external endpoint and a token on the internal one (docs/upgrading.md, "Requests during
  // our operations").
  const token = () => issuer.token({ sub: 'ana', groups: ['team-a', 'team-g'] });
  const targets: TrafficTarget[] = [
    { name: 'alpha via external', gateway: external, model: 'alpha-model', token: () => keys.alpha.key },
    { name: 'tiny via external', gateway: external, model: 'e2e/tiny-chat', token: () => keys.tiny.key },
    { name: 'alpha via internal', gateway: internal, model: 'alpha-model', token },
    { name: 'tiny via internal', gateway: internal, model: 'e2e/tiny-chat', token },
  ];
  for (const t of targets) expect(`${t.name}: ${(await gatewayRequest(t.gateway, 'POST', '/v1/chat/completions', { token: t.token(), body: chat(t.model) })).status}`).toBe(`${t.name}: 200`);
  const durations: Record<string, string> = {};
  const traffic = startSteadyTraffic(targets, { maxMs: 480000 });
  const operation = async (name: string, run: () => Promise<void>) => {
    traffic.during(name);
    const started = Date.now();
    await run();
    durations[name] = seconds(started);
  };
  let failed: Error | undefined;
  try {
    await operation('nls gateway roll-dataplane', async () => {
      const rolled = await nls(['gateway', 'roll-dataplane', '--release', RELEASE, '--namespace', NAMESPACE, '--timeout', '240s']);
      if (rolled.code !== 0) throw new Error(`nls gateway roll-dataplane failed (${rolled.code}):\n${rolled.output}`);
    });
    await operation('operator leader deleted', async () => {
      const leaseRef = objectRef('coordination.k8s.io/v1', 'Lease', `${RELEASE}-operator-leader`, NAMESPACE);
      const leader = (await admin().get<KubeObject & { spec: { holderIdentity?: string } }>(leaseRef))?.spec.holderIdentity;
      if (!leader) throw new Error('no operator leader');
      await admin().delete(objectRef('v1', 'Pod', leader, NAMESPACE));
      await waitFor('a new operator leader', async () => {
        const holder = (await admin().get<KubeObject & { spec: { holderIdentity?: string } }>(leaseRef))?.spec.holderIdentity;
        return !!holder && holder !== leader;
      }, { timeoutMs: 120000 });
      await waitFor('every model Ready and Programmed', everyModelServing, { timeoutMs: 120000, intervalMs: 1000 });
    });
    await operation('helm upgrade re-rendering every gateway object', async () => {
      // Both values reach every model's AIGatewayRoute (timeouts of PassthroughModels, owned_by
      // of LLMModels), so the AI Gateway re-renders its routes and extproc configuration.
      await helmOk(4, [
        'upgrade', RELEASE, `${state.chartRepo}/${CHART}`, '--version', state.version, '-n', NAMESPACE, '--reuse-values', '--wait', '--timeout', '5m',
        '--set', 'platform.passthroughRequestTimeout=150s', '--set', 'platform.modelsOwnedBy=nebari-e2e',
      ]);
      await waitFor('every model\'s routes re-rendered', async () => {
        const routes = await admin().list<KubeObject>('aigateway.envoyproxy.io/v1alpha1', 'AIGatewayRoute', { namespace: NAMESPACE });
        const text = (m: (typeof MODELS)[number]) => JSON.stringify(routes.items.filter((r) => r.metadata.labels?.['llm.nebari.dev/model'] === m.name));
        return MODELS.every((m) => text(m).includes(m.kind === 'LLMModel' ? 'nebari-e2e' : '150s'));
      }, { timeoutMs: 120000, intervalMs: 1000 });
      await waitFor('every proxy pod serving after the re-render', async () => (await proxiesServing(EXTERNAL.name)) && (await proxiesServing(INTERNAL.name)), { timeoutMs: 180000, intervalMs: 1000 });
    });
    await operation('nls upgrade to the next version', async () => {
      const upgraded = await nls(['upgrade', '--chart', `${state.chartRepo}/${CHART}`, '--version', state.next, '--plain-http', '--timeout', '4m']);
      if (upgraded.code !== 0) throw new Error(`nls upgrade failed (${upgraded.code}):\n${upgraded.output}\n${await podLogs(OPERATOR_SELECTOR)}`);
      await waitFor('every model Ready and Programmed after the upgrade', everyModelServing, { timeoutMs: 180000, intervalMs: 1000 });
    });
    traffic.during('after the operations');
    await new Promise((r) => setTimeout(r, 3000));
  } catch (err) {
    failed = err as Error;
  }
  const tally = await traffic.stop();
  figures.operationsUnderTraffic = `${tally.sent} requests (${Object.entries(tally.perTarget).map(([k, v]) => `${k} ${v}`).join(', ')}), ${tally.failures.length} failed, slowest ${tally.slowestMs.toFixed(0)} ms; ${Object.entries(tally.perOperation).map(([k, v]) => `${k}: ${v.sent} sent, ${v.failed} failed${durations[k] ? `, took ${durations[k]}` : ''}`).join('; ')}`;
  if (failed) throw new Error(`${failed.message}\ntraffic meanwhile: ${figures.operationsUnderTraffic}\n${JSON.stringify(tally.failures.slice(0, 20), null, 1)}`);
  expect(tally.failures).toEqual([]);
  expect(tally.answered).toBe(tally.sent);
});

/** The models of the external endpoint's HTTPRoutes, oldest first, as Envoy Gateway orders them (creation time, then name). */
async function externalRoutesOldestFirst(): Promise<string[]> {
  const routes = (await admin().list<KubeObject>('gateway.networking.k8s.io/v1', 'HTTPRoute', { namespace: NAMESPACE })).items.filter((r) => r.metadata.name.endsWith('-external'));
  const key = (r: KubeObject) => `${r.metadata.creationTimestamp} ${r.metadata.name}`;
  return routes.sort((a, b) => (key(a) < key(b) ? -1 : 1)).map((r) => r.metadata.name.replace(/-external$/, ''));
}

/** Whether exactly the models of the two oldest external routes accept every external model's keys, and every other policy only its own. */
async function twoOldestAuthenticate(): Promise<string> {
  const order = await externalRoutesOldestFirst();
  const policies = (await admin().list<KubeObject & { spec: { apiKeyAuth?: { credentialRefs: { name: string }[] } } }>('gateway.envoyproxy.io/v1alpha1', 'SecurityPolicy', { namespace: NAMESPACE })).items.filter((p) => p.spec.apiKeyAuth);
  const all = policies.map((p) => `${p.metadata.name.replace(/-external-auth$/, '')}-api-keys`).sort();
  const listed = Object.fromEntries(policies.map((p) => [p.metadata.name.replace(/-external-auth$/, ''), p.spec.apiKeyAuth!.credentialRefs.map((r) => r.name).sort()]));
  const wrong = order.filter((m, i) => JSON.stringify(listed[m]) !== JSON.stringify(i < 2 ? all : [`${m}-api-keys`]));
  return wrong.length === 0 ? 'ok' : `routes oldest first: ${order.join(', ')}; policies: ${JSON.stringify(listed)}`;
}

test('only the two oldest routes\' policies accept every key; deleting and re-creating the model of the oldest fails no request of the others', async () => {
  let layout = '';
  await waitFor('the two oldest routes authenticating every key', async () => (layout = await twoOldestAuthenticate()) === 'ok', { timeoutMs: 60000, intervalMs: 1000 }).catch(() => {
    throw new Error(layout);
  });
  const [oldestName] = await externalRoutesOldestFirst();
  const oldest = MODELS.find((m) => m.name === oldestName);
  if (!oldest) throw new Error(`the oldest external route belongs to ${oldestName}, not one of ${MODELS.map((m) => m.name).join(', ')}`);
  const others = MODELS.filter((m) => m !== oldest);
  const traffic = startSteadyTraffic(
    others.map((m) => ({ name: `${m.name} via external`, gateway: external, model: m.answersAs, token: () => keys[m.name].key })),
    { maxMs: 480000 },
  );
  let failed: Error | undefined;
  try {
    traffic.during(`${oldest.name} deleted`);
    await admin().delete(objectRef(GROUP, oldest.kind, oldest.name, NAMESPACE));
    await waitFor(`${oldest.name} gone`, async () => !(await admin().get(objectRef(GROUP, oldest.kind, oldest.name, NAMESPACE))), { timeoutMs: 120000 });
    await waitFor('the next two routes authenticating every key', async () => (layout = await twoOldestAuthenticate()) === 'ok', { timeoutMs: 60000, intervalMs: 1000 }).catch(() => {
      throw new Error(layout);
    });
    traffic.during(`${oldest.name} re-created`);
    await admin().create(modelObject(oldest));
    await waitForObject<KubeObject>(GROUP, oldest.kind, oldest.name, readyAtGeneration);
    // The re-creation rolled the proxies again; Programmed waits for that roll.
    await waitForObject<KubeObject>(GROUP, oldest.kind, oldest.name, programmed, 240000);
    expect(await proxiesServing(EXTERNAL.name)).toBe(true);
    // Its route is the youngest now: its policy lists its own keys only.
    expect((await externalRoutesOldestFirst()).at(-1)).toBe(oldest.name);
    expect(await twoOldestAuthenticate()).toBe('ok');
  } catch (err) {
    failed = err as Error;
  }
  const tally = await traffic.stop();
  figures.oldestReCreatedUnderTraffic = `${tally.sent} requests, ${tally.failures.length} failed, slowest ${tally.slowestMs.toFixed(0)} ms`;
  if (failed) throw new Error(`${failed.message}\ntraffic meanwhile: ${figures.oldestReCreatedUnderTraffic}\n${JSON.stringify(tally.failures.slice(0, 20), null, 1)}`);
  expect(tally.failures).toEqual([]);
  keys[oldest.name] = await mint(oldest.name, oldest.kind);
  await waitFor('every model answering its own key after the re-creation', async () => {
    if (!(await proxiesServing(EXTERNAL.name))) return false;
    for (const m of MODELS) {
      const r = await gatewayRequest(external, 'POST', '/v1/chat/completions', { token: keys[m.name].key, body: chat(m.answersAs) }).catch(() => undefined);
      if (r?.status !== 200) return false;
    }
    return true;
  }, { timeoutMs: 180000, intervalMs: 1000 });
});

test('nls smoke passes against the installation and names a model broken on purpose', async () => {
  const resolve = ['--resolve', `${EXTERNAL.hostname}:443:${external.address}`, '--resolve', `${INTERNAL.hostname}:443:${internal.address}`];
  const caFile = path.join(state.dir, 'dataplane-ca.pem');
  fs.writeFileSync(caFile, ca.certPem);
  const token = issuer.token({ sub: 'ana', groups: ['team-a', 'team-g'] });
  const ok = await nls(['smoke', '-n', NAMESPACE, ...resolve, '--cacert', caFile, '--token', token]);
  if (ok.code !== 0) throw new Error(`nls smoke failed (${ok.code}):\n${ok.output}\n${await podLogs(OPERATOR_SELECTOR)}`);
  for (const m of MODELS) expect(ok.output).toContain(m.name);
  // Broken on purpose: the provider host of alpha has no server behind it.
  await admin().apply({ ...modelObject(MODELS[2]), spec: { ...(modelObject(MODELS[2]).spec as object), provider: { hostname: 'api.nowhere.example', credential: { secretRef: { name: 'provider-credentials' } } } } } as never, { fieldManager: 'e2e', force: true });
  await waitForObject<KubeObject>(GROUP, 'PassthroughModel', 'alpha', readyAtGeneration);
  await waitFor('alpha failing upstream', async () => (await gatewayRequest(external, 'POST', '/v1/chat/completions', { token: keys.alpha.key, body: chat('alpha-model') }).catch(() => ({ status: 0 }))).status >= 500, { timeoutMs: 120000, intervalMs: 1000 });
  const broken = await nls(['smoke', '-n', NAMESPACE, ...resolve, '--cacert', caFile, '--token', token]);
  expect(broken.code).toBe(1);
  expect(broken.output.split('\n').some((l) => l.includes('alpha') && /5\d\d|upstream/i.test(l))).toBe(true);
  expect((await pods(OPERATOR_SELECTOR)).length).toBeGreaterThan(0);
});

test('a provider whose certificate does not verify gets no request', async () => {
  const model = { apiVersion: GROUP, kind: 'PassthroughModel', metadata: { name: 'untrusted', namespace: NAMESPACE }, spec: { provider: { hostname: UNTRUSTED_HOST, credential: { secretRef: { name: 'provider-credentials' } } }, models: { declared: ['untrusted-model'] }, access: { groups: ['team-a'] }, endpoints: { internal: { enabled: false } } } } as KubeObject;
  await admin().create(model);
  await waitForObject<KubeObject>(GROUP, 'PassthroughModel', 'untrusted', readyAtGeneration);
  const key = await mint('untrusted', 'PassthroughModel');
  let last = { status: 0, body: '' };
  // Once its route is in Envoy (no more 401/404 while the proxies roll), the answer is Envoy's
  // upstream TLS failure, and the stand-in saw no HTTP request for the model.
  await waitFor('the untrusted provider refused by the gateway', async () => {
    last = await gatewayRequest(external, 'POST', '/v1/chat/completions', { token: key.key, body: chat('untrusted-model') }).catch(() => ({ status: 0, body: '' }));
    return last.status === 503;
  }, { timeoutMs: 180000, intervalMs: 1000 });
  // Envoy refused the stand-in's certificate during the handshake (the stand-in saw it abort).
  expect(providers.tlsFailures.filter((f) => f.servername === UNTRUSTED_HOST).length).toBeGreaterThan(0);
  expect(providers.to('untrusted-model')).toEqual([]);
  expect(providers.requests.filter((r) => r.host.startsWith(UNTRUSTED_HOST))).toEqual([]);
});
