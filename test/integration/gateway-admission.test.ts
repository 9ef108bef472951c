// Admission conformance of the gateway translation (the upstream pack's TestGatewayAdmission,
// broader): every object generated for a matrix of model specs is applied server-side to a real
// kube-apiserver loaded with released upstream CRDs, read back, and compared with what was sent.
// A field pruned, defaulted or rewritten by the API server would mean the upstream schema does
// not say what the translator thinks, so any difference fails the pinned sets. The newest
// upstream CRDs are checked the same way; their differences must be exactly the documented ones
// (docs/compatibility-gateway.md).
// The matrix's context has per-key quotas and gateway tracing on, so the quota and tracing
// settings of the policies and the route costs are checked too.
// Each CRD set gets a private API server (no garbage collector: owner uids need not exist, and
// no other test file sees these CRDs).
import * as path from 'path';
import { applyObject, getObject, installCRDs, startControlPlane, upstreamCrdDir, type ControlPlane } from '../support/cluster';
import { desiredGatewayObjects } from '../../src/translate/gateway';
import type { GeneratedGatewayObject } from '../../src/translate/gateway';
import { caseContext, MATRIX_NAMESPACE, modelMatrix } from '../unit/translate/gateway/model-matrix';
import { kubeMinor } from '../support/tools';
import { NEWEST_KUBERNETES_MINOR } from '../../src/kubernetes-versions';

interface CrdSet {
  readonly name: string;
  readonly dirs: readonly string[];
  /** Differences between sent and stored objects this CRD set is known (and documented) to cause. */
  readonly knownDifferences: readonly string[];
}

const PINNED_BASE = ['envoy-ai-gateway/v1.1.0', 'envoy-gateway/v1.8.1', 'gateway-api-inference-extension/v1.0.2'];
const NEWEST_BASE = ['envoy-ai-gateway/v1.1.0', 'envoy-gateway/v1.9.0', 'gateway-api-inference-extension/v1.6.0'];
// Inference Extension 1.6.0 added spec.appProtocol with default "http"; 1.0.2 would prune it.
const NEWEST_DIFFERENCES = ['InferencePool spec.appProtocol: added "http"'];

const crdSets: readonly CrdSet[] = [
  { name: 'pinned, Gateway API 1.5.1 standard', dirs: [...PINNED_BASE, 'gateway-api/v1.5.1/standard'], knownDifferences: [] },
  { name: 'pinned, Gateway API 1.5.1 experimental', dirs: [...PINNED_BASE, 'gateway-api/v1.5.1/experimental'], knownDifferences: [] },
  { name: 'newest, Envoy Gateway 1.9.0 + Gateway API 1.6.1 standard', dirs: [...NEWEST_BASE, 'gateway-api/v1.6.1/standard'], knownDifferences: NEWEST_DIFFERENCES },
  { name: 'newest, Envoy Gateway 1.9.0 + Gateway API 1.6.1 experimental', dirs: [...NEWEST_BASE, 'gateway-api/v1.6.1/experimental'], knownDifferences: NEWEST_DIFFERENCES },
];

type Json = unknown;

/** Paths where `stored` differs from `sent`, as `<path>: added|removed|changed …`. */
function differences(sent: Json, stored: Json, at = ''): string[] {
  if (sent === stored) return [];
  const isObject = (v: Json): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (Array.isArray(sent) && Array.isArray(stored)) {
    if (sent.length !== stored.length) return [`${at}: length ${sent.length} -> ${stored.length}`];
    return sent.flatMap((item, i) => differences(item, stored[i], `${at}[${i}]`));
  }
  if (isObject(sent) && isObject(stored)) {
    const keys = [...new Set([...Object.keys(sent), ...Object.keys(stored)])].sort();
    return keys.flatMap((k) => {
      const p = at ? `${at}.${k}` : k;
      if (!(k in stored)) return [`${p}: removed`];
      if (!(k in sent)) return [`${p}: added ${JSON.stringify(stored[k])}`];
      return differences(sent[k], stored[k], p);
    });
  }
  return [`${at}: changed ${JSON.stringify(sent)} -> ${JSON.stringify(stored)}`];
}

