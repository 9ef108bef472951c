// The offline admission (src/admission) against the real thing: every case goes through
// `admit()` and through a real kube-apiserver with the CRDs and the real webhook server (by URL on
// 127.0.0.1). Verdicts must be equal: admitted or not; for a schema/CEL refusal the fields of the
// API server's causes; for a webhook refusal the webhook's message; for an admitted object the
// stored spec (defaults). Cases: the CRD table, the upstream and boundary objects, every example,
// the derived-name boundaries, webhook placement and reference cases, and seeded mutations of
// valid objects over every field of the schemas (NLS_DIFF_MUTATIONS, NLS_DIFF_SEED to explore).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { type AdmissionResult, admit } from '../../src/admission';
import { kindSchema } from '../../src/admission/admit';
import { denialMessage } from '../../src/webhook/verdict';
import { type JsonSchema, kindDefinition } from '../../src/api';
import { installCRDs, kubeConfig, uniqueName } from '../support/cluster';
import { repoRoot } from '../support/tools';
import { collectionPath, kubeRequest } from '../support/webhook/kube-raw';
import { fuzzSeeds } from '../support/webhook/fuzz-seeds';
import { type WebhookEnvironment, crdDirectory, createNamespace, selectorLabel, startWebhookEnvironment } from '../support/webhook/webhook-env';
import { ACCEPTED_HOSTNAMES, INVALID_CASES, type InvalidCase, OBJECTS_AT_BOUNDS, UPSTREAM_OBJECTS, agentDeployment, llmModel, passthroughModel } from './crds-cases';
import { seededRandom } from '../support/seeded-random';

type Obj = Record<string, unknown>;

interface Case {
  readonly source: string;
  readonly name: string;
  readonly object: Obj;
  /** Created first (for real); the case is then an UPDATE to `object`. */
  readonly before?: Obj;
  /** Namespace key: 'operator' (default) or 'team' (a watched agent namespace). */
  readonly where?: 'operator' | 'team';
  /** A case the webhook must refuse (crds-cases `by: 'webhook'`): what its message must contain. */
  readonly webhookRefusal?: readonly string[];
}

/** What one side concluded, in comparable form. */
interface Verdict {
  readonly admitted: boolean;
  readonly stage?: 'webhook' | 'schema';
  /** Schema/CEL refusal: the fields named, sorted, each once. */
  readonly fields?: string[];
  /** Webhook refusal: the message after "denied the request: ". */
  readonly message?: string;
  /** Admitted: the stored spec and the warnings returned. */
  readonly spec?: unknown;
  readonly warnings?: string[];
  /** For the failure report only. */
  readonly detail: string;
}

const admin = kubeConfig();
let env: WebhookEnvironment;
let team: string;
const plural = (kind: string) => kindDefinition(kind)?.plural ?? `${kind.toLowerCase()}s`;

/** Every example: examples/ (v1beta1) and their v1alpha1 forms in docs/v1alpha1-examples/. */
function exampleObjects(): Obj[] {
  return [path.join(repoRoot, 'examples'), path.join(repoRoot, 'docs', 'v1alpha1-examples')].flatMap(exampleObjectsIn);
}

function exampleObjectsIn(dir: string): Obj[] {
  const files = fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => /\.ya?ml$/.test(f)).sort();
  return files.flatMap((f) =>
    parseAllDocuments(fs.readFileSync(path.join(dir, f), 'utf8'))
      .map((d) => d.toJS() as Obj | null)
      .filter((o): o is Obj => !!o && typeof o.apiVersion === 'string' && o.apiVersion.startsWith('llm.nebari.dev/')),
  );
}

const valuePool: unknown[] = [
  '', ' ', 'a', 'A', 'x.y', 'a_b', '-a', 'a\n', ' a', 'https://h.example.com/v1', 'ftp://x', 'h:1', 'api.openai.com', 'us-east-1',
  '5Gi', '-5Gi', '0', '10m', '2024-10-21', 'x'.repeat(64), 0, 1, -1, 2, 65, 1.5, 70000, true, false, null, {}, [], ['a'], ['a', 'a'], { a: 1 },
];

