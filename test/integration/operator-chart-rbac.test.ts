// The operator process with exactly the chart's RBAC: the chart's ServiceAccount, ClusterRole,
// Role and bindings are rendered and applied, and the operator runs with a token of that
// ServiceAccount (TokenRequest). Every request it makes must be allowed: the webhook server starts
// (reading each webhook configuration only as its own kind, watching both model kinds), the leader's informers list and watch
// (Secrets only in its namespace), models become Ready, and the vLLM endpoint picker's objects
// can be created (no RBAC escalation) and give the picker every read it needs, and the KAITO and llm-d
// examples get every provider object applied (the llm-d scheduler's Role grants more); the llm-d
// example's PodMonitor (spec.serving.monitoring.enabled) is applied, and deleted once turned off. A private control plane:
// models other test files leave in other namespaces (where the chart grants no Secret rights)
// would otherwise be reconciled too and show up as denials.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { applyObject, type ControlPlane, getObject, installCRDs, rest, startControlPlane, uniqueName, upstreamCrdDir } from '../support/cluster';
import { waitFor } from '../support/processes';
import { plainObjects } from '../../src/chart/render';
import { defaultValues } from '../../src/chart/values-schema';
import { KubeObject, KubeRest } from '../../src/kube/rest';
import { translateVLLM } from '../../src/translate/providers/vllm';
import { endpointPickerNames } from '../../src/translate/providers/serving-objects';
import type { LLMModelV1beta1 as LLMModel } from '../../src/api/v1beta1';
import { OperatorProcess, condition, installGatewayCRDs, installOwnCRDs, isReadyAtGeneration, passthroughModel, providerCredential, startOperator } from './operator-support';

const ns = uniqueName('op-rbac');
const release = uniqueName('rbac');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-rbac-'));
const rbacKinds = new Set(['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding']);
// One more namespace where AgentDeployments are reconciled, and one the operator has no rights in.
const agentNs = `${ns}-agents`;
const unwatchedNs = `${ns}-other`;
const defaults = defaultValues();
// The operator's test environment names an issuer (operator-support.ts), so the chart carries the
// audiences that must go with it (issue 29, Medium 9).
const chart = plainObjects({ ...defaults, watchNamespaces: [agentNs], platform: { ...defaults.platform, jwt: { ...defaults.platform.jwt, audiences: ['nebari-llm'] } } }, { releaseName: release, namespace: ns }) as KubeObject[];
const named = (kind: string) => chart.find((o) => o.kind === kind)!;
let operator: OperatorProcess | undefined;
let saKubeConfig: k8s.KubeConfig;
let plane: ControlPlane;
let admin: k8s.KubeConfig;
const apply = (o: object) => applyObject(o, { kubeConfig: admin });

/** A KubeConfig authenticating as a ServiceAccount of `ns`, with a token from the TokenRequest API. */
async function serviceAccountKubeConfig(serviceAccount: string): Promise<k8s.KubeConfig> {
  const review = await rest(admin).request<{ status: { token: string } }>('POST', `/api/v1/namespaces/${ns}/serviceaccounts/${serviceAccount}/token`, {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  const cluster = admin.getCurrentCluster()!;
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [cluster],
    users: [{ name: serviceAccount, token: review.status.token }],
    contexts: [{ name: serviceAccount, cluster: cluster.name, user: serviceAccount }],
    currentContext: serviceAccount,
  });
  return kc;
}

/** A kubeconfig file for the chart's ServiceAccount. */
async function serviceAccountKubeconfig(serviceAccount: string): Promise<string> {
  saKubeConfig = await serviceAccountKubeConfig(serviceAccount);
  const file = path.join(tmp, 'kubeconfig');
  fs.writeFileSync(file, saKubeConfig.exportConfig());
  return file;
}

