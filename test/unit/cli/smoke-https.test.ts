// `nls smoke` end to end against a local HTTPS server on 127.0.0.1 standing in for the gateway:
// a CA and a certificate for the endpoint host names made here, reached only through --resolve
// (the names do not resolve) and trusted only through --cacert. The cluster side (models, host
// names, minting and revoking keys) is a small in-memory SmokeCluster; the integration of that
// side with a real API server is the key store's and the operator's own tests.
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { runSmoke, type SmokeCluster } from '../../../src/cli/gateway/smoke';
import type { SmokeModel } from '../../../src/cli/gateway/smoke-checks';
import { issueCertificateAuthority, issueServingCertificate } from '../../../src/webhook/certificates';

const EXTERNAL = 'llm.example.test';
const INTERNAL = 'llm-internal.example.test';
const TOKEN = 'eyJhbGciOiJSUzI1NiJ9.test.token';

const models: SmokeModel[] = [
  { kind: 'PassthroughModel', name: 'openai', modelIds: ['gpt-4o', 'gpt-4o-mini'], endpoints: ['external', 'internal'], answerCheck: 'POST /v1/chat/completions' },
  { kind: 'LLMModel', name: 'llama', modelIds: ['meta-llama/Llama-3.1-8B-Instruct'], endpoints: ['external'], answerCheck: 'POST /v1/chat/completions' },
];
const claude: SmokeModel = { kind: 'PassthroughModel', name: 'claude', modelIds: ['claude-haiku-4-5'], endpoints: ['external'], answerCheck: 'POST /anthropic/v1/messages' };

let server: https.Server;
let port: number;
let dir: string;
let caFile: string;
/** Bearers the stand-in gateway accepts. */
const accepted = new Set<string>([TOKEN]);
/** Every request: SNI, Host, method, path, bearer. */
const seen: { sni: string | false | null; host?: string; method?: string; path?: string; bearer?: string; body?: string; anthropicVersion?: string }[] = [];

beforeAll(async () => {
  const ca = issueCertificateAuthority({ commonName: 'smoke test gateway CA' });
  const leaf = issueServingCertificate({ ca, dnsNames: [EXTERNAL, INTERNAL] });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-smoke-'));
  caFile = path.join(dir, 'ca.pem');
  fs.writeFileSync(caFile, ca.certPem);
  server = https.createServer({ cert: leaf.certPem, key: leaf.keyPem }, (req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const bearer = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      const anthropicVersion = req.headers['anthropic-version'] as string | undefined;
      seen.push({ sni: (req.socket as TLSSocket).servername, host: req.headers.host, method: req.method, path: req.url, bearer, body, ...(anthropicVersion ? { anthropicVersion } : {}) });
      const send = (status: number, payload: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(typeof payload === 'string' ? payload : JSON.stringify(payload));
      };
      if (!accepted.has(bearer)) return send(401, 'Unauthorized');
      const ids = models.flatMap((m) => m.modelIds);
      if (req.method === 'GET' && req.url === '/v1/models') return send(200, { object: 'list', data: ids.map((id) => ({ id, object: 'model' })) });
      if (req.method === 'POST' && req.url === '/v1/chat/completions') {
        const model = (JSON.parse(body) as { model: string }).model;
        if (!ids.includes(model)) return send(404, 'no matching route');
        return send(200, { id: 'c1', object: 'chat.completion', model, choices: [{ index: 0, message: { role: 'assistant', content: 'p' }, finish_reason: 'length' }] });
      }
      if (req.method === 'POST' && req.url === '/anthropic/v1/messages') {
        if (!anthropicVersion) return send(400, { type: 'error', error: { type: 'invalid_request_error', message: 'anthropic-version: header is required' } });
        const model = (JSON.parse(body) as { model: string }).model;
        return send(200, { id: 'msg_1', type: 'message', role: 'assistant', model, content: [{ type: 'text', text: 'p' }], stop_reason: 'max_tokens' });
      }
      send(404, 'not found');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as net.AddressInfo).port;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  fs.rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  seen.length = 0;
});

/** The in-memory cluster: keys it mints are accepted by the stand-in gateway unless `rejected` names the model. */
function fakeCluster(opts: { rejected?: string[]; mintFails?: string[]; lateMs?: number; revokeFails?: boolean } = {}) {
  const minted: string[] = [];
  const revoked: string[] = [];
  let closed = false;
  const cluster: SmokeCluster = {
    models: async () => models,
    endpoints: async () => ({ external: { hostname: EXTERNAL, port }, internal: { hostname: INTERNAL, port } }),
    async mint(model, expiresAt) {
      if (opts.mintFails?.includes(model.name)) throw new Error(`LLMModel ns/${model.name} has not been processed by the operator yet`);
      // The shortest lifetime that outlasts the run: minutes, not days.
      expect(expiresAt.getTime() - Date.now()).toBeLessThan(10 * 60_000);
      const clientId = `${model.name}-smoke-${minted.length}`;
      const apiKey = `sk-${clientId}`;
      minted.push(clientId);
      // lateMs: the gateway learns of the key a moment after minting, as Envoy does.
      if (!opts.rejected?.includes(model.name)) setTimeout(() => accepted.add(apiKey), opts.lateMs ?? 0);
      return { clientId, apiKey };
    },
    async revoke(_model, clientId) {
      if (opts.revokeFails) throw new Error('secrets "llama-api-keys" is forbidden');
      revoked.push(clientId);
      accepted.delete(`sk-${clientId}`);
    },
    close: () => {
      closed = true;
    },
  };
  return { cluster, minted, revoked, closed: () => closed };
}

async function smoke(args: string[], cluster: SmokeCluster): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  const code = await runSmoke(args, (l) => lines.push(l), () => cluster);
  return { code, lines };
}