/** Every property path of a schema below `spec` (list items as index 0), with its schema. */
function schemaPaths(schema: JsonSchema, at: Array<string | number> = []): Array<{ path: Array<string | number>; schema: JsonSchema }> {
  const out = at.length > 0 ? [{ path: at, schema }] : [];
  const props = schema.properties as Record<string, JsonSchema> | undefined;
  for (const [name, child] of Object.entries(props ?? {})) {
    if (at.length === 0 && name !== 'spec') continue;
    out.push(...schemaPaths(child, [...at, name]));
  }
  if (schema.items) out.push(...schemaPaths(schema.items as JsonSchema, [...at, 0]));
  return out;
}

function setPath(object: Obj, pathSteps: Array<string | number>, value: unknown): void {
  let node: Record<string | number, unknown> = object;
  for (let i = 0; i < pathSteps.length - 1; i++) {
    const step = pathSteps[i];
    const next = node[step];
    if (typeof next !== 'object' || next === null) node[step] = typeof pathSteps[i + 1] === 'number' ? [] : {};
    node = node[step] as Record<string | number, unknown>;
  }
  const last = pathSteps[pathSteps.length - 1];
  if (value === undefined) delete node[last];
  else node[last] = value;
}

/** Valid objects changed at one or two schema fields each, to any value or a value of the field's enum. */
function mutationCases(seeds: Obj[], count: number, seed: number): Case[] {
  const rand = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)];
  const cases: Case[] = [];
  for (let i = 0; i < count; i++) {
    const original = pick(seeds);
    const base = structuredClone(original);
    const def = kindDefinition(String(base.kind))!;
    // The schema of the version the seed is written in.
    const paths = schemaPaths(kindSchema(def, String(base.apiVersion).split('/')[1] as 'v1alpha1' | 'v1beta1'));
    const changes: string[] = [];
    for (let n = rand() < 0.3 ? 2 : 1; n > 0; n--) {
      const target = pick(paths);
      const enumValues = target.schema.enum as unknown[] | undefined;
      const value = rand() < 0.15 ? undefined : enumValues && rand() < 0.5 ? pick(enumValues) : structuredClone(pick(valuePool));
      // Now and then a field the schema does not declare, which the API server prunes.
      if (rand() < 0.1 && target.schema.type === 'object' && target.schema.properties) {
        setPath(base, [...target.path, 'undeclaredField'], 'x');
        changes.push(`${target.path.join('.')}.undeclaredField="x"`);
        continue;
      }
      setPath(base, target.path, value);
      changes.push(`${target.path.join('.')}=${value === undefined ? '<deleted>' : JSON.stringify(value)}`);
    }
    const name = `mut-${seed}-${i}`;
    base.metadata = { name };
    // Every fourth case is an UPDATE of the valid object it was made from (transition rules).
    const before = i % 4 === 3 ? { ...structuredClone(original), metadata: { name } } : undefined;
    cases.push({ source: before ? 'mutation (update)' : 'mutation', name: `#${i} ${String(base.kind)} ${changes.join(', ')}`, object: base, before });
  }
  return cases;
}

function invalidCase(c: InvalidCase): Case {
  return { source: 'crds-cases', name: c.name, object: c.object, before: c.before, webhookRefusal: c.by === 'webhook' ? c.expect : undefined };
}