/** The chart's webhook configurations, scoped to a namespace label nothing has: never called. */
function inertWebhookConfiguration(kind: string): KubeObject {
  const o = structuredClone(named(kind)) as KubeObject & { webhooks: { namespaceSelector?: unknown }[] };
  for (const w of o.webhooks) w.namespaceSelector = { matchLabels: { 'nls-test/never': 'true' } };
  return o;
}

beforeAll(async () => {
  plane = await startControlPlane({ mode: 'apiserver' });
  admin = plane.kubeConfig();
  await installOwnCRDs(admin);
  await installGatewayCRDs(admin);
  for (const name of [ns, agentNs, unwatchedNs]) await apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  for (const o of chart.filter((x) => rbacKinds.has(x.kind))) await apply(o);
  for (const kind of ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']) await apply(inertWebhookConfiguration(kind));
  await apply(providerCredential(ns));
}, 180_000);

afterAll(async () => {
  if (operator && operator.child.exitCode === null) await operator.kill();
  await plane?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

it('starts the webhook server, leads and reconciles with the chart RBAC only, with no request denied', async () => {
  const deployment = named('Deployment') as KubeObject & { spec: { template: { spec: { serviceAccountName: string; containers: { env: { name: string; value?: string }[] }[] } } } };
  const chartEnv = Object.fromEntries(deployment.spec.template.spec.containers[0].env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));
  const kubeconfigPath = await serviceAccountKubeconfig(deployment.spec.template.spec.serviceAccountName);
  operator = startOperator({
    kubeconfigPath,
    namespace: ns,
    name: 'rbac-0',
    releaseName: release,
    leaderElection: true,
    env: {
      // The chart's own contract (configuration names per kind, Secret, Service, cert mode)...
      ...chartEnv,
      // ...on free loopback ports, with a base domain.
      NLS_WEBHOOKS: 'true',
      NLS_WEBHOOK_PORT: '0',
      NLS_HEALTH_PORT: '0',
      NLS_METRICS_PORT: '0',
      NLS_BIND_ADDRESS: '127.0.0.1',
      NLS_BASE_DOMAIN: 'example.com',
      // This control plane converts through the test wiring (conversion-wiring.ts); a block
      // pointing at the chart's Service would be unreachable here. The e2e suite covers the
      // operator writing spec.conversion under the chart's RBAC, through the real Service.
      NLS_CONVERSION_CRDS: '',
    },
  });
  await operator.waitForLine(/webhook server listening/, 60_000);
  await operator.waitForLine(/became leader/, 30_000);
  await waitFor('the operator to be ready', async () => (await fetch(`http://127.0.0.1:${operator!.healthPort}/readyz`)).status === 200);
  // The CA went into both configurations (each read and patched as its own kind).
  for (const kind of ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']) {
    const stored = await getObject<{ webhooks: { clientConfig: { caBundle?: string } }[] }>(named(kind), admin);
    expect(stored!.webhooks.every((w) => !!w.clientConfig.caBundle)).toBe(true);
  }

  await apply(passthroughModel(ns, 'rbac-model'));
  const ref = { apiVersion: 'llm.nebari.dev/v1beta1', kind: 'PassthroughModel', metadata: { name: 'rbac-model', namespace: ns } };
  await waitFor('rbac-model Ready', async () => isReadyAtGeneration(await getObject(ref, admin)), { timeoutMs: 60_000 });
  // Every informer has listed and the server accepted its watch (a list or watch the chart did not
  // grant would never get there); nothing was ever denied. On a timeout the denials are the story.
  const watching = (kind: string) => operator!.lines.some((l) => l.includes('"msg":"informers listed and watching"') && l.includes(`"kind":"${kind}"`));
  try {
    await waitFor('every controller listing and watching', async () => ['PassthroughModel', 'LLMModel', 'AgentDeployment'].every(watching), { timeoutMs: 60_000 });
    // The webhook server's own watches of both model kinds (its admission reads, model-cache.ts).
    await operator.waitForLine(/"msg":"admission reads models from watches"/, 30_000);
  } finally {
    expect(operator.lines.filter((l) => /\b403\b|forbidden/i.test(l))).toEqual([]);
  }
}, 180_000);

it('reports Programmed from the generated HTTPRoutes and the Gateways\' proxy Deployments, read with the chart RBAC (issue 28, defect 4)', async () => {
  const gatewayNs = defaults.platform.external.gatewayNamespace;
  const model = { apiVersion: 'llm.nebari.dev/v1beta1', kind: 'PassthroughModel', metadata: { name: 'rbac-model', namespace: ns } };
  const programmed = async () => condition(await getObject(model, admin), 'Programmed');
  const client = rest(admin);
  // Applied and Ready, but no AI Gateway controller has generated its HTTPRoutes: not servable.
  await waitFor('Programmed=False RoutePending', async () => (await programmed())?.reason === 'RoutePending', { timeoutMs: 30_000 });
  expect((await programmed())?.status).toBe('False');

  // What the AI Gateway controller and Envoy Gateway would write: the HTTPRoute named after each
  // AIGatewayRoute, accepted by its endpoint's Gateway.
  const endpoints = [
    { route: 'rbac-model-external', gateway: defaults.platform.external.gatewayName },
    { route: 'rbac-model-internal', gateway: defaults.platform.internal.gatewayName },
  ];
  for (const e of endpoints) {
    const parentRef = { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: e.gateway, namespace: gatewayNs };
    const route = await client.create<KubeObject>({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: e.route, namespace: ns }, spec: { parentRefs: [parentRef], rules: [{ backendRefs: [{ name: 'x', port: 80 }] }] } } as KubeObject);
    const conditions = ['Accepted', 'ResolvedRefs'].map((type) => ({ type, status: 'True', reason: type, message: '', observedGeneration: route.metadata.generation, lastTransitionTime: new Date().toISOString() }));
    await client.mergePatch(route, { status: { parents: [{ parentRef, controllerName: 'gateway.envoyproxy.io/gatewayclass-controller', conditions }] } }, { subresource: 'status' });
  }
  await waitFor('Programmed=False ProxyMissing', async () => (await programmed())?.reason === 'ProxyMissing', { timeoutMs: 30_000 });

  // Envoy Gateway's proxy Deployment per Gateway, rolled out with the AI Gateway's sidecar.
  const proxies: KubeObject[] = [];
  for (const e of endpoints) {
    const labels = { 'app.kubernetes.io/managed-by': 'envoy-gateway', 'app.kubernetes.io/component': 'proxy', 'app.kubernetes.io/name': 'envoy', 'gateway.envoyproxy.io/owning-gateway-name': e.gateway, 'gateway.envoyproxy.io/owning-gateway-namespace': gatewayNs };
    const deployment = await client.create<KubeObject>({
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: `envoy-${e.gateway}`, namespace: gatewayNs, labels },
      spec: { replicas: 1, selector: { matchLabels: labels }, template: { metadata: { labels, annotations: { 'aigateway.envoyproxy.io/extproc-config-hash': 'abc123' } }, spec: { containers: [{ name: 'envoy', image: 'example.com/envoy:1' }] } } },
    } as KubeObject);
    proxies.push(await client.mergePatch(deployment, { status: { observedGeneration: deployment.metadata.generation, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 } }, { subresource: 'status' }));
  }
  const started = Date.now();
  await waitFor('Programmed=True', async () => (await programmed())?.status === 'True', { timeoutMs: 30_000 });
  // Through Settling: one more look a few seconds later, so a roll that starts meanwhile is seen.
  expect(Date.now() - started).toBeGreaterThanOrEqual(2_500);
  expect((await programmed())?.message).toContain(`HTTPRoute rbac-model-external on Gateway ${gatewayNs}/${endpoints[0].gateway}`);

  // A later roll keeps it True; a proxy with no available pod turns it False.
  await client.mergePatch(proxies[0], { status: { replicas: 2, updatedReplicas: 1 } }, { subresource: 'status' });
  await new Promise((r) => setTimeout(r, 2_000));
  expect((await programmed())?.status).toBe('True');
  await client.mergePatch(proxies[0], { status: { availableReplicas: 0, readyReplicas: 0 } }, { subresource: 'status' });
  await waitFor('Programmed=False ProxyUnavailable', async () => (await programmed())?.reason === 'ProxyUnavailable', { timeoutMs: 30_000 });
  expect(operator!.lines.filter((l) => /\b403\b|forbidden/i.test(l))).toEqual([]);
}, 120_000);

