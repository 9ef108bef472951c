// `nls gateway inventory` and `nls gateway migrate` against a private kube-apiserver holding the
// released Gateway API 1.5.1 and Envoy Gateway 1.8.1 CRDs and, first, the AI Gateway CRDs as an
// installation on AI Gateway 0.5 has them; then the released AI Gateway 1.1.0 CRDs on top.
//
// The AI Gateway 0.5 CRDs are not among the shared upstream copies, so they are derived here from
// the released 1.1.0 files with the two differences that matter (facts from the upstream API
// history, /work/shared/reference/envoy-ai-gateway-api.md): v1alpha1 is the only (storage) version,
// and AIGatewayRoute's spec has `filterConfig` {type ExternalProcessor|DynamicModule,
// externalProcessor.resources}. `schema.version` is in both versions even at 1.1.0. Legacy objects
// are written through v1alpha1, so etcd holds them as 0.5 wrote them.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type * as k8s from '@kubernetes/client-node';
import { applyObject, getObject, installCRDs, readManifests, startControlPlane, upstreamCrdDir, type ControlPlane } from '../support/cluster';
import { runGatewayInventory, type InventorySnapshot } from '../../src/cli/gateway/gateway-inventory';
import { runGatewayMigrate } from '../../src/cli/gateway/gateway-migrate';
import { AI_GATEWAY_FINALIZER, OPERATOR_FIELD_MANAGER } from '../../src/cli/gateway/gateway-objects';
import { KubeRest } from '../../src/kube/rest';

const GW_NS = 'envoy-gateway-system';
const MODELS = 'nebari-llm-serving-system';
const TEAM = 'team-a';
const AIGW = 'aigateway.envoyproxy.io/v1alpha1';
const OURS = { 'app.kubernetes.io/managed-by': 'nebari-llm-serving', 'llm.nebari.dev/model': 'm1' };

let plane: ControlPlane;
let kc: k8s.KubeConfig;
let dir: string;

/** The AI Gateway 0.5 CRDs, derived from the 1.1.0 files (see the header). */
function legacyAiGatewayCrds(): string {
  const out = path.join(dir, 'ai-gateway-0.5');
  fs.mkdirSync(out);
  for (const plural of ['aigatewayroutes', 'aiservicebackends', 'backendsecuritypolicies', 'gatewayconfigs']) {
    const [crd] = readManifests(path.join(upstreamCrdDir(), 'envoy-ai-gateway/v1.1.0', `aigateway.envoyproxy.io_${plural}.yaml`)) as never as {
      spec: { versions: { name: string; storage: boolean; deprecated?: boolean; deprecationWarning?: string; schema: { openAPIV3Schema: { properties: { spec: { properties: Record<string, unknown> } } } } }[] };
    }[];
    const v1alpha1 = crd.spec.versions.find((v) => v.name === 'v1alpha1')!;
    v1alpha1.storage = true;
    delete v1alpha1.deprecated;
    delete v1alpha1.deprecationWarning;
    if (plural === 'aigatewayroutes') {
      const quantities = { type: 'object', additionalProperties: { anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true } };
      v1alpha1.schema.openAPIV3Schema.properties.spec.properties.filterConfig = {
        type: 'object',
        required: ['type'],
        properties: {
          type: { type: 'string', enum: ['ExternalProcessor', 'DynamicModule'], default: 'ExternalProcessor' },
          externalProcessor: { type: 'object', properties: { resources: { type: 'object', properties: { limits: quantities, requests: quantities } } } },
        },
      };
    }
    crd.spec.versions = [v1alpha1];
    // JSON is YAML; installCRDs reads *.yaml.
    fs.writeFileSync(path.join(out, `${plural}.yaml`), JSON.stringify(crd));
  }
  return out;
}

async function cli(run: (args: string[], out: (l: string) => void) => Promise<number>, args: string[]): Promise<{ code: number; output: string }> {
  const lines: string[] = [];
  const code = await run([...args, '--kubeconfig', plane.kubeconfigPath], (l) => lines.push(l));
  return { code, output: lines.join('\n') };
}