/** The case table, in two phases: models first (empty cluster), then what needs models to exist. */
function casesWithoutModels(): Case[] {
  const cases: Case[] = [];
  for (const c of INVALID_CASES) if (c.object.kind !== 'AgentDeployment') cases.push(invalidCase(c));
  for (const c of [...UPSTREAM_OBJECTS, ...OBJECTS_AT_BOUNDS]) if (c.object.kind !== 'AgentDeployment') cases.push({ source: 'crds-cases', name: c.name, object: c.object });
  ACCEPTED_HOSTNAMES.forEach((h, i) => cases.push({ source: 'crds-cases', name: `accepted hostname ${h}`, object: passthroughModel(`accepted-${i}`, { provider: { hostname: h } }) }));
  for (const o of exampleObjects()) if (o.kind !== 'AgentDeployment') cases.push({ source: 'examples', name: `example ${String(o.kind)} ${String((o.metadata as Obj).name)}`, object: o });
  // Derived names: the boundaries of the LLMModel name rule (Service names are DNS-1035 labels).
  const names = ['a', 'llama-3-1-8b', 'llama-3.1-8b', '3b-model', 'qwen.3', 'm.', 'a-', 'A', `l${'x'.repeat(61)}`, `l${'x'.repeat(62)}`, `l${'x'.repeat(63)}`];
  for (const name of names) cases.push({ source: 'derived-names', name: `LLMModel named ${name}`, object: llmModel(name) });
  for (const name of [`l${'x'.repeat(63)}`, `l${'-x'.repeat(126)}`, `l${'x'.repeat(253)}`]) {
    cases.push({ source: 'derived-names', name: `LLMModel named ${name.length} characters with a subdomain`, object: llmModel(name, { endpoints: { external: { subdomain: 'short' } } }) });
  }
  // Webhook: placement and rules the schema cannot express.
  cases.push({ source: 'webhook', name: 'LLMModel outside the operator namespace', object: llmModel('elsewhere'), where: 'team' });
  cases.push({ source: 'webhook', name: 'PassthroughModel outside the operator namespace', object: passthroughModel('elsewhere'), where: 'team' });
  cases.push({ source: 'webhook', name: 'duplicate declared ids', object: passthroughModel('dup-ids', { models: { declared: ['a', 'b', 'a'] } }) });
  cases.push({ source: 'webhook', name: 'blank declared id', object: passthroughModel('blank-id', { models: { declared: ['  '] } }) });
  cases.push({ source: 'webhook', name: 'subdomain too long from a 64-character name', object: llmModel(`s${'x'.repeat(63)}`, { endpoints: { external: { subdomain: 'x'.repeat(64) } } }) });
  cases.push({ source: 'webhook', name: 'upper-case subdomain', object: llmModel('upper-sub', { endpoints: { external: { subdomain: 'Upper' } } }) });
  cases.push({ source: 'webhook', name: 'emptyDir with preload (a warning only)', object: llmModel('scratch', { model: { storage: { type: 'emptyDir' }, preload: true } }) });
  cases.push({ source: 'webhook', name: 'LLMModel without a spec', object: { apiVersion: 'llm.nebari.dev/v1alpha1', kind: 'LLMModel', metadata: { name: 'no-spec' } } });
  cases.push({ source: 'webhook', name: 'Bedrock with a non-AWS proxy host', object: passthroughModel('bedrock-proxy2', { provider: { hostname: 'proxy.corp.example', credentialSecretName: null, backend: { type: 'Bedrock', bedrock: { region: 'eu-west-1' } } } }) });
  // Metadata the API server validates itself.
  const withMetadata = (name: string, metadata: Obj) => ({ ...llmModel(name), metadata: { name, ...metadata } });
  cases.push({ source: 'metadata', name: 'label key with a space', object: withMetadata('lbl-key', { labels: { 'bad key': 'x' } }) });
  cases.push({ source: 'metadata', name: 'label value with a slash', object: withMetadata('lbl-value', { labels: { app: 'a/b' } }) });
  cases.push({ source: 'metadata', name: 'label value of 64 characters', object: withMetadata('lbl-long', { labels: { app: 'v'.repeat(64) } }) });
  cases.push({ source: 'metadata', name: 'prefixed label and annotation keys', object: withMetadata('lbl-ok', { labels: { 'example.com/team': 'ml', empty: '' }, annotations: { 'example.com/note': 'any text at all' } }) });
  cases.push({ source: 'metadata', name: 'annotation key with an upper-case prefix', object: withMetadata('ann-key', { annotations: { 'Example.com/x': 'y' } }) });
  cases.push({ source: 'metadata', name: 'annotation key with two slashes', object: withMetadata('ann-slash', { annotations: { 'a/b/c': 'y' } }) });
  cases.push({ source: 'metadata', name: 'name with upper case', object: withMetadata('Upper', {}) });
  // The webhook-admission test's objects.
  cases.push({ source: 'webhook', name: 'Anthropic host name defaulted', object: passthroughModel('claude', { provider: { hostname: null, backend: { type: 'Anthropic' } } }) });
  cases.push({ source: 'webhook', name: 'host name label over 63 characters', object: passthroughModel('longlabel', { provider: { hostname: `${'a'.repeat(64)}.example.com` } }) });
  cases.push({ source: 'webhook', name: 'upper-case host name with a trailing dot (a warning)', object: passthroughModel('upper', { provider: { hostname: 'API.OpenAI.com.' } }) });
  cases.push({ source: 'webhook', name: 'port 80 (a warning)', object: passthroughModel('port80', { provider: { port: 80 } }) });
  // The webhook-fuzz seeds, unchanged.
  for (const seed of fuzzSeeds('')) if (seed.kind !== 'AgentDeployment') cases.push({ source: 'webhook-fuzz seeds', name: `fuzz seed ${String(seed.kind)}`, object: seed });
  return cases;
}