it('reconciles AgentDeployments in a watched namespace with the agent Role only, and never touches an unwatched one', async () => {
  const agent = (namespace: string) => ({
    apiVersion: 'llm.nebari.dev/v1beta1',
    kind: 'AgentDeployment',
    metadata: { name: 'helper', namespace },
    spec: { container: { image: 'example.com/agent:1' }, model: { externalAPI: { type: 'anthropic', baseURL: 'https://api.anthropic.com', modelName: 'claude-sonnet-4', credentialsRef: { name: 'anthropic', key: 'apiKey' } } } },
  });
  for (const namespace of [agentNs, unwatchedNs]) {
    await apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'anthropic', namespace }, stringData: { apiKey: 'sk-ant-test-value-not-real-0000000000' } });
    await apply(agent(namespace));
  }
  const ref = (namespace: string) => ({ apiVersion: 'llm.nebari.dev/v1beta1', kind: 'AgentDeployment', metadata: { name: 'helper', namespace } });
  await waitFor('the watched agent applied', async () => condition(await getObject(ref(agentNs), admin), 'ProviderReady')?.reason === 'Applied', { timeoutMs: 60_000 });
  expect(await getObject({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'helper', namespace: agentNs } }, admin)).toBeDefined();
  // Reconciled: it carries the operator's cleanup finalizer.
  const stored = (await getObject(ref(agentNs), admin))!;
  expect(stored.metadata.finalizers).toContain('llm.nebari.dev/cleanup');
  // The unwatched namespace: no status, no finalizer, no workload.
  const other = (await getObject(ref(unwatchedNs), admin))!;
  expect(other.status).toBeUndefined();
  expect(other.metadata.finalizers ?? []).toEqual([]);
  expect(await getObject({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'helper', namespace: unwatchedNs } }, admin)).toBeUndefined();
  expect(operator!.lines.filter((l) => /\b403\b|forbidden/i.test(l))).toEqual([]);
}, 120_000);