const apply = (obj: object, fieldManager?: string) => applyObject(obj, { kubeConfig: kc, fieldManager });
const gateway = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'Gateway',
  metadata: { name, namespace: GW_NS },
  spec: { gatewayClassName: 'eg', listeners: [{ name: 'http', protocol: 'HTTP', port: 80, allowedRoutes: { namespaces: { from: 'All' } } }], ...extra },
});
const backend = (ns: string, name: string) => ({ apiVersion: 'gateway.envoyproxy.io/v1alpha1', kind: 'Backend', metadata: { name, namespace: ns }, spec: { endpoints: [{ fqdn: { hostname: 'api.example.com', port: 443 } }] } });
const asb = (ns: string, name: string, schema: Record<string, string>, metadata: Record<string, unknown> = {}) => ({
  apiVersion: AIGW,
  kind: 'AIServiceBackend',
  metadata: { name, namespace: ns, ...metadata },
  spec: { schema, backendRef: { group: 'gateway.envoyproxy.io', kind: 'Backend', name: `${name}-backend` } },
});
const route = (ns: string, name: string, gw: string, backends: string[], extra: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) => ({
  apiVersion: AIGW,
  kind: 'AIGatewayRoute',
  metadata: { name, namespace: ns, ...metadata },
  spec: { parentRefs: [{ name: gw, namespace: GW_NS }], rules: [{ backendRefs: backends.map((b) => ({ name: b })) }], ...extra },
});

/** resourceVersion of every object of the kinds this test writes, by kind/ns/name. */
async function resourceVersions(): Promise<Map<string, string>> {
  const client = new KubeRest(kc);
  const kinds: [string, string][] = [
    ['gateway.networking.k8s.io/v1', 'Gateway'], ['gateway.networking.k8s.io/v1', 'HTTPRoute'], ['gateway.networking.k8s.io/v1', 'GRPCRoute'],
    ['gateway.envoyproxy.io/v1alpha1', 'Backend'], ['gateway.envoyproxy.io/v1alpha1', 'SecurityPolicy'], ['gateway.envoyproxy.io/v1alpha1', 'BackendTrafficPolicy'],
    ['gateway.envoyproxy.io/v1alpha1', 'EnvoyProxy'], [AIGW, 'AIGatewayRoute'], [AIGW, 'AIServiceBackend'], [AIGW, 'GatewayConfig'],
  ];
  const out = new Map<string, string>();
  try {
    for (const [apiVersion, kind] of kinds) for (const o of (await client.list(apiVersion, kind)).items) out.set(`${kind} ${o.metadata.namespace}/${o.metadata.name}`, o.metadata.resourceVersion!);
  } finally {
    client.close();
  }
  return out;
}