function casesWithModels(): Case[] {
  const cases: Case[] = [];
  for (const c of INVALID_CASES) if (c.object.kind === 'AgentDeployment') cases.push(invalidCase(c));
  for (const c of OBJECTS_AT_BOUNDS) if (c.object.kind === 'AgentDeployment') cases.push({ source: 'crds-cases', name: c.name, object: c.object });
  for (const o of exampleObjects()) if (o.kind === 'AgentDeployment') cases.push({ source: 'examples', name: `example AgentDeployment ${String((o.metadata as Obj).name)}`, object: o });
  cases.push({ source: 'webhook', name: 'agent in the watched team namespace referencing a model there that does not exist', object: agentDeployment('team-agent'), where: 'team' });
  cases.push({ source: 'webhook', name: 'agent referencing a missing LLMModel', object: agentDeployment('missing-ref', { model: { modelRef: { name: 'nope' } } }) });
  cases.push({ source: 'webhook', name: 'agent referencing a PassthroughModel id it does not declare', object: agentDeployment('undeclared', { model: { modelRef: { kind: 'PassthroughModel', name: 'openai', modelName: 'not-there' } } }) });
  cases.push({ source: 'webhook', name: 'agent overrides outside the allow-list', object: agentDeployment('bad-override', { provider: { overrides: { workload: { podSecurityContext: { privileged: true } } } } }) });
  cases.push({ source: 'webhook', name: 'LLMModel sharing a PassthroughModel name', object: llmModel('openai') });
  cases.push({ source: 'webhook', name: 'PassthroughModel sharing an LLMModel name', object: passthroughModel('qwen3-8b') });
  const external = { modelRef: null, externalAPI: { type: 'custom', baseURL: 'https://llm.example.com/v1', modelName: 'm' } };
  cases.push({ source: 'webhook', name: 'external API URL with port 0', object: agentDeployment('badport', { model: { ...external, externalAPI: { ...external.externalAPI, baseURL: 'http://llm.example.com:0/v1' } } }), where: 'team' });
  const overrides = { workload: { podSecurityContext: { runAsNonRoot: true } }, container: { securityContext: { capabilities: { drop: ['ALL'] } } } };
  cases.push({ source: 'webhook', name: 'hardening overrides', object: agentDeployment('hardened', { model: external, provider: { overrides } }), where: 'team' });
  cases.push({ source: 'webhook', name: 'privileged override', object: agentDeployment('privileged', { model: external, provider: { overrides: { container: { securityContext: { privileged: true } } } } }), where: 'team' });
  cases.push({ source: 'webhook', name: 'added capabilities', object: agentDeployment('caps', { model: external, provider: { overrides: { container: { securityContext: { capabilities: { add: ['NET_ADMIN'] } } } } } }), where: 'team' });
  cases.push({ source: 'webhook', name: 'external API without credentials (a warning)', object: agentDeployment('nokey', { model: { modelRef: null, externalAPI: { type: 'openai', baseURL: 'https://api.openai.com/v1', modelName: 'gpt-4o' } } }), where: 'team' });
  cases.push({ source: 'webhook', name: 'job agent with a port (a warning)', object: agentDeployment('job-port', { lifecycle: 'job', port: 9000 }) });
  for (const seed of fuzzSeeds('')) if (seed.kind === 'AgentDeployment') cases.push({ source: 'webhook-fuzz seeds', name: 'fuzz seed AgentDeployment', object: seed });
  return cases;
}