it('may create the vLLM endpoint picker and its rights (no escalation), and the picker may read everything EPP v1.0.2 watches', async () => {
  const model = {
    apiVersion: 'llm.nebari.dev/v1beta1',
    kind: 'LLMModel',
    metadata: { name: 'rbac-vllm', namespace: ns, uid: '00000000-0000-0000-0000-000000000001' },
    spec: { model: { name: 'Qwen/Qwen3-8B', source: 'huggingface' }, resources: { gpu: { count: 1, type: 'nvidia' } }, access: { public: true } },
  } as LLMModel;
  const picker = endpointPickerNames('rbac-vllm');
  const client = new KubeRest(saKubeConfig);
  try {
    const objects = translateVLLM(model, {}).objects.filter((x) => x.metadata.name === picker.epp || x.metadata.name === picker.eppServiceAccount);
    expect(objects.map((o) => o.kind)).toEqual(['ServiceAccount', 'Role', 'RoleBinding', 'ConfigMap', 'Deployment', 'Service']);
    for (const o of objects) {
      // Without the owner reference: the model object does not exist, and garbage collection would remove these.
      const plain = { ...o, metadata: { ...o.metadata, ownerReferences: undefined } } as unknown as KubeObject;
      await client.apply(plain, { fieldManager: 'nebari-llm-serving-operator', force: true });
    }
  } finally {
    client.close();
  }
  // The picker's own token: every list its informers start with is allowed (the InferenceObjective
  // CRD is the Inference Extension v1.0.2 one the gateway CRDs install).
  const eppClient = new KubeRest(await serviceAccountKubeConfig(picker.eppServiceAccount));
  try {
    for (const [apiVersion, kind] of [['v1', 'Pod'], ['inference.networking.k8s.io/v1', 'InferencePool'], ['inference.networking.x-k8s.io/v1alpha2', 'InferenceObjective']]) {
      await expect(eppClient.list(apiVersion, kind, { namespace: ns })).resolves.toEqual(expect.objectContaining({ items: expect.any(Array) }));
    }
  } finally {
    eppClient.close();
  }
});