const changedBetween = (a: Map<string, string>, b: Map<string, string>) => [...new Set([...a.keys(), ...b.keys()])].filter((k) => a.get(k) !== b.get(k)).sort();

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-gateway-'));
  plane = await startControlPlane({ mode: 'apiserver' });
  kc = plane.kubeConfig();
  await installCRDs([path.join(upstreamCrdDir(), 'gateway-api/v1.5.1/standard'), path.join(upstreamCrdDir(), 'envoy-gateway/v1.8.1'), legacyAiGatewayCrds()], kc);
  for (const ns of [GW_NS, MODELS, TEAM]) await apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });

  // The operator Deployment: where `nls gateway` finds the pack's Gateways (NLS_GATEWAY_CONTEXT).
  const labels = { 'app.kubernetes.io/instance': 'nebari-llm-serving', 'app.kubernetes.io/component': 'operator', 'app.kubernetes.io/name': 'nebari-llm-serving' };
  await apply({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'nebari-llm-serving-operator', namespace: MODELS, labels },
    spec: {
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: { containers: [{ name: 'operator', image: 'example.invalid/operator:0', env: [{ name: 'NLS_GATEWAY_CONTEXT', value: JSON.stringify({ baseDomain: 'example.com', external: { gatewayName: 'nebari-gateway' }, internal: { gatewayName: 'nebari-internal-gateway' } }) }] }] },
      },
    },
  });

  await apply({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'eg' }, spec: { controllerName: 'gateway.envoyproxy.io/gatewayclass-controller' } });
  await apply({ apiVersion: 'gateway.envoyproxy.io/v1alpha1', kind: 'EnvoyProxy', metadata: { name: 'proxy', namespace: GW_NS }, spec: { provider: { type: 'Kubernetes' } } });
  await apply(gateway('nebari-gateway', { infrastructure: { parametersRef: { group: 'gateway.envoyproxy.io', kind: 'EnvoyProxy', name: 'proxy' } } }));
  await apply(gateway('nebari-internal-gateway'));
  await apply(gateway('other-gateway'));
  await apply(gateway('clean-gateway'));

  // Ours (the operator's field manager and labels): a route without the AI Gateway finalizer, a
  // backend with it, a legacy backend the operator will rewrite itself, their policy.
  const mine = { labels: OURS };
  await apply(backend(MODELS, 'm1-backend'), OPERATOR_FIELD_MANAGER);
  await apply(backend(MODELS, 'm2-backend'), OPERATOR_FIELD_MANAGER);
  await apply(asb(MODELS, 'm1', { name: 'OpenAI', prefix: '/v1' }, { ...mine, finalizers: [AI_GATEWAY_FINALIZER] }), OPERATOR_FIELD_MANAGER);
  await apply(asb(MODELS, 'm2', { name: 'OpenAI', version: 'v1' }, { ...mine, finalizers: [AI_GATEWAY_FINALIZER] }), OPERATOR_FIELD_MANAGER);
  const m1Route = await apply(route(MODELS, 'm1-external', 'nebari-gateway', ['m1', 'm2'], {}, mine), OPERATOR_FIELD_MANAGER);
  // The HTTPRoute the AI Gateway controller generates from it (labels copied, controlled by the route).
  await apply(
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name: 'm1-external', namespace: MODELS, labels: OURS, ownerReferences: [{ apiVersion: AIGW, kind: 'AIGatewayRoute', name: 'm1-external', uid: m1Route.metadata.uid, controller: true }] },
      spec: { parentRefs: [{ name: 'nebari-gateway', namespace: GW_NS }], rules: [{ backendRefs: [{ group: 'gateway.envoyproxy.io', kind: 'Backend', name: 'm1-backend' }] }] },
    },
    'envoy-ai-gateway',
  );
  await apply(
    { apiVersion: 'gateway.envoyproxy.io/v1alpha1', kind: 'SecurityPolicy', metadata: { name: 'm1-external-auth', namespace: MODELS, labels: OURS }, spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'm1-external' }], apiKeyAuth: { credentialRefs: [{ name: 'm1-api-keys' }], extractFrom: [{ headers: ['authorization'] }] } } },
    OPERATOR_FIELD_MANAGER,
  );

  // Others': a non-LLM HTTPRoute and a GRPCRoute on the pack's Gateways, a policy on the Gateway,
  // an AI route of 0.5 with a filterConfig and a legacy OpenAI backend, an Azure backend whose
  // version is its API version (not legacy), a legacy backend no route on our Gateways uses, and a
  // route on another Gateway.
  await apply({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: 'web', namespace: TEAM }, spec: { parentRefs: [{ name: 'nebari-gateway', namespace: GW_NS }], rules: [{ backendRefs: [{ name: 'web', port: 80 }] }] } }, 'kubectl');
  await apply({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GRPCRoute', metadata: { name: 'grpc', namespace: TEAM }, spec: { parentRefs: [{ name: 'nebari-internal-gateway', namespace: GW_NS }], rules: [{ backendRefs: [{ name: 'grpc', port: 9000 }] }] } }, 'kubectl');
  await apply({ apiVersion: 'gateway.envoyproxy.io/v1alpha1', kind: 'BackendTrafficPolicy', metadata: { name: 'gw-retry', namespace: GW_NS }, spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'nebari-gateway' }], retry: { numRetries: 2 } } }, 'kubectl');
  for (const b of ['compat-backend', 'azure-backend', 'stray-backend']) await apply(backend(TEAM, b), 'kubectl');
  await apply(asb(TEAM, 'compat', { name: 'OpenAI', version: 'api/v1' }), 'kubectl');
  await apply(asb(TEAM, 'azure', { name: 'AzureOpenAI', version: '2025-01-01-preview' }), 'kubectl');
  await apply(asb(TEAM, 'stray', { name: 'OpenAI', version: 'v1' }), 'kubectl');
  await apply(route(TEAM, 'compat', 'nebari-gateway', ['compat', 'azure'], { filterConfig: { type: 'ExternalProcessor', externalProcessor: { resources: { requests: { cpu: '200m', memory: '256Mi' } } } } }), 'kubectl');
  await apply({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: 'elsewhere', namespace: TEAM }, spec: { parentRefs: [{ name: 'other-gateway', namespace: GW_NS }] } }, 'kubectl');
  await apply(route(TEAM, 'stray-route', 'other-gateway', ['stray'], { filterConfig: { type: 'ExternalProcessor' } }), 'kubectl');

  // A clean Gateway: our route and backend as a current installation has them.
  await apply(backend(MODELS, 'clean-backend'), OPERATOR_FIELD_MANAGER);
  await apply(asb(MODELS, 'clean', { name: 'OpenAI', prefix: '/v1' }, { ...mine, finalizers: [AI_GATEWAY_FINALIZER] }), OPERATOR_FIELD_MANAGER);
  await apply(route(MODELS, 'clean-external', 'clean-gateway', ['clean'], {}, { ...mine, finalizers: [AI_GATEWAY_FINALIZER] }), OPERATOR_FIELD_MANAGER);
}, 240_000);