function namespaceOf(c: Case): string {
  return c.where === 'team' ? team : env.operatorNamespace;
}

function placed(object: Obj, namespace: string): Obj {
  return { ...object, metadata: { ...(object.metadata as Obj), namespace } };
}

/** Node reads header values as Latin-1; the API server writes warnings in UTF-8 (e.g. '×'). */
const utf8 = (header: string) => Buffer.from(header, 'latin1').toString('utf8');

async function serverVerdict(c: Case): Promise<Verdict> {
  const namespace = namespaceOf(c);
  const object = placed(c.object, namespace);
  const name = String((object.metadata as Obj).name);
  // The request goes to the version the object is written in, as kubectl sends it.
  const collection = collectionPath(namespace, plural(String(object.kind)), String(object.apiVersion).split('/')[1]);
  let response;
  if (c.before) {
    const created = await kubeRequest(admin, 'POST', collection, placed(c.before, namespace));
    if (created.status !== 201) throw new Error(`case ${c.name}: creating the old object failed: ${JSON.stringify(created.body)}`);
    const resourceVersion = (created.body.metadata as Obj).resourceVersion;
    response = await kubeRequest(admin, 'PUT', `${collection}/${name}?dryRun=All`, { ...object, metadata: { ...(object.metadata as Obj), resourceVersion } });
    await kubeRequest(admin, 'DELETE', `${collection}/${name}`);
  } else {
    response = await kubeRequest(admin, 'POST', `${collection}?dryRun=All`, object);
  }
  const body = response.body as { message?: string; spec?: unknown; details?: { causes?: Array<{ field?: string; message?: string }> } };
  if (response.status === 200 || response.status === 201) return { admitted: true, spec: body.spec, warnings: response.warnings.map(utf8).sort(), detail: `admitted (${response.status})` };
  const message = String(body.message ?? '');
  const denied = /admission webhook "[^"]+" denied the request: ([\s\S]*)$/.exec(message);
  if (denied) return { admitted: false, stage: 'webhook', message: denied[1], detail: `${response.status} ${message}` };
  const causes = body.details?.causes ?? [];
  const fields = [...new Set(causes.map((cause) => (cause.field === '<nil>' || cause.field === undefined ? '' : cause.field)))].sort();
  return { admitted: false, stage: 'schema', fields, detail: `${response.status} ${message}` };
}

async function offlineVerdict(c: Case, cluster: Obj[]): Promise<{ verdict: Verdict; result: AdmissionResult }> {
  const namespace = namespaceOf(c);
  const context = { operatorNamespace: env.operatorNamespace, agentNamespaces: [team], objects: cluster };
  const result = await admit(placed(c.object, namespace), context, c.before ? placed(c.before, namespace) : undefined);
  // The provider's refusals come after admission (the API server stores the object, the operator
  // reports BuildFailed): the admission verdict is the one without them.
  const problems = result.problems.filter((p) => p.source !== 'provider');
  const text = problems.map((p) => (p.field ? `${p.field}: ${p.message}` : p.message)).join(' | ');
  if (problems.length === 0) return { verdict: { admitted: true, spec: result.object.spec, warnings: [...result.warnings].sort(), detail: 'admitted' }, result };
  if (problems.every((p) => p.source === 'webhook')) {
    return { verdict: { admitted: false, stage: 'webhook', message: denialMessage(problems.map((p) => p.message)), detail: text }, result };
  }
  return { verdict: { admitted: false, stage: 'schema', fields: [...new Set(problems.map((p) => p.field))].sort(), detail: text }, result };
}