/** What was sent vs what is stored, restricted to what the translator controls. */
function compare(sent: GeneratedGatewayObject, stored: Record<string, Json> & { metadata: Record<string, Json> }): string[] {
  const pick = (o: { apiVersion: Json; kind: Json; metadata: Record<string, Json>; spec?: Json }) => ({
    apiVersion: o.apiVersion,
    kind: o.kind,
    metadata: { name: o.metadata.name, namespace: o.metadata.namespace, labels: o.metadata.labels, ownerReferences: o.metadata.ownerReferences },
    spec: o.spec,
  });
  return differences(pick(sent as never), pick(stored as never)).map((d) => `${sent.kind} ${d}`);
}

const translations = modelMatrix.map((c) => ({ ...c, translation: desiredGatewayObjects(c.model, caseContext(c)) }));
const allObjects = translations.flatMap((t) => t.translation.objects);

test('the matrix has at least 25 model specs and all of them translate', () => {
  expect(modelMatrix.length).toBeGreaterThanOrEqual(25);
  expect(translations.filter((t) => t.translation.errors.length > 0).map((t) => [t.why, t.translation.errors])).toEqual([]);
  const kinds = new Set(allObjects.map((o) => o.kind));
  expect([...kinds].sort()).toEqual(['AIGatewayRoute', 'AIServiceBackend', 'Backend', 'BackendSecurityPolicy', 'BackendTLSPolicy', 'BackendTrafficPolicy', 'InferencePool', 'SecurityPolicy']);
});

// On an older Kubernetes minor (the version matrix) the pinned sets, which the chart targets; the
// newest upstream CRDs are compared on the newest minor.
const setsOnThisMinor = kubeMinor() === NEWEST_KUBERNETES_MINOR ? crdSets : crdSets.filter((set) => set.name.startsWith('pinned'));