afterAll(async () => {
  await plane?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const names = (s: InventorySnapshot) => s.objects.map((o) => `${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name}`).sort();

test('inventory lists every object on the Gateways of the operator, with owners, legacy fields and missing finalizers', async () => {
  const { code, output } = await cli(runGatewayInventory, ['--output', 'json']);
  expect(code).toBe(0);
  const s = JSON.parse(output) as InventorySnapshot;
  expect(s.gateways).toEqual([{ namespace: GW_NS, name: 'nebari-gateway', found: true }, { namespace: GW_NS, name: 'nebari-internal-gateway', found: true }]);
  expect(names(s)).toEqual([
    `AIGatewayRoute ${MODELS}/m1-external`,
    `AIGatewayRoute ${TEAM}/compat`,
    `AIServiceBackend ${MODELS}/m1`,
    `AIServiceBackend ${MODELS}/m2`,
    `AIServiceBackend ${TEAM}/azure`,
    `AIServiceBackend ${TEAM}/compat`,
    `Backend ${MODELS}/m1-backend`,
    `Backend ${MODELS}/m2-backend`,
    `Backend ${TEAM}/azure-backend`,
    `Backend ${TEAM}/compat-backend`,
    `BackendTrafficPolicy ${GW_NS}/gw-retry`,
    `EnvoyProxy ${GW_NS}/proxy`,
    `GRPCRoute ${TEAM}/grpc`,
    'GatewayClass eg',
    `Gateway ${GW_NS}/nebari-gateway`,
    `Gateway ${GW_NS}/nebari-internal-gateway`,
    `HTTPRoute ${MODELS}/m1-external`,
    `HTTPRoute ${TEAM}/web`,
    `SecurityPolicy ${MODELS}/m1-external-auth`,
  ].sort());
  const entry = (kind: string, ns: string, name: string) => s.objects.find((o) => o.kind === kind && o.namespace === ns && o.name === name)!;
  expect(entry('AIGatewayRoute', MODELS, 'm1-external')).toMatchObject({ owner: 'operator', storedVersions: ['v1alpha1'] });
  expect(entry('HTTPRoute', TEAM, 'web')).toMatchObject({ owner: 'other', managers: ['kubectl'], via: [`Gateway ${GW_NS}/nebari-gateway`] });
  // The policy targets the HTTPRoute the AI Gateway generates from our route; it counts for both.
  expect(entry('SecurityPolicy', MODELS, 'm1-external-auth').via).toEqual([`AIGatewayRoute ${MODELS}/m1-external`, `HTTPRoute ${MODELS}/m1-external`]);
  expect(entry('HTTPRoute', MODELS, 'm1-external').owner).toBe('ai-gateway');
  // Legacy fields: the OpenAI version-as-prefix (ours and theirs) and the route's filterConfig; the Azure API version is not legacy.
  expect(s.objects.filter((o) => o.legacy.length > 0).map((o) => `${o.kind} ${o.namespace}/${o.name}`).sort()).toEqual(
    [`AIGatewayRoute ${TEAM}/compat`, `AIServiceBackend ${MODELS}/m2`, `AIServiceBackend ${TEAM}/compat`].sort(),
  );
  // Only our route lacks the AI Gateway finalizer.
  expect(s.objects.filter((o) => o.missingFinalizer).map((o) => `${o.kind} ${o.namespace}/${o.name}`)).toEqual([`AIGatewayRoute ${MODELS}/m1-external`]);
  // AI Gateway 0.5 CRDs: v1alpha1 stored.
  expect(s.crds.find((c) => c.kind === 'AIServiceBackend')).toMatchObject({ storageVersion: 'v1alpha1', storedVersions: ['v1alpha1'] });

  const text = await cli(runGatewayInventory, []);
  expect(text.output).toContain('roll the AI Gateway controller');
  expect(text.output).toMatch(/AIGatewayRoute team-a\/compat: spec\.filterConfig/);
});

test('inventory stays silent on a clean Gateway, and migrate finds nothing there', async () => {
  const { code, output } = await cli(runGatewayInventory, ['--gateway', `${GW_NS}/clean-gateway`]);
  expect(code).toBe(0);
  expect(output).toContain('Legacy fields: none.');
  expect(output).toContain('Cleanup finalizers: every object of ours has the AI Gateway finalizer');
  expect(output).not.toContain('roll the AI Gateway controller');
  const migrate = await cli(runGatewayMigrate, ['--gateway', `${GW_NS}/clean-gateway`, '--apply']);
  expect(migrate).toEqual({ code: 0, output: 'Nothing to migrate.' });
});

test('migrate: a dry run prints the diff and changes nothing; --apply changes exactly what it printed; a second run finds nothing', async () => {
  const saved = path.join(dir, 'before.json');
  expect((await cli(runGatewayInventory, ['--save', saved])).code).toBe(0);
  const before = await resourceVersions();

  const dry = await cli(runGatewayMigrate, []);
  expect(dry.code).toBe(0);
  expect(dry.output).toContain('Would change (dry run');
  expect(dry.output).toContain(`AIServiceBackend ${TEAM}/compat\n  - spec.schema.version: "api/v1"\n  + spec.schema.prefix: "api/v1"`);
  expect(dry.output).toContain(`GatewayConfig ${GW_NS}/nebari-gateway-ai-gateway (new)\n  + spec.extProc.kubernetes.resources: {"requests":{"cpu":"200m","memory":"256Mi"}}`);
  expect(dry.output).toContain(`Gateway ${GW_NS}/nebari-gateway\n  + metadata.annotations["aigateway.envoyproxy.io/gateway-config"]: "nebari-gateway-ai-gateway"`);
  expect(dry.output).toContain(`AIGatewayRoute ${TEAM}/compat\n  - spec.filterConfig:`);
  expect(dry.output).toMatch(/AIServiceBackend nebari-llm-serving-system\/m2: .*operator owns it/);
  expect(changedBetween(before, await resourceVersions())).toEqual([]);

  const applied = await cli(runGatewayMigrate, ['--apply']);
  expect(applied.code).toBe(0);
  expect(applied.output).toContain('Changed:');
  const after = await resourceVersions();
  // Exactly the reported objects changed (and the GatewayConfig appeared).
  expect(changedBetween(before, after)).toEqual(
    [`AIGatewayRoute ${TEAM}/compat`, `AIServiceBackend ${TEAM}/compat`, `Gateway ${GW_NS}/nebari-gateway`, `GatewayConfig ${GW_NS}/nebari-gateway-ai-gateway`].sort(),
  );
  const ref = (kind: string, namespace: string, name: string, apiVersion = AIGW) => ({ apiVersion, kind, metadata: { name, namespace } });
  expect((await getObject(ref('AIServiceBackend', TEAM, 'compat'), kc)).spec.schema).toEqual({ name: 'OpenAI', prefix: 'api/v1' });
  expect((await getObject(ref('AIGatewayRoute', TEAM, 'compat'), kc)).spec.filterConfig).toBeUndefined();
  expect((await getObject(ref('GatewayConfig', GW_NS, 'nebari-gateway-ai-gateway'), kc)).spec).toEqual({ extProc: { kubernetes: { resources: { requests: { cpu: '200m', memory: '256Mi' } } } } });
  expect((await getObject(ref('Gateway', GW_NS, 'nebari-gateway', 'gateway.networking.k8s.io/v1'), kc)).metadata.annotations).toEqual({ 'aigateway.envoyproxy.io/gateway-config': 'nebari-gateway-ai-gateway' });
  // Not on the pack's Gateways: untouched although legacy.
  expect((await getObject(ref('AIGatewayRoute', TEAM, 'stray-route'), kc)).spec.filterConfig).toEqual({ type: 'ExternalProcessor' });

  const again = await cli(runGatewayMigrate, ['--apply']);
  expect(again.output).toMatch(/^Nothing to migrate\./);
  expect(changedBetween(after, await resourceVersions())).toEqual([]);

  // The rollback comparison sees exactly the migration.
  const compared = await cli(runGatewayInventory, ['--compare', saved, '--output', 'json']);
  expect(compared.code).toBe(5);
  const difference = JSON.parse(compared.output) as { appeared: string[]; disappeared: string[]; changed: { object: string; what: string[] }[] };
  expect(difference.disappeared).toEqual([]);
  expect(difference.appeared).toEqual([`GatewayConfig ${GW_NS}/nebari-gateway-ai-gateway`]);
  expect(difference.changed).toEqual(
    expect.arrayContaining([
      { object: `AIServiceBackend ${TEAM}/compat`, what: ['spec'] },
      { object: `AIGatewayRoute ${TEAM}/compat`, what: ['spec'] },
      { object: `Gateway ${GW_NS}/nebari-gateway`, what: ['labels, annotations, finalizers or owners'] },
    ]),
  );
  expect(difference.changed).toHaveLength(3);
});

test('after the AI Gateway 1.1.0 CRDs: inventory shows objects still stored as v1alpha1', async () => {
  await installCRDs([path.join(upstreamCrdDir(), 'envoy-ai-gateway/v1.1.0')], kc);
  const { output } = await cli(runGatewayInventory, ['--output', 'json']);
  const s = JSON.parse(output) as InventorySnapshot;
  expect(s.crds.find((c) => c.kind === 'AIServiceBackend')).toMatchObject({ storageVersion: 'v1beta1', storedVersions: ['v1alpha1', 'v1beta1'] });
  expect(s.objects.find((o) => o.kind === 'AIServiceBackend' && o.name === 'compat')?.apiVersion).toBe('aigateway.envoyproxy.io/v1beta1');
  // The 1.1.0 schemas have no filterConfig: the API server prunes it when it reads the stored
  // object, so after this point neither the inventory nor migrate can see it (hence: migrate first).
  const stray = await getObject({ apiVersion: 'aigateway.envoyproxy.io/v1beta1', kind: 'AIGatewayRoute', metadata: { name: 'stray-route', namespace: TEAM } }, kc);
  expect(stray.spec.filterConfig).toBeUndefined();
  const text = await cli(runGatewayInventory, []);
  expect(text.output).toMatch(/aiservicebackends\.aigateway\.envoyproxy\.io: v1beta1; stored v1alpha1, v1beta1 \(objects written before may still be stored as v1alpha1/);
});