const resolveBoth = () => ['--resolve', `${EXTERNAL}:${port}:127.0.0.1`, '--resolve', `${INTERNAL}:${port}:127.0.0.1`];

test('every model and name passes through --resolve and --cacert; minted keys are revoked; exit 0', async () => {
  const fake = fakeCluster();
  const { code, lines } = await smoke([...resolveBoth(), '--cacert', caFile, '--token', TOKEN], fake.cluster);
  expect(lines.filter((l) => l.startsWith('error: '))).toEqual([]);
  expect(code).toBe(0);
  expect(lines[0]).toMatch(/^MODEL +MODEL NAME +ENDPOINT +CHECK +RESULT +STATUS +MS +DETAIL$/);
  expect(lines.filter((l) => / PASS /.test(l))).toHaveLength(10);
  expect(lines.at(-1)).toBe('10 checks: 10 passed, 0 failed, 0 skipped');
  // One key per model on the external endpoint, each revoked at the end.
  expect(fake.minted).toEqual(['openai-smoke-0', 'llama-smoke-1']);
  expect(fake.revoked).toEqual(fake.minted);
  expect(fake.closed()).toBe(true);
  // As a client: SNI and Host are the endpoint's name, the bearer its credential, a one-token chat.
  expect(new Set(seen.map((s) => s.sni))).toEqual(new Set([EXTERNAL, INTERNAL]));
  expect(seen.every((s) => s.host === `${s.sni}:${port}`)).toBe(true);
  expect(seen.filter((s) => s.sni === INTERNAL).every((s) => s.bearer === TOKEN)).toBe(true);
  expect(seen.filter((s) => s.sni === EXTERNAL).map((s) => s.bearer)).toEqual(expect.arrayContaining(['sk-openai-smoke-0', 'sk-llama-smoke-1']));
  expect(JSON.parse(seen.find((s) => s.method === 'POST')!.body!)).toEqual({ model: 'gpt-4o', messages: [{ role: 'user', content: 'ping' }], max_tokens: 1 });
});

