// `nls smoke`, the pure half: which checks the stored models give, what a response means (row and
// fix), the table, and the flags. The requests themselves: smoke-https.test.ts.
import {
  addressFor,
  classify,
  listenerPort,
  operatorEndpoints,
  parseKeyFlags,
  parseResolve,
  planChecks,
  smokeModel,
  smokeSummary,
  smokeTable,
  unmatchedModelFlags,
  type Outcome,
  type PlannedCheck,
  type SmokeModel,
} from '../../../src/cli/gateway/smoke-checks';
import { parseSmokeArgs } from '../../../src/cli/gateway/smoke';
import type { LLMModelV1beta1, PassthroughModelV1beta1 } from '../../../src/api/v1beta1';

const targets = { external: { hostname: 'llm.example.com', port: 443 }, internal: { hostname: 'llm-internal.example.com', port: 443 } };
const gpt: SmokeModel = { kind: 'PassthroughModel', name: 'openai', modelIds: ['gpt-4o', 'gpt-4o-mini'], endpoints: ['external', 'internal'], answerCheck: 'POST /v1/chat/completions' };
const claude: SmokeModel = { kind: 'PassthroughModel', name: 'anthropic', modelIds: ['claude-haiku-4-5'], endpoints: ['external'], answerCheck: 'POST /anthropic/v1/messages' };
const llama: SmokeModel = { kind: 'LLMModel', name: 'llama', modelIds: ['meta-llama/Llama-3.1-8B-Instruct'], endpoints: ['external'], answerCheck: 'POST /v1/chat/completions' };
const catchAll: SmokeModel = { kind: 'PassthroughModel', name: 'anything', modelIds: [], endpoints: ['external'], answerCheck: 'POST /v1/chat/completions' };

describe('the models as stored', () => {
  test('an LLMModel is asked for by spec.model.name, a PassthroughModel by each declared name; endpoints are on unless disabled', () => {
    const llm = { apiVersion: 'llm.nebari.dev/v1beta1', kind: 'LLMModel', metadata: { name: 'llama', namespace: 'ns' }, spec: { model: { name: 'meta-llama/Llama-3.1-8B-Instruct' }, endpoints: { internal: { enabled: false } } } };
    expect(smokeModel(llm as unknown as LLMModelV1beta1)).toEqual(llama);
    const pt = { apiVersion: 'llm.nebari.dev/v1beta1', kind: 'PassthroughModel', metadata: { name: 'openai', namespace: 'ns' }, spec: { provider: { hostname: 'api.openai.com' }, models: { declared: ['gpt-4o', 'gpt-4o-mini'] } } };
    expect(smokeModel(pt as unknown as PassthroughModelV1beta1)).toEqual(gpt);
    // Anthropic models are asked in Anthropic's Messages API, which AI Gateway 1.1.0 serves under /anthropic.
    const anthropic = { apiVersion: 'llm.nebari.dev/v1beta1', kind: 'PassthroughModel', metadata: { name: 'anthropic', namespace: 'ns' }, spec: { provider: { backend: { type: 'Anthropic' } }, models: { declared: ['claude-haiku-4-5'] }, endpoints: { internal: { enabled: false } } } };
    expect(smokeModel(anthropic as unknown as PassthroughModelV1beta1)).toEqual(claude);
  });

  test('host names come from the operator environment through the operator’s own parsing and defaults', () => {
    const endpoints = operatorEndpoints({ NLS_GATEWAY_CONTEXT: JSON.stringify({ baseDomain: 'Example.COM.', internal: { hostname: 'ai.corp.example' } }) }, 'Deployment ns/op');
    expect(endpoints.external).toMatchObject({ hostname: 'llm.example.com', gatewayName: 'nebari-gateway', gatewayNamespace: 'envoy-gateway-system', sectionName: 'llm-https' });
    expect(endpoints.internal.hostname).toBe('ai.corp.example');
    // NLS_BASE_DOMAIN overrides, as it does for the operator.
    expect(operatorEndpoints({ NLS_GATEWAY_CONTEXT: '{"baseDomain":"a.org"}', NLS_BASE_DOMAIN: 'b.org' }, 'D').external.hostname).toBe('llm.b.org');
    expect(() => operatorEndpoints({}, 'Deployment ns/op')).toThrow(/^Deployment ns\/op: the platform base domain is not set: set the chart value platform.baseDomain/);
  });

  test('the port is the Gateway listener the routes attach to, else 443', () => {
    const gateway = { spec: { listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }, { name: 'llm-https', port: 8443, protocol: 'HTTPS' }] } };
    expect(listenerPort(gateway, 'llm-https')).toBe(8443);
    expect(listenerPort(gateway, '')).toBe(8443);
    expect(listenerPort(gateway, 'other')).toBe(443);
    expect(listenerPort(undefined, 'llm-https')).toBe(443);
  });
});