it('applies the KAITO and llm-d providers\' objects with the chart RBAC, at the detected versions, and the llm-d model\'s PodMonitor until monitoring is turned off', async () => {
  await installCRDs([
    path.join(upstreamCrdDir(), 'kaito/v0.12.0'), path.join(upstreamCrdDir(), 'llm-d-router/v0.10.0'),
    path.join(upstreamCrdDir(), 'prometheus-operator/v0.93.0/monitoring.coreos.com_podmonitors.yaml'),
  ], admin);
  const expected: Record<string, string> = { 'kaito.yaml': 'kaito.sh/v1beta1', 'llmd.yaml': 'apps/v1' };
  for (const [file, apiVersion] of Object.entries(expected)) {
    const example = parseYaml(fs.readFileSync(path.join(__dirname, '..', '..', 'examples', 'llmmodel', file), 'utf8')) as KubeObject;
    await apply({ ...example, metadata: { ...example.metadata, namespace: ns } });
    const ref = { apiVersion: 'llm.nebari.dev/v1beta1', kind: 'LLMModel', metadata: { name: example.metadata.name, namespace: ns } };
    await waitFor(`${file}: provider objects applied`, async () => condition(await getObject(ref, admin), 'ProviderReady')?.reason === 'Applied', { timeoutMs: 90_000, intervalMs: 1000 });
    const stored = (await getObject(ref, admin))!;
    expect((stored.status as { provider?: { apiVersion?: string } }).provider?.apiVersion).toBe(apiVersion);
  }
  const llmd = parseYaml(fs.readFileSync(path.join(__dirname, '..', '..', 'examples', 'llmmodel', 'llmd.yaml'), 'utf8')) as KubeObject & { spec: { serving: Record<string, unknown> } };
  const llmdRef = { apiVersion: 'llm.nebari.dev/v1beta1', kind: 'LLMModel', metadata: { name: llmd.metadata.name, namespace: ns } };
  const monitorRef = { apiVersion: 'monitoring.coreos.com/v1', kind: 'PodMonitor', metadata: { name: `${llmd.metadata.name}-vllm`, namespace: ns } };
  expect(condition(await getObject(llmdRef, admin), 'MonitoringReady')).toMatchObject({ status: 'True', reason: 'Applied' });
  expect((await getObject(monitorRef, admin))?.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'LLMModel', name: llmd.metadata.name, controller: true })]);
  await apply({ ...llmd, metadata: { ...llmd.metadata, namespace: ns }, spec: { ...llmd.spec, serving: { ...llmd.spec.serving, monitoring: { enabled: false } } } });
  await waitFor('the PodMonitor deleted once monitoring is off', async () => condition(await getObject(llmdRef, admin), 'MonitoringReady')?.reason === 'Disabled', { timeoutMs: 30_000, intervalMs: 500 });
  expect(await getObject(monitorRef, admin)).toBeUndefined();
  expect(operator!.lines.filter((l) => /\b403\b|forbidden/i.test(l))).toEqual([]);
}, 240_000);