test('a key the gateway rejects fails that model with the fix, the others pass; the key is still revoked; exit 1', async () => {
  const fake = fakeCluster({ rejected: ['llama'] });
  const { code, lines } = await smoke([...resolveBoth(), '--cacert', caFile, '--key-wait', '0s'], fake.cluster);
  expect(code).toBe(1);
  const failed = lines.filter((l) => / FAIL /.test(l));
  expect(failed).toHaveLength(2);
  for (const line of failed) {
    expect(line).toMatch(/^llama +meta-llama\/Llama-3.1-8B-Instruct +external /);
    expect(line).toContain("401 ");
    expect(line).toContain("fix: key not accepted: is the model's key Secret listed in the endpoint's SecurityPolicy");
  }
  // Without --token the internal endpoint is reported, not failed.
  expect(lines.filter((l) => l.includes('skipped: no --token'))).toHaveLength(4);
  expect(lines.at(-1)).toBe('10 checks: 4 passed, 2 failed, 4 skipped');
  expect(fake.revoked).toEqual(fake.minted);
});

test('--key uses the given key instead of minting; -o json prints the rows', async () => {
  accepted.add('sk-given');
  const fake = fakeCluster();
  const { code, lines } = await smoke([...resolveBoth(), '--cacert', caFile, '--key', 'llama=sk-given', '--model', 'llama', '-o', 'json'], fake.cluster);
  expect(code).toBe(0);
  expect(fake.minted).toEqual([]);
  const rows = JSON.parse(lines.join('\n')) as { model: string; endpoint: string; check: string; result: string; status: string; latencyMs: number }[];
  expect(rows.map((r) => [r.model, r.endpoint, r.check, r.result, r.status])).toEqual([
    ['llama', 'external', 'GET /v1/models', 'pass', '200'],
    ['llama', 'external', 'POST /v1/chat/completions', 'pass', '200'],
  ]);
  expect(rows.every((r) => typeof r.latencyMs === 'number')).toBe(true);
  expect(seen.map((s) => s.bearer)).toEqual(['sk-given', 'sk-given']);
});

test('without --cacert the gateway certificate is not trusted: every check fails naming --cacert; keys are revoked anyway', async () => {
  const fake = fakeCluster();
  const { code, lines } = await smoke([...resolveBoth(), '--model', 'openai', '--token', TOKEN, '--key-wait', '0s'], fake.cluster);
  expect(code).toBe(1);
  const failed = lines.filter((l) => / FAIL /.test(l));
  expect(failed).toHaveLength(8);
  expect(failed.every((l) => l.includes('fix: the gateway\'s certificate is not trusted here: pass --cacert'))).toBe(true);
  expect(fake.revoked).toEqual(['openai-smoke-0']);
});

test('an Anthropic model is asked with an Anthropic message under /anthropic, with the version header', async () => {
  models.push(claude);
  try {
    const { code, lines } = await smoke([...resolveBoth(), '--cacert', caFile, '--model', 'claude', '--key-wait', '0s'], fakeCluster().cluster);
    expect({ code, lines }).toMatchObject({ code: 0 });
    expect(lines.filter((l) => / PASS /.test(l)).map((l) => l.split(/ +/)[3] + ' ' + l.split(/ +/)[4])).toEqual(['GET /v1/models', 'POST /anthropic/v1/messages']);
    expect(seen.map((s) => [s.path, s.anthropicVersion])).toEqual([['/v1/models', undefined], ['/anthropic/v1/messages', '2023-06-01']]);
    expect(JSON.parse(seen[1].body ?? '')).toEqual({ model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'ping' }], max_tokens: 1 });
  } finally {
    models.pop();
  }
});

test('--insecure-skip-tls-verify connects without the CA', async () => {
  const { code } = await smoke([...resolveBoth(), '--model', 'llama', '--insecure-skip-tls-verify', '--key-wait', '0s'], fakeCluster().cluster);
  expect(code).toBe(0);
});