describe('planning', () => {
  test('per model, endpoint and model name: /v1/models then a one-token chat; internal skipped without a token', () => {
    const plan = planChecks([gpt, llama], targets, { hasToken: false });
    expect(plan.map((p) => [p.model.name, p.modelId, p.endpoint, p.check, p.target.hostname, p.skip ?? ''])).toEqual([
      ['openai', 'gpt-4o', 'external', 'GET /v1/models', 'llm.example.com', ''],
      ['openai', 'gpt-4o', 'external', 'POST /v1/chat/completions', 'llm.example.com', ''],
      ['openai', 'gpt-4o-mini', 'external', 'GET /v1/models', 'llm.example.com', ''],
      ['openai', 'gpt-4o-mini', 'external', 'POST /v1/chat/completions', 'llm.example.com', ''],
      ['openai', 'gpt-4o', 'internal', 'GET /v1/models', 'llm-internal.example.com', 'skipped: no --token'],
      ['openai', 'gpt-4o', 'internal', 'POST /v1/chat/completions', 'llm-internal.example.com', 'skipped: no --token'],
      ['openai', 'gpt-4o-mini', 'internal', 'GET /v1/models', 'llm-internal.example.com', 'skipped: no --token'],
      ['openai', 'gpt-4o-mini', 'internal', 'POST /v1/chat/completions', 'llm-internal.example.com', 'skipped: no --token'],
      ['llama', 'meta-llama/Llama-3.1-8B-Instruct', 'external', 'GET /v1/models', 'llm.example.com', ''],
      ['llama', 'meta-llama/Llama-3.1-8B-Instruct', 'external', 'POST /v1/chat/completions', 'llm.example.com', ''],
    ]);
    expect(planChecks([gpt], targets, { hasToken: true }).filter((p) => p.skip)).toEqual([]);
  });

  test('an Anthropic model is asked through Anthropic\'s Messages API under /anthropic', () => {
    expect(planChecks([claude], targets, { hasToken: true }).map((p) => p.check)).toEqual(['GET /v1/models', 'POST /anthropic/v1/messages']);
  });

  test('--model keeps a model by object name (all its names) or by model name (that name only)', () => {
    expect(new Set(planChecks([gpt, llama], targets, { only: ['llama'], hasToken: true }).map((p) => p.model.name))).toEqual(new Set(['llama']));
    expect(new Set(planChecks([gpt, llama], targets, { only: ['gpt-4o-mini'], hasToken: true }).map((p) => p.modelId))).toEqual(new Set(['gpt-4o-mini']));
    expect(unmatchedModelFlags([gpt, llama], ['llama', 'gpt-4o', 'typo'])).toEqual(['typo']);
  });

  test('a catch-all PassthroughModel without declared names is reported, not guessed', () => {
    const plan = planChecks([catchAll], targets, { hasToken: true });
    expect(plan).toHaveLength(2);
    expect(plan.every((p) => p.skip === 'skipped: no declared model name (catch-all only); nothing to ask for')).toBe(true);
  });
});