it('verifies providers against the ConfigMap named by platform.providerTLS.caConfigMap: the policy names it, and the model says what to fix until it holds a certificate', async () => {
  // The chart rendered with the value: the operator gets it through NLS_GATEWAY_CONTEXT.
  const withCA = plainObjects(
    { ...defaults, watchNamespaces: [agentNs], platform: { ...defaults.platform, jwt: { ...defaults.platform.jwt, audiences: ['nebari-llm'] }, providerTLS: { caConfigMap: 'provider-ca' } } },
    { releaseName: release, namespace: ns },
  ) as KubeObject[];
  const deployment = withCA.find((o) => o.kind === 'Deployment') as KubeObject & { spec: { template: { spec: { serviceAccountName: string; containers: { env: { name: string; value?: string }[] }[] } } } };
  const chartEnv = Object.fromEntries(deployment.spec.template.spec.containers[0].env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));
  expect(JSON.parse(chartEnv.NLS_GATEWAY_CONTEXT).providerTLS).toEqual({ caConfigMap: 'provider-ca' });
  // The same RBAC objects as the chart without the value: the ConfigMap is read with the rights the chart already grants.
  const rbacOf = (objects: KubeObject[]) => JSON.stringify(objects.filter((x) => rbacKinds.has(x.kind)));
  expect(rbacOf(withCA)).toBe(rbacOf(chart));
  await operator!.stop();
  operator = startOperator({
    kubeconfigPath: await serviceAccountKubeconfig(deployment.spec.template.spec.serviceAccountName),
    namespace: ns,
    name: 'rbac-ca',
    releaseName: release,
    leaderElection: true,
    env: { ...chartEnv, NLS_WEBHOOKS: 'false', NLS_HEALTH_PORT: '0', NLS_METRICS_PORT: '0', NLS_BIND_ADDRESS: '127.0.0.1', NLS_BASE_DOMAIN: 'example.com', NLS_CONVERSION_CRDS: '' },
  });
  await operator.waitForLine(/became leader/, 60_000);

  await apply(passthroughModel(ns, 'ca-model'));
  const ref = { apiVersion: 'llm.nebari.dev/v1beta1', kind: 'PassthroughModel', metadata: { name: 'ca-model', namespace: ns } };
  await waitFor('ca-model reporting the missing ConfigMap', async () => condition(await getObject(ref, admin), 'BackendConfigured')?.reason === 'ProviderCANotFound', { timeoutMs: 60_000, intervalMs: 500 });
  const degraded = (await getObject(ref, admin))!;
  expect((degraded.status as { phase: string }).phase).toBe('Degraded');
  expect(condition(degraded, 'BackendConfigured')?.message).toContain('ConfigMap provider-ca (chart value platform.providerTLS.caConfigMap) does not exist in namespace');
  // The objects are applied meanwhile, so Envoy Gateway serves the model once the ConfigMap exists.
  const policy = await getObject<KubeObject & { spec: { validation: Record<string, unknown> } }>({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'BackendTLSPolicy', metadata: { name: 'ca-model-backend-tls', namespace: ns } }, admin);
  expect(policy?.spec.validation).toEqual({ hostname: 'api.openai.com', caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'provider-ca' }] });

  await apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'provider-ca', namespace: ns }, data: { 'ca.crt': 'not yet a certificate' } });
  await waitFor('ca-model reporting the ConfigMap without a certificate', async () => condition(await getObject(ref, admin), 'BackendConfigured')?.reason === 'ProviderCAEmpty', { timeoutMs: 30_000, intervalMs: 500 });
  await apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'provider-ca', namespace: ns }, data: { 'ca.crt': '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n' } });
  await waitFor('ca-model Ready once the ConfigMap holds a certificate', async () => isReadyAtGeneration(await getObject(ref, admin)), { timeoutMs: 30_000, intervalMs: 500 });
  expect(condition(await getObject(ref, admin), 'BackendConfigured')).toMatchObject({ status: 'True', reason: 'Applied' });
  expect(operator.lines.filter((l) => /\b403\b|forbidden/i.test(l))).toEqual([]);
}, 180_000);