test('a model whose key cannot be minted fails without a request; the rest goes on', async () => {
  const fake = fakeCluster({ mintFails: ['llama'] });
  const { code, lines } = await smoke([...resolveBoth(), '--cacert', caFile], fake.cluster);
  expect(code).toBe(1);
  const failed = lines.filter((l) => / FAIL /.test(l));
  expect(failed).toHaveLength(2);
  expect(failed[0]).toMatch(/^llama .*no API key: minting one failed \(LLMModel ns\/llama has not been processed by the operator yet\); fix: pass --key MODEL=KEY/);
  expect(fake.revoked).toEqual(['openai-smoke-0']);
});

test('a freshly minted key is retried until the gateway accepts it (within --key-wait)', async () => {
  const fake = fakeCluster({ lateMs: 500 });
  const { code, lines } = await smoke([...resolveBoth(), '--cacert', caFile, '--model', 'llama', '--key-wait', '10s'], fake.cluster);
  expect(code).toBe(0);
  expect(lines.filter((l) => / PASS /.test(l))).toHaveLength(2);
  expect(seen.map((s) => s.path)).toEqual(['/v1/models', '/v1/models', '/v1/chat/completions']);
});

test('a minted key that cannot be revoked is an error naming the command that revokes it; exit 1', async () => {
  const fake = fakeCluster({ revokeFails: true });
  const { code, lines } = await smoke([...resolveBoth(), '--cacert', caFile, '--model', 'llama'], fake.cluster);
  expect(code).toBe(1);
  expect(lines.filter((l) => / PASS /.test(l))).toHaveLength(2);
  expect(lines.at(-1)).toMatch(
    /^error: the key llama-smoke-0 minted for LLMModel nebari-llm-serving-system\/llama could not be revoked \(secrets "llama-api-keys" is forbidden\); it expires at \S+, or revoke it now: nls keys revoke --model llama --client-id llama-smoke-0 -n nebari-llm-serving-system$/,
  );
});

test('a request without an answer ends at --timeout', async () => {
  // A listener that accepts and never completes the TLS handshake.
  const sockets: net.Socket[] = [];
  const silent = net.createServer((socket) => void sockets.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const silentPort = (silent.address() as net.AddressInfo).port;
  try {
    const fake = fakeCluster();
    const cluster: SmokeCluster = { ...fake.cluster, endpoints: async () => ({ external: { hostname: EXTERNAL, port: silentPort }, internal: { hostname: INTERNAL, port: silentPort } }) };
    const started = Date.now();
    const { code, lines } = await smoke(['--resolve', `${EXTERNAL}:${silentPort}:127.0.0.1`, '--model', 'llama', '--timeout', '300ms', '--key-wait', '0s'], cluster);
    expect(code).toBe(1);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(lines.filter((l) => / FAIL +ETIMEDOUT /.test(l) && l.includes('fix: no answer within --timeout'))).toHaveLength(2);
    expect(fake.revoked).toEqual(fake.minted);
  } finally {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  }
});

test.each([
  [['--resolve', 'nonsense'], 'error: smoke: --resolve "nonsense" is not HOST:PORT:ADDRESS'],
  [['--model', 'typo'], 'error: smoke: no LLMModel or PassthroughModel "typo" in namespace nebari-llm-serving-system; check --model, --key and --namespace'],
  [['--key', 'typo=sk-x'], 'error: smoke: no LLMModel or PassthroughModel "typo"'],
  [['--cacert', '/nonexistent/ca.pem'], 'error: smoke: --cacert /nonexistent/ca.pem cannot be read (ENOENT); give the path of a readable file'],
])('bad arguments exit 2 and send nothing: %j', async (args, message) => {
  const fake = fakeCluster();
  const { code, lines } = await smoke(args, fake.cluster);
  expect(code).toBe(2);
  expect(lines[0]).toContain(message);
  expect(seen).toEqual([]);
  expect(fake.minted).toEqual([]);
});