describe('a model the gateway does not serve yet', () => {
  test('its Programmed condition is read from the stored object, and a failure names it first, with the other likely cause after', () => {
    const stored = {
      apiVersion: 'llm.nebari.dev/v1beta1', kind: 'PassthroughModel', metadata: { name: 'openai', namespace: 'ns' },
      spec: { provider: { hostname: 'api.openai.com' }, models: { declared: ['gpt-4o'] }, endpoints: { internal: { enabled: false } } },
      status: { conditions: [{ type: 'Programmed', status: 'False', reason: 'ProxyRollingOut', message: 'external endpoint: proxy Deployment envoy-x is rolling out' }] },
    };
    const model = smokeModel(stored as unknown as PassthroughModelV1beta1);
    expect(model.notProgrammed).toBe('Programmed=False (ProxyRollingOut): external endpoint: proxy Deployment envoy-x is rolling out');
    const [, chat] = planChecks([model], targets, { hasToken: false });
    const row = classify(chat, { latencyMs: 3, status: 500, body: '' });
    expect(row.fix).toBe(
      'the gateway does not serve the model yet, Programmed=False (ProxyRollingOut): external endpoint: proxy Deployment envoy-x is rolling out; wait for it (kubectl wait --for=condition=Programmed) and run again; else: data plane not ready: the upstream or the AI Gateway ext_proc failed (proxy pods rolling, model pods not ready, provider down); wait and run again, check the model\'s status and pods',
    );
    // A pass is a pass, and a Programmed model's failure keeps its own fix.
    expect(classify(chat, { latencyMs: 3, status: 200, body: '{"choices":[{}]}' }).fix).toBeUndefined();
    const served = smokeModel({ ...stored, status: { conditions: [{ ...stored.status.conditions[0], status: 'True', reason: 'Serving' }] } } as unknown as PassthroughModelV1beta1);
    expect(served.notProgrammed).toBeUndefined();
  });
});