describe.each(setsOnThisMinor)('upstream CRDs: $name', (set) => {
  let plane: ControlPlane;
  const stored = new Map<GeneratedGatewayObject, Record<string, Json> & { metadata: Record<string, Json>; spec: Record<string, Json> }>();
  const applyFailures: string[] = [];

  beforeAll(async () => {
    plane = await startControlPlane({ mode: 'apiserver' });
    const kc = plane.kubeConfig();
    await installCRDs(set.dirs.map((d) => path.join(upstreamCrdDir(), d)), kc);
    await applyObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: MATRIX_NAMESPACE } }, { kubeConfig: kc });
    // Objects go in the translation's order, as the operator applies them.
    for (const object of allObjects) {
      try {
        await applyObject(object, { kubeConfig: kc, fieldManager: 'nebari-llm-serving' });
        const back = await getObject(object as never, kc);
        if (back) stored.set(object, back);
        else applyFailures.push(`${object.kind}/${object.metadata.name}: not found after apply`);
      } catch (err) {
        const body = (err as { body?: string }).body ?? String(err);
        applyFailures.push(`${object.kind}/${object.metadata.name}: ${body}`);
      }
    }
  }, 240000);

  afterAll(async () => {
    await plane?.stop();
  });

  test('the API server admits every generated object', () => {
    expect(applyFailures).toEqual([]);
    expect(stored.size).toBe(allObjects.length);
    console.log(`${set.name}: ${stored.size} objects from ${modelMatrix.length} models admitted`);
  });

  test(set.knownDifferences.length === 0 ? 'every object reads back deep-equal (nothing pruned, defaulted or rewritten)' : 'objects read back deep-equal except for the documented differences', () => {
    const found = new Set<string>();
    const unexpected: string[] = [];
    for (const [sent, back] of stored) {
      for (const d of compare(sent, back)) {
        if (set.knownDifferences.includes(d)) found.add(d);
        else unexpected.push(`${sent.metadata.name}: ${d}`);
      }
    }
    if (found.size > 0) console.log(`${set.name}: documented differences seen: ${[...found].join('; ')}`);
    expect(unexpected).toEqual([]);
    expect([...found].sort()).toEqual([...set.knownDifferences].sort());
  });

  test('control: the comparison sees what the API server defaults, and apply refuses fields the schema lacks', async () => {
    const kc = plane.kubeConfig();
    type RouteShape = { metadata: { name: string }; spec: { rules: Array<Record<string, unknown> & { backendRefs: Array<Record<string, unknown>> }> } };
    const route = allObjects.find((o) => o.kind === 'AIGatewayRoute' && o.metadata.name === 'openai-external');
    const defaults = structuredClone(route) as unknown as RouteShape;
    defaults.metadata.name = 'control-defaults';
    delete defaults.spec.rules[0].modelsOwnedBy;
    delete defaults.spec.rules[0].backendRefs[0].weight;
    await applyObject(defaults, { kubeConfig: kc, fieldManager: 'nebari-llm-serving' });
    const back = await getObject(defaults as never, kc);
    expect(back).toBeDefined();
    expect(compare(defaults as never, back as never)).toEqual([
      'AIGatewayRoute spec.rules[0].backendRefs[0].weight: added 1',
      'AIGatewayRoute spec.rules[0].modelsOwnedBy: added "Envoy AI Gateway"',
    ]);
    // Server-side apply builds a typed patch from the schema: an unknown field is an error, not
    // silently pruned, so every object admitted above has only fields the CRD declares.
    const unknown = structuredClone(route) as unknown as RouteShape;
    unknown.metadata.name = 'control-unknown-field';
    unknown.spec.rules[0].notAField = true;
    await expect(applyObject(unknown, { kubeConfig: kc, fieldManager: 'nebari-llm-serving' })).rejects.toThrow(/\.spec\.rules\[0\]\.notAField: field not declared in schema/);
  });

  test('schema.prefix is stored as /api/v1 for pathPrefix /api/v1; Bedrock has no prefix', () => {
    const backends = [...stored.values()].filter((o) => o.kind === 'AIServiceBackend');
    const byName = new Map(backends.map((b) => [b.metadata.name, b.spec.schema]));
    expect(byName.get('openrouter')).toEqual({ name: 'OpenAI', prefix: '/api/v1' });
    expect(byName.get('openai')).toEqual({ name: 'OpenAI', prefix: '/v1' });
    expect(byName.get('bedrock')).toEqual({ name: 'AWSBedrock' });
    expect(byName.get('deepseek')).toEqual({ name: 'OpenAI', prefix: '/' });
  });

  test('applying everything again changes nothing (no server-side apply drift)', async () => {
    const kc = plane.kubeConfig();
    const changed: string[] = [];
    for (const [object, before] of stored) {
      const after = await applyObject<{ metadata: { resourceVersion: string } }>(object, { kubeConfig: kc, fieldManager: 'nebari-llm-serving' });
      if (after.metadata.resourceVersion !== before.metadata.resourceVersion) changed.push(`${object.kind}/${object.metadata.name}`);
    }
    expect(changed).toEqual([]);
  }, 120000);

  test('per-key quotas: every external route stores its token cost, and each model has a Global policy with a rule per key, response cost from AI Gateway metadata', () => {
    const values = [...stored.values()];
    const policies = values.filter((o) => o.kind === 'BackendTrafficPolicy' && (o.metadata.labels as Record<string, string>)['llm.nebari.dev/endpoint'] === 'external');
    const externalRoutes = values.filter((o) => o.kind === 'AIGatewayRoute' && (o.metadata.labels as Record<string, string>)['llm.nebari.dev/endpoint'] === 'external');
    expect(policies.length).toBe(externalRoutes.length);
    for (const route of externalRoutes) expect(route.spec.llmRequestCosts).toEqual([{ metadataKey: 'llm_quota_tokens', type: 'TotalToken' }]);
    for (const policy of policies) {
      const rules = (policy.spec.rateLimit as { global: { rules: Array<{ clientSelectors: unknown; limit: unknown; cost?: unknown }> } }).global.rules;
      // alice: the default tier; bob: the large tier, with its per-minute rule.
      expect(rules.map((r) => r.limit)).toEqual([{ requests: 100000, unit: 'Hour' }, { requests: 5000000, unit: 'Day' }, { requests: 120, unit: 'Minute' }]);
      expect(rules[0].cost).toEqual({ request: { from: 'Number', number: 0 }, response: { from: 'Metadata', metadata: { namespace: 'io.envoy.ai_gateway', key: 'llm_quota_tokens' } } });
    }
  });

  test('gateway tracing: every route of every model has a policy that stores the sampling share and the span tags', () => {
    const values = [...stored.values()];
    const routes = values.filter((o) => o.kind === 'AIGatewayRoute');
    const policies = values.filter((o) => o.kind === 'BackendTrafficPolicy');
    expect(policies.length).toBe(routes.length);
    for (const policy of policies) {
      const labels = policy.metadata.labels as Record<string, string>;
      const owner = (policy.metadata.ownerReferences as { name: string }[])[0].name;
      expect(policy.spec.telemetry).toEqual({
        tracing: {
          samplingFraction: { numerator: 5000, denominator: 10000 },
          tags: { 'nebari.llm.model': owner, 'nebari.llm.model_kind': expect.stringMatching(/^(LLMModel|PassthroughModel)$/), 'nebari.llm.namespace': MATRIX_NAMESPACE, 'nebari.llm.endpoint': labels['llm.nebari.dev/endpoint'] },
        },
      });
    }
  });

  test('routing: fallback and split backends keep their priorities, weights and id overrides; retries and the passive health check are stored on both endpoints', () => {
    const byName = (kind: string, name: string) => [...stored.values()].find((o) => o.kind === kind && o.metadata.name === name);
    const rule = (byName('AIGatewayRoute', 'routed-internal')!.spec.rules as Array<Record<string, unknown>>)[0];
    expect(rule.backendRefs).toEqual([
      { name: 'routed', weight: 90, priority: 0 },
      { name: 'gemini', weight: 10, priority: 0, modelNameOverride: 'gemini-2.5-pro' },
      { name: 'openrouter', weight: 1, priority: 1, modelNameOverride: 'openai/gpt-4o' },
      { name: 'azure', weight: 1, priority: 2 },
    ]);
    expect([rule.timeouts, rule.streamIdleTimeout]).toEqual([{ request: '900s' }, '45s']);
    for (const name of ['routed-external-quota', 'routed-internal-traffic']) {
      const spec = byName('BackendTrafficPolicy', name)!.spec;
      expect(spec.retry).toEqual({
        numRetries: 3,
        numAttemptsPerPriority: 1,
        retryOn: { triggers: ['connect-failure', 'reset', 'retriable-status-codes'], httpStatusCodes: [429, 500, 502, 503, 504] },
        perRetry: { timeout: '15s', backOff: { baseInterval: '100ms', maxInterval: '2s' } },
      });
      expect(spec.healthCheck).toMatchObject({ passive: { consecutive5XxErrors: 1, baseEjectionTime: '30s', maxEjectionPercent: 100 } });
    }
    expect(byName('BackendTrafficPolicy', 'llama-retried-internal-traffic')!.spec.retry).toMatchObject({ numRetries: 2 });
    // A model without spec.routing: its policy holds the tracing settings only.
    expect(Object.keys(byName('BackendTrafficPolicy', 'llama-internal-traffic')!.spec).sort()).toEqual(['targetRefs', 'telemetry']);
  });

  test('every internal SecurityPolicy stores the subject-to-client-ID-header copy the usage metrics read', () => {
    const policies = [...stored.values()].filter((o) => o.kind === 'SecurityPolicy' && (o.metadata.labels as Record<string, string>)['llm.nebari.dev/endpoint'] === 'internal');
    expect(policies.length).toBeGreaterThan(0);
    for (const policy of policies) {
      const providers = (policy.spec.jwt as { providers: Array<{ claimToHeaders?: unknown }> }).providers;
      expect([policy.metadata.name, providers.map((p) => p.claimToHeaders)]).toEqual([policy.metadata.name, [[{ header: 'x-llm-client-id', claim: 'sub' }]]]);
    }
  });

  test('every stored route has exactly one host name, its endpoint one', () => {
    const routes = [...stored.values()].filter((o) => o.kind === 'AIGatewayRoute');
    expect(routes.length).toBeGreaterThan(0);
    for (const route of routes) {
      const endpoint = (route.metadata.labels as Record<string, string>)['llm.nebari.dev/endpoint'];
      expect([route.metadata.name, route.spec.hostnames]).toEqual([route.metadata.name, [endpoint === 'external' ? 'llm.example.com' : 'llm-internal.example.com']]);
    }
  });
});
