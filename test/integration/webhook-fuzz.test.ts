// Fuzzing the webhook server over TLS with random and mutated bodies (seeded, so a failure can be
// replayed with NLS_FUZZ_SEED). The server runs with its real lookups against the API server.
// Every answer must be well-formed: a v1 AdmissionReview response for the request's uid, or a
// 4xx JSON Status; and the server must still answer correctly afterwards (no crash, no hang).
import * as https from 'node:https';
import * as k8s from '@kubernetes/client-node';
import { installCRDs, kubeConfig, uniqueName } from '../support/cluster';
import { fuzzSeeds } from '../support/webhook/fuzz-seeds';
import { admissionReview, isWellFormedAnswer, post } from '../support/webhook/tls-client';
import { type WebhookEnvironment, crdDirectory, startWebhookEnvironment } from '../support/webhook/webhook-env';
import { seededRandom } from '../support/seeded-random';

const admin = kubeConfig();
const bodies = Number(process.env.NLS_FUZZ_BODIES ?? 5000);
const seed = Number(process.env.NLS_FUZZ_SEED ?? Date.now() % 1_000_000);
const timeLimitMs = 150_000;

let env: WebhookEnvironment;
let ca: string;

beforeAll(async () => {
  await installCRDs([crdDirectory]);
  env = await startWebhookEnvironment({ kubeConfig: admin, id: uniqueName('wh-fuzz'), register: false });
  const secret = await admin.makeApiClient(k8s.CoreV1Api).readNamespacedSecret({ namespace: env.operatorNamespace, name: env.secretName });
  ca = Buffer.from(secret.data!['ca.crt'], 'base64').toString('utf8');
});
afterAll(() => env?.close());

const paths = ['/validate-llmmodel', '/mutate-llmmodel', '/validate-passthroughmodel', '/mutate-passthroughmodel', '/validate-agentdeployment', '/mutate-agentdeployment'];

interface Case {
  /** Which generator made it, for failure messages. */
  readonly label: string;
  readonly path: string;
  readonly body: string | Buffer;
  readonly method?: string;
  readonly headers?: Record<string, string>;
  readonly uid?: string;
}

function fuzzCases(count: number, rand: () => number): Case[] {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)];
  const namespace = env.operatorNamespace;
  const seeds = fuzzSeeds(namespace);
  const randomValue = (depth = 0): unknown => {
    const kinds = depth > 3 ? 5 : 8;
    switch (Math.floor(rand() * kinds)) {
      case 0: return null;
      case 1: return rand() < 0.5;
      case 2: return Math.floor(rand() * 2 ** 40) * (rand() < 0.5 ? -1 : 1);
      case 3: return pick(['', 'LLMModel', 'CREATE', '../../etc', '\u0000', '💥', 'x'.repeat(Math.floor(rand() * 5000)), 'https://u:p@host:0/']);
      case 4: return rand() * 1e308;
      case 5: return Array.from({ length: Math.floor(rand() * 4) }, () => randomValue(depth + 1));
      default: return Object.fromEntries(Array.from({ length: Math.floor(rand() * 4) }, () => [pick(['spec', 'metadata', 'name', 'kind', 'uid', '__proto__', 'constructor', 'model', 'provider']), randomValue(depth + 1)]));
    }
  };
  // Replaces or deletes one randomly chosen node of a JSON document.
  const mutate = (document: unknown): unknown => {
    if (typeof document !== 'object' || document === null) return randomValue();
    const copy = structuredClone(document) as Record<string, unknown>;
    let node: Record<string, unknown> = copy;
    for (let depth = 0; depth < 6; depth++) {
      const keys = Object.keys(node);
      if (keys.length === 0) break;
      const key = pick(keys);
      const child = node[key];
      if (typeof child === 'object' && child !== null && rand() < 0.7) {
        node = child as Record<string, unknown>;
        continue;
      }
      if (rand() < 0.3) delete node[key];
      else node[key] = randomValue();
      break;
    }
    return copy;
  };
  // Built as text: JSON.stringify itself would overflow the stack on such depth.
  const deepNesting = (depth: number) => {
    let open = '';
    let close = '';
    for (let i = 0; i < depth; i++) {
      open += i % 2 ? '[' : '{"n":';
      close = (i % 2 ? ']' : '}') + close;
    }
    return `${open}"bottom"${close}`;
  };

  const cases: Case[] = [];
  for (let i = 0; i < count; i++) {
    const object = pick(seeds);
    const path = rand() < 0.8 ? `/${pick(['validate', 'mutate'])}-${String(object.kind).toLowerCase()}` : pick(paths);
    const review = admissionReview(object, { operation: pick(['CREATE', 'UPDATE', 'CREATE', 'DELETE']), userInfo: { username: pick(['alice', '', 'system:admin']) } });
    const uid = (review.request as { uid: string }).uid;
    const roll = rand();
    if (roll < 0.45) {
      const mutated = mutate(review) as Record<string, unknown>;
      const request = mutated.request as { uid?: unknown } | undefined;
      cases.push({ label: 'mutated-review', path, body: JSON.stringify(mutated), uid: typeof request?.uid === 'string' ? request.uid : undefined });
    } else if (roll < 0.6) {
      const request = review.request as Record<string, unknown>;
      cases.push({ label: 'mutated-object', path, body: JSON.stringify({ ...review, request: { ...request, object: mutate(request.object) } }), uid });
    } else if (roll < 0.7) {
      cases.push({ label: 'random-json', path, body: JSON.stringify(randomValue()) });
    } else if (roll < 0.8) {
      const text = JSON.stringify(review);
      cases.push({ label: 'truncated', path, body: text.slice(0, Math.floor(rand() * text.length)) });
    } else if (roll < 0.85) {
      cases.push({ label: 'random-bytes', path, body: Buffer.from(Array.from({ length: Math.floor(rand() * 2048) }, () => Math.floor(rand() * 256))) });
    } else if (roll < 0.9) {
      cases.push({ label: 'http-level',
        path: pick([...paths, '/', '/validate-', '/mutate-llmmodel/../validate-llmmodel', '/%00', `/${'a'.repeat(4000)}`]),
        method: pick(['POST', 'GET', 'PUT', 'DELETE', 'OPTIONS']),
        headers: { 'Content-Type': pick(['application/json', 'text/plain', 'application/json; charset=utf-8', '']) },
        body: JSON.stringify(review),
      });
    } else if (roll < 0.95) {
      const request = review.request as Record<string, unknown>;
      const wrong: Record<string, unknown> = pick<Record<string, unknown>>([
        { ...review, apiVersion: 'admission.k8s.io/v1beta1' },
        { ...review, request: { ...request, kind: { group: 'apps', version: 'v1', kind: 'Deployment' } } },
        { ...review, request: { ...request, kind: { group: 'llm.nebari.dev', version: 'v1beta1', kind: object.kind } } },
        { ...review, request: { ...request, object: { ...object, metadata: { ...(object.metadata as object), deletionTimestamp: 'x' } } } },
      ]);
      cases.push({ label: 'wrong-kind-or-version', path, body: JSON.stringify(wrong), uid: wrong.apiVersion === 'admission.k8s.io/v1' ? uid : undefined });
    } else if (roll < 0.995) {
      const request = review.request as Record<string, unknown>;
      const text = JSON.stringify({ ...review, request: { ...request, object: { ...object, spec: 'DEEP' } } });
      cases.push({ label: 'deep-nesting', path, body: text.replace('"DEEP"', deepNesting(Math.floor(rand() * 20_000))), uid });
    } else {
      cases.push({ label: 'oversized', path, body: Buffer.alloc(9 * 1024 * 1024, 'x') });
    }
  }
  return cases;
}