describe('what a response means', () => {
  const [models, chat] = planChecks([gpt], targets, { hasToken: true });
  const internalChat = planChecks([gpt], targets, { hasToken: true }).find((p) => p.endpoint === 'internal' && p.check === 'POST /v1/chat/completions')!;
  const at = (p: PlannedCheck, outcome: Omit<Outcome, 'latencyMs'>) => classify(p, { latencyMs: 12, ...outcome });

  test('passes: the name is listed; the answer has choices', () => {
    expect(at(models, { status: 200, body: JSON.stringify({ data: [{ id: 'gpt-4o' }, { id: 'x' }] }) })).toMatchObject({ result: 'pass', status: '200', latencyMs: 12, detail: 'listed among 2 model(s)' });
    expect(at(chat, { status: 200, body: JSON.stringify({ choices: [{ message: { content: 'p' } }] }) })).toMatchObject({ result: 'pass', detail: '1 choice(s)' });
  });

  test('an Anthropic answer passes with content blocks, and an OpenAI-shaped one does not', () => {
    const [, messages] = planChecks([claude], targets, { hasToken: true });
    expect(at(messages, { status: 200, body: JSON.stringify({ type: 'message', content: [{ type: 'text', text: 'p' }] }) })).toMatchObject({ result: 'pass', detail: '1 content block(s)' });
    const row = at(messages, { status: 200, body: JSON.stringify({ choices: [] }) });
    expect(row).toMatchObject({ result: 'fail', detail: 'no content in the answer: {"choices":[]}' });
    expect(row.fix).toContain('Anthropic Messages format');
  });

  test.each([
    ['external 401', 'models', { status: 401, body: 'Unauthorized' }, '401', 'HTTP 401: Unauthorized', "key not accepted: is the model's key Secret listed in the endpoint's SecurityPolicy"],
    ['internal 401', 'internal', { status: 401, body: '' }, '401', 'HTTP 401', 'token not accepted: is it expired, or from another issuer or audience than platform.jwt.issuer'],
    ['external 403', 'chat', { status: 403, body: 'RBAC: access denied' }, '403', 'HTTP 403: RBAC: access denied', 'client not authorized for this model'],
    ['404', 'chat', { status: 404, body: '' }, '404', 'HTTP 404', 'no route for the model name "gpt-4o" on llm.example.com: check the model\'s AIGatewayRoute'],
    ['429', 'chat', { status: 429, body: '' }, '429', 'HTTP 429', "rate limited: the key's quota tier"],
    ['503', 'chat', { status: 503, body: 'no healthy upstream' }, '503', 'HTTP 503: no healthy upstream', 'data plane not ready'],
    ['ext_proc 400', 'chat', { status: 400, body: 'ext_proc error: stream reset' }, '400', 'HTTP 400: ext_proc error: stream reset', 'data plane not ready'],
    ['not listed', 'models', { status: 200, body: '{"data":[{"id":"other"}]}' }, '200', '"gpt-4o" not listed (1 models listed)', 'the catalog of llm.example.com does not list the model'],
    ['not a catalog', 'models', { status: 200, body: '<html>' }, '200', 'not a model list: <html>', 'is the address (--resolve) the AI Gateway?'],
    ['no choices', 'chat', { status: 200, body: '{"error":"x"}' }, '200', 'no choices in the answer: {"error":"x"}', 'the upstream did not answer in the OpenAI chat format'],
    ['refused', 'models', { error: { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 10.0.0.1:443' } }, 'ECONNREFUSED', 'connect ECONNREFUSED 10.0.0.1:443', '--resolve llm.example.com:443:<gateway address>'],
    ['no DNS', 'models', { error: { code: 'ENOTFOUND', message: 'getaddrinfo ENOTFOUND llm.example.com' } }, 'ENOTFOUND', 'getaddrinfo ENOTFOUND llm.example.com', 'llm.example.com does not resolve here: pass --resolve llm.example.com:443:<gateway address>'],
    ['timeout', 'chat', { error: { code: 'ETIMEDOUT', message: 'no answer within 30000 ms' } }, 'ETIMEDOUT', 'no answer within 30000 ms', 'no answer within --timeout'],
    ['untrusted', 'models', { error: { code: 'DEPTH_ZERO_SELF_SIGNED_CERT', message: 'self-signed certificate' } }, 'DEPTH_ZERO_SELF_SIGNED_CERT', 'self-signed certificate', 'pass --cacert'],
    ['wrong name', 'models', { error: { code: 'ERR_TLS_CERT_ALTNAME_INVALID', message: "Hostname/IP does not match certificate's altnames" } }, 'ERR_TLS_CERT_ALTNAME_INVALID', "Hostname/IP does not match certificate's altnames", "the gateway's certificate does not name llm.example.com"],
  ] as const)('%s: status, what failed and the fix', (_, which, outcome, status, detail, fix) => {
    const p = which === 'models' ? models : which === 'chat' ? chat : internalChat;
    const row = at(p, outcome);
    expect(row).toMatchObject({ result: 'fail', status, detail });
    expect(row.fix).toContain(fix);
  });
});

describe('the report', () => {
  test('a padded table: failures carry the fix, skipped rows say why; a summary line', () => {
    const plan = planChecks([llama, gpt], targets, { only: ['llama', 'gpt-4o'], hasToken: false });
    const rows = [
      classify(plan[0], { status: 200, body: '{"data":[{"id":"meta-llama/Llama-3.1-8B-Instruct"}]}', latencyMs: 8 }),
      classify(plan[1], { status: 401, body: '', latencyMs: 3 }),
      ...plan.slice(2).filter((p) => p.skip).slice(0, 1).map((p) => ({ ...classify(p, { latencyMs: 0 }), result: 'skip' as const, status: '-', detail: p.skip!, fix: undefined, latencyMs: undefined })),
    ];
    const lines = smokeTable(rows);
    expect(lines[0]).toMatch(/^MODEL +MODEL NAME +ENDPOINT +CHECK +RESULT +STATUS +MS +DETAIL$/);
    expect(lines[1]).toMatch(/^llama +meta-llama\/Llama-3.1-8B-Instruct +external +GET \/v1\/models +PASS +200 +8 +listed among 1 model\(s\)$/);
    expect(lines[2]).toMatch(/^llama .* POST \/v1\/chat\/completions +FAIL +401 +3 +HTTP 401; fix: key not accepted: /);
    expect(lines[3]).toMatch(/^openai +gpt-4o +internal +GET \/v1\/models +SKIP +- +- +skipped: no --token$/);
    // Columns line up.
    expect(lines.slice(1).map((l) => l.search(/ (external|internal) /) + 1)).toEqual([1, 2, 3].map(() => lines[0].indexOf('ENDPOINT')));
    expect(smokeSummary(rows)).toBe('3 checks: 1 passed, 1 failed, 1 skipped');
  });
});

describe('flags', () => {
  test('--resolve as curl writes it; the address is used only for that host and port', () => {
    const entries = [parseResolve('LLM.example.test:443:192.0.2.7'), parseResolve('llm-internal.example.test:8443:[::1]')];
    expect(entries).toEqual([
      { host: 'llm.example.test', port: 443, address: '192.0.2.7' },
      { host: 'llm-internal.example.test', port: 8443, address: '::1' },
    ]);
    expect(addressFor(entries, 'llm.example.test', 443)).toBe('192.0.2.7');
    expect(addressFor(entries, 'llm.example.test', 8443)).toBe('llm.example.test');
    expect(addressFor(entries, 'llm-internal.example.test', 8443)).toBe('::1');
  });

  test('--key MODEL=KEY, one per model', () => {
    expect(parseKeyFlags(['openai=sk-a=b', 'llama=sk-c'])).toEqual(new Map([['openai', 'sk-a=b'], ['llama', 'sk-c']]));
  });

  test('defaults: the release namespace, 30s per request, verified TLS', () => {
    expect(parseSmokeArgs([])).toMatchObject({ namespace: 'nebari-llm-serving-system', release: 'nebari-llm-serving', output: 'text', models: [], resolve: [], insecure: false, timeoutMs: 30_000, keyWaitMs: 60_000 });
    expect(parseSmokeArgs(['-n', 'ns', '-o', 'json', '--model', 'a', '--model', 'b', '--timeout', '5s', '--insecure-skip-tls-verify'])).toMatchObject({ namespace: 'ns', output: 'json', models: ['a', 'b'], timeoutMs: 5000, insecure: true });
  });

  test.each([
    [['--resolve', 'llm.example.test:443'], 'smoke: --resolve "llm.example.test:443" is not HOST:PORT:ADDRESS; write e.g. --resolve llm.example.com:443:203.0.113.10'],
    [['--resolve', 'llm.example.test:70000:10.0.0.1'], 'is not HOST:PORT:ADDRESS'],
    [['--key', 'sk-only'], 'smoke: --key takes MODEL=KEY'],
    [['--key', 'm='], 'smoke: --key takes MODEL=KEY'],
    [['--key', 'm=a', '--key', 'm=b'], 'smoke: --key given twice for m; give one key per model'],
    [['--token', 't', '--token-file', 'f'], 'smoke: give --token or --token-file, not both'],
    [['--timeout', 'soon'], '--timeout "soon" is not a duration'],
    [['--timeout', '0s'], 'smoke: --timeout "0s" must be longer than zero'],
    [['-o', 'yaml'], 'smoke: --output "yaml" is not supported; use text or json'],
    [['--insecure-skip-tls-verify=false'], 'smoke: --insecure-skip-tls-verify takes no value'],
    [['extra'], 'smoke: unexpected argument "extra"'],
  ])('%j is refused: %s', (args, message) => {
    expect(() => parseSmokeArgs(args)).toThrow(message);
  });
});