/** JSON with keys sorted, so that key order (which the API server does not keep) does not count. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.keys(value).sort().map((k) => [k, canonical((value as Obj)[k])]));
}
const comparable = ({ detail: _detail, ...rest }: Verdict) => JSON.stringify(canonical(rest));

const disagreements: string[] = [];
const counts = new Map<string, number>();

async function compare(cases: Case[], cluster: Obj[]): Promise<void> {
  for (const c of cases) {
    counts.set(c.source, (counts.get(c.source) ?? 0) + 1);
    const server = await serverVerdict(c);
    const { verdict: offline } = await offlineVerdict(c, cluster);
    if (comparable(server) !== comparable(offline)) {
      disagreements.push(`[${c.source}] ${c.name}\n  API server: ${comparable(server)}\n    ${server.detail}\n  offline:    ${comparable(offline)}\n    ${offline.detail}`);
    }
    if (c.webhookRefusal && (server.stage !== 'webhook' || !c.webhookRefusal.every((text) => server.message?.includes(text)))) {
      disagreements.push(`[${c.source}] ${c.name}\n  the webhook must refuse it with ${JSON.stringify(c.webhookRefusal)}; API server: ${server.detail}`);
    }
  }
}

beforeAll(async () => {
  await installCRDs([crdDirectory]);
  const id = uniqueName('adm-diff');
  env = await startWebhookEnvironment({ kubeConfig: admin, id });
  team = `${id}-team`;
  await createNamespace(admin, team, { [selectorLabel]: id });
}, 120_000);
afterAll(() => env?.close());

test('the offline admission and the API server with the webhooks agree on every case', async () => {
  const mutations = Number(process.env.NLS_DIFF_MUTATIONS ?? 220);
  const seed = Number(process.env.NLS_DIFF_SEED ?? 15);
  const valid = [llmModel('seed'), passthroughModel('seed'), ...exampleObjects().filter((o) => o.kind !== 'AgentDeployment')];
  await compare([...casesWithoutModels(), ...mutationCases(valid, mutations, seed)], []);

  // The example models become the cluster state the AgentDeployment cases reference.
  // Each example exists in both versions under one name: the first (v1beta1, examples/<kind>/) is created.
  const seen = new Set<string>();
  const fixtures = exampleObjects()
    .filter((o) => o.kind !== 'AgentDeployment')
    .filter((o) => {
      const key = `${String(o.kind)}/${String((o.metadata as Obj).name)}`;
      return !seen.has(key) && seen.add(key) !== undefined;
    })
    .map((o) => placed(o, env.operatorNamespace));
  for (const f of fixtures) {
    const created = await kubeRequest(admin, 'POST', collectionPath(env.operatorNamespace, plural(String(f.kind)), String(f.apiVersion).split('/')[1]), f);
    if (created.status !== 201) throw new Error(`fixture ${String(f.kind)}: ${JSON.stringify(created.body)}`);
  }
  const agents = exampleObjects().filter((o) => o.kind === 'AgentDeployment');
  await compare([...casesWithModels(), ...mutationCases(agents, Math.round(mutations / 4), seed + 1)], fixtures);

  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  console.log(`admission differential: ${total} cases (${[...counts].map(([s, n]) => `${s} ${n}`).join(', ')}), ${disagreements.length} disagreement(s)`);
  if (disagreements.length > 0) console.log(disagreements.join('\n\n'));
  expect(total).toBeGreaterThanOrEqual(300);
  expect(disagreements).toEqual([]);
}, 600_000);