describe('fuzzing the webhook server', () => {
  it(`answers ${bodies} random and mutated bodies well-formed, without crashing`, async () => {
    const rand = seededRandom(seed);
    const cases = fuzzCases(bodies, rand);
    const agent = new https.Agent({ keepAlive: true, maxSockets: 16 });
    const started = Date.now();
    const problems: string[] = [];
    const statuses = new Map<number, number>();
    let next = 0;
    const worker = async () => {
      while (next < cases.length && Date.now() - started < timeLimitMs) {
        const index = next++;
        const item = cases[index];
        try {
          const response = await post({ port: env.server.port, ca, agent, path: item.path, body: item.body, method: item.method, headers: item.headers, timeoutMs: 15_000 });
          statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
          if (!isWellFormedAnswer(response, item.uid)) problems.push(`case ${index} ${item.label} ${item.method ?? 'POST'} ${item.path.slice(0, 60)}: ${response.status} ${response.body.slice(0, 300)}`);
        } catch (error) {
          // A server may close the connection after refusing an oversized body mid-upload.
          if (Buffer.byteLength(item.body) <= 8 * 1024 * 1024) problems.push(`case ${index} ${item.label} ${item.path.slice(0, 60)}: ${(error as Error).message}`);
          else statuses.set(-1, (statuses.get(-1) ?? 0) + 1);
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    agent.destroy();
    const seconds = (Date.now() - started) / 1000;
    console.log(`fuzz seed ${seed}: ${next} bodies in ${seconds.toFixed(1)} s; answers by status ${JSON.stringify(Object.fromEntries(statuses))}`);
    expect(problems).toEqual([]);
    expect(next).toBeGreaterThanOrEqual(bodies);

    // Still alive and still correct.
    const review = admissionReview({ apiVersion: 'llm.nebari.dev/v1alpha1', kind: 'LLMModel', metadata: { name: 'after', namespace: env.operatorNamespace }, spec: { model: { name: 'm', source: 'huggingface' }, resources: { gpu: { count: 0 } }, access: { public: true } } });
    const response = await post({ port: env.server.port, ca, path: '/validate-llmmodel', body: JSON.stringify(review) });
    expect(JSON.parse(response.body).response).toMatchObject({ allowed: true });
  }, 240_000);
});
