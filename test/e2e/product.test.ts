// The product as users run it: the chart installed from the OCI registry with helm v3 and v4 onto
// a real kubelet node, the operator image built from this repository running under the chart's
// ServiceAccount, and the three kinds served with real pods. Runs in order; each step builds on
// the installation the previous one left. Figures are printed at the end.
//
// What it proves:
// - helm 3 and helm 4 install from the registry into the release namespace (`--create-namespace`)
//   with only the values a user must set; the operator becomes Ready only once its webhook serves,
//   and the API server reaches the webhooks through the chart's Service.
// - a PassthroughModel reaches Ready with its gateway objects; an LLMModel (vLLM provider, every
//   image a stand-in set through chart values) runs its pods and answers /v1/models and
//   /v1/chat/completions through its Service; an AgentDeployment runs with its model environment.
// - `nls keys mint` and `nls verify` (the image's own nls and Node) work against it.
// - deleting the operator pod mid-reconcile, and the leader of two replicas, loses nothing.
// - `nls gateway inventory` (the image's nls) finds the model's route on the Gateway the chart
//   values name and reports it lacks the AI Gateway finalizer (no AI Gateway controller runs here);
//   `nls gateway roll-dataplane` rolls a data-plane Deployment's real pods. No Envoy Gateway runs
//   here either: the disclosed stand-in test/support/envoy-gateway-standin.ts copies the
//   EnvoyProxy pod annotations into the Deployment, as Envoy Gateway does.
// - `nls upgrade` to the next version rolls real pods through every phase; `nls rollback` returns.
// - the key portal, enabled on the release with `helm upgrade` (with per-key token quotas), logs
//   users in through a real OpenID Provider (run by the test on the node address, https with its
//   own CA): each sees only the models their groups grant; a key minted in headless Chromium with a
//   quota tier is the one the model's key Secret holds, its client ID is authorized by the
//   SecurityPolicy and limited by the quota policy with the tier's budgets; the admin sees it; it
//   is revoked, and leaves both policies, once its user leaves the group at the issuer.
// - the audit log shows no request of the operator's or the portal's ServiceAccount answered 403,
//   and which granted rules were never used.
import { type KubeObject, objectRef } from '../../src/kube/rest';
import { waitFor } from '../support/processes';
import { admin, CHART, helmOk, http, imageNodeVersion, isPodReady, NAMESPACE, nls, OPERATOR_SA, OPERATOR_SELECTOR, podLogs, pods, readyAtGeneration, RELEASE, waitForObject, waitForReadyPods } from './support/e2e';
import { e2eState } from './support/state';
import { auditEvents, auditReport } from './support/audit';
import { startEnvoyGatewayStandIn } from '../support/envoy-gateway-standin';
import { ARTIFACTS, Issuer, launchBrowser, logIn, startIssuer, startTlsFront } from './support/portal';
import * as fs from 'fs';
import * as path from 'path';

const state = e2eState();
const chartRef = `${state.chartRepo}/${CHART}`;
const figures: Record<string, string> = {};
/** While a release is uninstalled its Role goes before its pods: 403s then are expected. */
const uninstalling: { from: number; to: number }[] = [];
/** When the helm 4 install began, for the install → first model Ready figure. */
let helm4InstallStarted = 0;
const GROUP = 'llm.nebari.dev/v1alpha1';

/** The value a user must set: the base domain. The published chart pins the operator image by digest. */
function userValues(): string[] {
  return ['--set', 'platform.baseDomain=example.test'];
}

/** The stand-ins the suite built, through the chart's provider image values. */
function standInValues(): string[] {
  return [
    '--set', `providers.vllm.image=${state.images.standIn}`,
    '--set', `providers.modelDownloader.image=${state.images.standIn}`,
    '--set', `providers.endpointPicker.image=${state.images.standIn}`,
  ];
}

function seconds(since: number): string {
  return `${((Date.now() - since) / 1000).toFixed(1)} s`;
}

function passthrough(name: string): KubeObject {
  return {
    apiVersion: GROUP,
    kind: 'PassthroughModel',
    metadata: { name, namespace: NAMESPACE },
    spec: {
      provider: { hostname: 'api.openai.example', credentialSecretName: 'provider-credentials' },
      models: { declared: [`${name}-model`] },
      access: { groups: ['ml-team'] },
      endpoints: { internal: { enabled: false } },
    },
  };
}

async function operatorPod() {
  const ready = (await pods(OPERATOR_SELECTOR)).filter(isPodReady);
  expect(ready.length).toBeGreaterThan(0);
  return ready[0];
}

afterAll(() => console.log(`e2e figures: ${JSON.stringify(figures, null, 2)}`));

test('helm 3 installs from the registry into a new namespace and the webhooks answer through the Service', async () => {
  const started = Date.now();
  await helmOk(3, ['install', RELEASE, chartRef, '--version', state.version, '-n', NAMESPACE, '--create-namespace', '--wait', '--timeout', '5m', ...userValues()]);
  figures.helm3InstallToReady = seconds(started);
  const pod = await operatorPod();
  expect(pod.spec.serviceAccountName).toBe(OPERATOR_SA);
  // The released chart runs the signed image by digest.
  expect(pod.spec.containers[0].image).toBe(`${state.images.operator.repository}@${state.images.operator.digest}`);
  // The chart's hook (nls wait-webhooks in the operator image, under its own ServiceAccount) held
  // the install until a dry-run create went through the webhooks; its last probe was answered.
  const probes = auditEvents(state.auditLog, `system:serviceaccount:${NAMESPACE}:${RELEASE}-webhook-check`).filter((e) => e.verb === 'create' && e.objectRef?.resource === 'passthroughmodels');
  expect(probes.length).toBeGreaterThan(0);
  expect(probes.at(-1)!.requestURI).toContain('dryRun=All');
  expect([500, 403]).not.toContain(probes.at(-1)!.responseStatus?.code);
  figures.installCheckProbes = String(probes.length);
  // A model outside the operator namespace is refused by our webhook, reached through its Service.
  const denied = await admin().create({ ...passthrough('misplaced'), metadata: { name: 'misplaced', namespace: 'default' } }).then(() => '', (e: Error) => e.message);
  expect(denied).toMatch(/is not the operator namespace/);
  const from = Date.now() - 1000;
  await helmOk(3, ['uninstall', RELEASE, '-n', NAMESPACE, '--wait']);
  await waitFor('operator pods gone', async () => (await pods(OPERATOR_SELECTOR)).length === 0, { timeoutMs: 120000 });
  uninstalling.push({ from, to: Date.now() + 1000 });
});

test('helm 4 installs with default values plus what a user must set; Ready means webhooks serve', async () => {
  const started = Date.now();
  await helmOk(4, ['install', RELEASE, chartRef, '--version', state.version, '-n', NAMESPACE, '--create-namespace', '--wait', '--timeout', '5m', ...userValues(), ...standInValues()]);
  figures.helm4InstallToReady = seconds(started);
  figures.imageNode = imageNodeVersion();
  expect(figures.imageNode).toMatch(/^v24\./);
  const pod = await operatorPod();
  expect(pod.spec.serviceAccountName).toBe(OPERATOR_SA);
  // Readiness implies a serving webhook: a dry-run write goes through the mutating and validating webhooks.
  await admin().apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'provider-credentials', namespace: NAMESPACE }, type: 'Opaque', stringData: { apiKey: 'sk-e2e-provider-key-0123456789' } } as never, { fieldManager: 'e2e', force: true });
  const dry = await admin().create(passthrough('dry-run'), { dryRun: true });
  expect(dry.metadata.name).toBe('dry-run');
  helm4InstallStarted = started;
});

test('a PassthroughModel reaches Ready with its gateway objects', async () => {
  const started = Date.now();
  await admin().create(passthrough('openai'));
  const model = await waitForObject<KubeObject>(GROUP, 'PassthroughModel', 'openai', readyAtGeneration);
  figures.passthroughModelReady = seconds(started);
  if (helm4InstallStarted) figures.helmInstallToFirstModelReady = seconds(helm4InstallStarted);
  expect(model.status).toMatchObject({ phase: 'Ready' });
  const routes = await admin().list('aigateway.envoyproxy.io/v1beta1', 'AIGatewayRoute', { namespace: NAMESPACE });
  expect(routes.items.map((r) => r.metadata.name).some((n) => n.includes('openai'))).toBe(true);
  const backends = await admin().list('aigateway.envoyproxy.io/v1beta1', 'AIServiceBackend', { namespace: NAMESPACE });
  expect(backends.items.map((r) => r.metadata.name).some((n) => n.includes('openai'))).toBe(true);
  const keys = await admin().get(objectRef('v1', 'Secret', 'openai-api-keys', NAMESPACE));
  expect(keys).toBeDefined();
});

test('both API versions serve the same object: the operator pointed conversion at its own Service, v1beta1 is stored', async () => {
  const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/passthroughmodels.llm.nebari.dev';
  // helm installed crds/ without spec.conversion; the operator wrote it before it became Ready.
  const crd = await admin().request<{ spec: { conversion?: { strategy: string; webhook?: { clientConfig?: { service?: { name: string; namespace: string; path: string }; caBundle?: string } } }; versions: { name: string; storage: boolean }[] }; status: { storedVersions: string[] } }>('GET', crdPath);
  const ca = await admin().get<KubeObject & { data: Record<string, string> }>(objectRef('v1', 'Secret', `${RELEASE}-webhook-server-cert`, NAMESPACE));
  expect(crd.spec.conversion).toEqual({
    strategy: 'Webhook',
    webhook: { conversionReviewVersions: ['v1'], clientConfig: { service: { name: `${RELEASE}-webhook`, namespace: NAMESPACE, path: '/convert', port: 443 }, caBundle: ca?.data['ca.crt'] } },
  });
  expect(crd.spec.versions.find((v) => v.storage)?.name).toBe('v1beta1');
  expect(crd.status.storedVersions).toEqual(['v1beta1']);
  // The same PassthroughModel read in both versions, converted by the operator through its Service.
  const at = (version: string) => `/apis/llm.nebari.dev/${version}/namespaces/${NAMESPACE}/passthroughmodels/openai`;
  type Model = { spec: { provider: { credentialSecretName?: string; credential?: { secretRef?: { name: string } } }; models: { declared: string[] } } };
  const started = Date.now();
  const beta = await admin().request<Model>('GET', at('v1beta1'));
  const alpha = await admin().request<Model>('GET', at('v1alpha1'));
  figures.conversionRoundTrip = `${Date.now() - started} ms for one read in each version`;
  expect(beta.spec.provider.credential?.secretRef?.name).toBe('provider-credentials');
  expect(alpha.spec.provider.credentialSecretName).toBe('provider-credentials');
  expect(beta.spec.models).toEqual(alpha.spec.models);
});

test('a LLMModel with the vLLM provider runs its pods, reaches Ready and serves the OpenAI paths', async () => {
  const started = Date.now();
  await admin().create({
    apiVersion: GROUP,
    kind: 'LLMModel',
    metadata: { name: 'tiny', namespace: NAMESPACE },
    spec: {
      model: { name: 'e2e/tiny-chat', source: 'huggingface', storage: { type: 'emptyDir' } },
      resources: { gpu: { count: 0 }, requests: { cpu: '50m', memory: '64Mi' } },
      serving: { replicas: 1 },
      access: { public: true },
      endpoints: { internal: { enabled: false } },
    },
  } as KubeObject);
  const model = await waitForObject<KubeObject>(GROUP, 'LLMModel', 'tiny', readyAtGeneration, 240000);
  figures.llmModelReady = seconds(started);
  expect(model.status).toMatchObject({ phase: 'Ready' });
  // The endpoint picker read its InferencePool with the Role the operator made for it.
  const epp = await waitForReadyPods('llm.nebari.dev/role=endpoint-picker', 1).catch(async (e: Error) => {
    throw new Error(`${e.message}\n${await podLogs('app.kubernetes.io/managed-by=nebari-llm-serving')}`);
  });
  expect(epp.length).toBe(1);
  const service = await admin().get<KubeObject & { spec: { clusterIP: string } }>(objectRef('v1', 'Service', 'tiny-vllm', NAMESPACE));
  const base = `http://${service!.spec.clusterIP}:8000`;
  const models = await http(`${base}/v1/models`);
  expect(models).toMatchObject({ status: 200, json: { data: [{ id: 'e2e/tiny-chat' }] } });
  const chat = await http(`${base}/v1/chat/completions`, { model: 'e2e/tiny-chat', messages: [{ role: 'user', content: 'hello' }] });
  expect(chat).toMatchObject({ status: 200, json: { choices: [{ message: { content: 'echo: hello' } }] } });
});

test('an AgentDeployment runs with its model environment', async () => {
  await admin().create({
    apiVersion: GROUP,
    kind: 'AgentDeployment',
    metadata: { name: 'helper', namespace: NAMESPACE },
    spec: { image: state.images.agent, args: ['--listen=0.0.0.0:8080'], port: 8080, model: { modelRef: { kind: 'LLMModel', name: 'tiny' } } },
  } as KubeObject);
  await waitForObject<KubeObject>(GROUP, 'AgentDeployment', 'helper', readyAtGeneration);
  const [pod] = await waitForReadyPods('llm.nebari.dev/agent=helper', 1);
  const env = await http(`http://${pod.status!.podIP}:8080/env`);
  expect(env.status).toBe(200);
  expect(env.json).toMatchObject({ OPENAI_MODEL: 'e2e/tiny-chat', OPENAI_API_KEY: '<set>' });
  expect((env.json as Record<string, string>).OPENAI_BASE_URL).toMatch(/example\.test/);
});

test('nls keys mint and nls verify work against the installation', async () => {
  const minted = await nls(['keys', 'mint', '--model', 'openai', '--namespace', NAMESPACE, '--output', 'json']);
  expect(minted).toMatchObject({ code: 0 });
  const key = JSON.parse(minted.output) as { clientId: string };
  expect(key.clientId).toBeTruthy();
  const listed = await nls(['keys', 'list', '--model', 'openai', '--namespace', NAMESPACE, '--output', 'json']);
  expect(listed.output).toContain(key.clientId);
  const verify = await nls(['verify', '--release', RELEASE, '--namespace', NAMESPACE, '--images']);
  if (verify.code !== 0) throw new Error(`nls verify failed (${verify.code}):\n${verify.output}`);
  expect(verify.output).toMatch(/conversion passthroughmodels\s+PASS/);
  expect(verify.output).toMatch(/stored versions llmmodels\s+PASS/);
  // The kubelet's image digests agree with the digest the published chart pins.
  expect(verify.output).toMatch(new RegExp(`operator pod images\\s+PASS\\s+\\d+ pod\\(s\\) run ${state.images.operator.digest}, the digest the chart values name`));
});

const PORTAL_HOST = 'llm-keys.example.test';
const PORTAL_URL = `https://${PORTAL_HOST}`;
const PORTAL_SELECTOR = 'app.kubernetes.io/component=portal';
const PORTAL_SA = `${RELEASE}-portal`;
/** Runs until the end of the file: the portal's readiness needs its issuer, also across the upgrade. */
let issuer: Issuer | undefined;
afterAll(async () => issuer?.stop());

test('the key portal, enabled on the release, logs users in through a real OpenID Provider, mints a key and revokes it when its user leaves the group', async () => {
  issuer = await startIssuer(path.join(state.dir, 'issuer'), {
    redirectUri: `${PORTAL_URL}/auth/callback`,
    clientId: 'nls-portal',
    clientSecret: 'e2e-portal-client-secret',
    accounts: { alice: { username: 'alice', groups: ['ml-team'] }, carol: { username: 'carol', groups: ['other-team'] }, root: { username: 'root', groups: ['platform-admins'] } },
  });
  await admin().apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'portal-issuer-ca', namespace: NAMESPACE }, data: { 'ca.crt': issuer.ca.certPem } } as never, { fieldManager: 'e2e', force: true });
  await admin().apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'portal-oidc', namespace: NAMESPACE }, type: 'Opaque', stringData: { 'client-secret': 'e2e-portal-client-secret' } } as never, { fieldManager: 'e2e', force: true });
  const started = Date.now();
  await helmOk(4, [
    'upgrade', RELEASE, chartRef, '--version', state.version, '-n', NAMESPACE, '--reuse-values', '--wait', '--timeout', '5m',
    '--set', 'portal.enabled=true',
    '--set', `platform.jwt.issuer=${issuer.url}`,
    // Required with the issuer (issue 29, Medium 9); no model here enables the internal endpoint.
    '--set', 'platform.jwt.audiences={nebari-llm}',
    '--set', 'portal.oidc.clientId=nls-portal',
    '--set', 'portal.oidc.clientSecret.name=portal-oidc',
    '--set', 'portal.oidc.caConfigMap.name=portal-issuer-ca',
    '--set', 'portal.adminGroups={platform-admins}',
    '--set', 'portal.groupRefreshSeconds=30',
    // Per-key token quotas with two tiers. The backend is only a label the chart trusts (no Envoy
    // Gateway runs here); the policy it makes is admitted by the real Envoy Gateway CRD.
    '--set', 'quotas.rateLimitBackend=redis://ratelimit.e2e.example:6379',
    '--set-json', 'quotas.tiers=[{"name":"standard","tokens":100000,"unit":"Day"},{"name":"large","tokens":5000000,"unit":"Day","requestsPerMinute":60}]',
  ]);
  const [pod] = await waitForReadyPods(PORTAL_SELECTOR, 1);
  figures.portalEnabledToReady = seconds(started);
  expect(pod.spec.serviceAccountName).toBe(PORTAL_SA);
  expect(pod.spec.containers[0].image).toBe(`${state.images.operator.repository}@${state.images.operator.digest}`);

  const service = await admin().get<KubeObject & { spec: { clusterIP: string; ports: { port: number }[] } }>(objectRef('v1', 'Service', PORTAL_SA, NAMESPACE));
  const front = await startTlsFront(issuer.ca, PORTAL_HOST, { host: service!.spec.clusterIP, port: service!.spec.ports[0].port });
  const browser = await launchBrowser(PORTAL_HOST);
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  try {
    const loginStarted = Date.now();
    const alice = await logIn(browser, PORTAL_URL, 'alice');
    figures.portalLogin = seconds(loginStarted);
    const models = await alice.$$eval('section[aria-labelledby=models-h] tbody tr td:first-child', (tds) => tds.map((td) => td.textContent ?? ''));
    expect(models).toContain('openai'); // access.groups: [ml-team]
    await alice.screenshot({ path: path.join(ARTIFACTS, 'models.png'), fullPage: true });
    const carol = await logIn(browser, PORTAL_URL, 'carol');
    const carolModels = await carol.$$eval('section[aria-labelledby=models-h] tbody tr td:first-child', (tds) => tds.map((td) => td.textContent ?? ''));
    expect(carolModels).not.toContain('openai');

    await alice.select('#model', 'PassthroughModel/openai');
    await alice.type('#description', 'e2e laptop');
    await alice.select('#tier', 'large');
    await Promise.all([alice.waitForNavigation({ waitUntil: 'load' }), alice.click('form[action="/keys"] button[type=submit]')]);
    const apiKey = await alice.$eval('#api-key', (el) => el.textContent ?? '');
    const clientId = await alice.$eval('section[aria-labelledby=key-h] code', (el) => el.textContent ?? '');
    expect(apiKey).toMatch(/^sk-[A-Za-z0-9_-]{43}$/);
    // The key the page showed is the one the model's key Secret holds, recorded as alice's.
    const secret = await admin().get<KubeObject & { data?: Record<string, string> }>(objectRef('v1', 'Secret', 'openai-api-keys', NAMESPACE));
    expect(Buffer.from(secret!.data![clientId], 'base64').toString()).toBe(apiKey);
    const listed = await nls(['keys', 'list', '--model', 'openai', '--namespace', NAMESPACE, '--output', 'json']);
    expect(JSON.parse(listed.output)).toEqual(expect.arrayContaining([expect.objectContaining({ clientId, createdBy: 'alice', groups: ['ml-team'], source: 'portal', tier: 'large' })]));
    // The gateway would take the key: the external SecurityPolicy authorizes its client ID, and
    // the quota policy limits it with its tier's budgets (both stored by the real upstream CRDs).
    type Rule = { clientSelectors: { headers: { value: string }[] }[]; limit: { requests: number; unit: string } };
    const keyIn = async () => {
      const policies = await admin().list('gateway.envoyproxy.io/v1alpha1', 'SecurityPolicy', { namespace: NAMESPACE });
      const quota = await admin().get<KubeObject & { spec: { rateLimit: { global: { rules: Rule[] } } } }>(objectRef('gateway.envoyproxy.io/v1alpha1', 'BackendTrafficPolicy', 'openai-external-quota', NAMESPACE));
      const limits = (quota?.spec.rateLimit.global.rules ?? []).filter((r) => r.clientSelectors.some((c) => c.headers.some((h) => h.value === clientId))).map((r) => r.limit);
      return { authorized: policies.items.some((p) => JSON.stringify(p.spec).includes(clientId)), limits };
    };
    await waitFor('the minted key in the SecurityPolicy and the quota policy', async () => (await keyIn()).authorized && (await keyIn()).limits.length === 2, { timeoutMs: 30000, intervalMs: 250 });
    expect((await keyIn()).limits).toEqual([{ requests: 5000000, unit: 'Day' }, { requests: 60, unit: 'Minute' }]);

    const root = await logIn(browser, PORTAL_URL, 'root');
    await root.goto(`${PORTAL_URL}/admin/keys?user=alice`, { waitUntil: 'load' });
    expect(await root.$$eval('tbody tr td code', (cs) => cs.map((c) => c.textContent))).toContain(clientId);
    await root.screenshot({ path: path.join(ARTIFACTS, 'admin-keys.png'), fullPage: true });

    // alice leaves ml-team at the issuer: the portal's next refresh round revokes her key.
    issuer.setAccounts({ alice: { username: 'alice', groups: [] }, root: { username: 'root', groups: ['platform-admins'] } });
    const left = Date.now();
    await waitFor('alice\'s key revoked after she left ml-team', async () => {
      const s = await admin().get<KubeObject & { data?: Record<string, string> }>(objectRef('v1', 'Secret', 'openai-api-keys', NAMESPACE));
      return s?.data?.[clientId] === undefined;
    }, { timeoutMs: 90000, intervalMs: 250 }); // one refresh round: at most 30 s (the chart's minimum) plus the refresh
    figures.portalGroupLossToRevoked = seconds(left);
    await waitFor('the revoked key gone from the SecurityPolicy and the quota policy', async () => {
      const now = await keyIn();
      return !now.authorized && now.limits.length === 0;
    }, { timeoutMs: 30000, intervalMs: 250 });
    // The audit entry follows the key's removal: wait for it rather than race it.
    let audit = { code: -1, output: '[]' };
    await waitFor('the access-revoked audit entry', async () => {
      audit = await nls(['keys', 'audit', '--model', 'openai', '--namespace', NAMESPACE, '--output', 'json']);
      return audit.code === 0 && audit.output.includes('access-revoked');
    }, { timeoutMs: 30000, intervalMs: 500 });
    expect(JSON.parse(audit.output)).toEqual(expect.arrayContaining([
      expect.objectContaining({ action: 'mint', clientId, owner: 'alice', actor: 'alice' }),
      expect.objectContaining({ action: 'access-revoked', clientId, owner: 'alice' }),
    ]));
    // Nothing the portal logged carries key material.
    expect(await podLogs(PORTAL_SELECTOR)).not.toMatch(/sk-[A-Za-z0-9_-]{8,}/);
  } finally {
    await browser.close();
    await front.stop();
  }
});

test('nls gateway inventory finds the model route on the chart\'s Gateway; roll-dataplane rolls real data-plane pods', async () => {
  const rest = admin();
  const gwNs = 'envoy-gateway-system';
  const labels = {
    'app.kubernetes.io/name': 'envoy',
    'app.kubernetes.io/component': 'proxy',
    'app.kubernetes.io/managed-by': 'envoy-gateway',
    'gateway.envoyproxy.io/owning-gateway-name': 'nebari-gateway',
    'gateway.envoyproxy.io/owning-gateway-namespace': gwNs,
  };
  const apply = (o: KubeObject) => rest.apply(o, { fieldManager: 'e2e' });
  await apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: gwNs } });
  await apply({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'eg' }, spec: { controllerName: 'gateway.envoyproxy.io/gatewayclass-controller' } });
  await apply({ apiVersion: 'gateway.envoyproxy.io/v1alpha1', kind: 'EnvoyProxy', metadata: { name: 'proxy', namespace: gwNs }, spec: { provider: { type: 'Kubernetes' } } });
  await apply({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: 'nebari-gateway', namespace: gwNs },
    spec: { gatewayClassName: 'eg', listeners: [{ name: 'llm-https', protocol: 'HTTP', port: 80 }], infrastructure: { parametersRef: { group: 'gateway.envoyproxy.io', kind: 'EnvoyProxy', name: 'proxy' } } },
  });
  await apply({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'envoy-envoy-gateway-system-nebari-gateway-e2e', namespace: gwNs, labels },
    spec: { replicas: 1, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'envoy', image: state.images.pause }] } } },
  });
  const before = await waitForReadyPods('gateway.envoyproxy.io/owning-gateway-name=nebari-gateway', 1, 180000, gwNs);

  const inventory = await nls(['gateway', 'inventory', '--release', RELEASE, '--namespace', NAMESPACE, '--output', 'json']);
  expect(inventory.code).toBe(0);
  const found = JSON.parse(inventory.output) as { objects: { kind: string; name: string; owner: string; missingFinalizer: boolean }[] };
  const route = found.objects.find((o) => o.kind === 'AIGatewayRoute' && o.name.startsWith('openai'));
  expect(route).toMatchObject({ owner: 'operator', missingFinalizer: true });

  const standIn = startEnvoyGatewayStandIn(rest, 500);
  try {
    const started = Date.now();
    const rolled = await nls(['gateway', 'roll-dataplane', '--gateway', `${gwNs}/nebari-gateway`, '--timeout', '180s']);
    if (rolled.code !== 0) throw new Error(`nls gateway roll-dataplane failed (${rolled.code}):\n${rolled.output}`);
    figures.dataPlaneRollout = seconds(started);
  } finally {
    await standIn.stop();
  }
  const after = (await pods('gateway.envoyproxy.io/owning-gateway-name=nebari-gateway', gwNs)).filter(isPodReady);
  expect(after).toHaveLength(1);
  expect(after[0].metadata.uid).not.toBe(before[0].metadata.uid);
  expect(after[0].metadata.annotations?.['llm.nebari.dev/dataplane-rollout']).toBeTruthy();
});

/** Names, uids and key Secret data of every model, to prove nothing is lost. */
async function inventory(): Promise<string> {
  const rest = admin();
  const out: string[] = [];
  for (const kind of ['PassthroughModel', 'LLMModel', 'AgentDeployment']) {
    for (const o of (await rest.list(GROUP, kind, { namespace: NAMESPACE })).items) out.push(`${kind}/${o.metadata.name}/${o.metadata.uid}`);
  }
  for (const s of (await rest.list<KubeObject & { data?: Record<string, string> }>('v1', 'Secret', { namespace: NAMESPACE, labelSelector: 'app.kubernetes.io/managed-by=nebari-llm-serving' })).items) {
    out.push(`Secret/${s.metadata.name}/${JSON.stringify(s.data ?? {})}`);
  }
  return out.sort().join('\n');
}

async function allReady(): Promise<boolean> {
  for (const kind of ['PassthroughModel', 'LLMModel', 'AgentDeployment']) {
    for (const o of (await admin().list(GROUP, kind, { namespace: NAMESPACE })).items) if (!readyAtGeneration(o)) return false;
  }
  return true;
}

test('the operator pod deleted mid-reconcile: everything converges, nothing is lost', async () => {
  const before = await inventory();
  const pod = await operatorPod();
  for (let i = 0; i < 10; i++) await admin().create(passthrough(`burst-${i}`));
  await admin().delete(objectRef('v1', 'Pod', pod.metadata.name, NAMESPACE));
  const started = Date.now();
  await waitFor('every model Ready after the operator pod was deleted', allReady, { timeoutMs: 240000, intervalMs: 1000 });
  figures.convergeAfterPodDeletion = seconds(started);
  const after = await inventory();
  for (const line of before.split('\n')) expect(after).toContain(line);
});

test('with two replicas both serve the webhooks, and deleting the leader loses nothing', async () => {
  await helmOk(4, ['upgrade', RELEASE, chartRef, '--version', state.version, '-n', NAMESPACE, '--reuse-values', '--set', 'operator.replicas=2', '--wait', '--timeout', '5m']);
  const ready = await waitForReadyPods(OPERATOR_SELECTOR, 2);
  expect(ready.length).toBe(2);
  const lease = await admin().get<KubeObject & { spec: { holderIdentity?: string } }>(objectRef('coordination.k8s.io/v1', 'Lease', `${RELEASE}-operator-leader`, NAMESPACE));
  const leader = lease!.spec.holderIdentity!;
  expect(ready.map((p) => p.metadata.name)).toContain(leader);
  const before = await inventory();
  await admin().delete(objectRef('v1', 'Pod', leader, NAMESPACE));
  // Writes keep being admitted while the leader is gone (the standby serves the webhooks).
  await admin().create(passthrough('after-failover'));
  const started = Date.now();
  await waitFor('a new leader', async () => {
    const l = await admin().get<KubeObject & { spec: { holderIdentity?: string } }>(objectRef('coordination.k8s.io/v1', 'Lease', `${RELEASE}-operator-leader`, NAMESPACE));
    return !!l?.spec.holderIdentity && l.spec.holderIdentity !== leader;
  }, { timeoutMs: 120000 });
  await waitFor('every model Ready after the leader was deleted', allReady, { timeoutMs: 240000, intervalMs: 1000 });
  figures.failoverToAllReady = seconds(started);
  const after = await inventory();
  for (const line of before.split('\n')) expect(after).toContain(line);
});

test('nls upgrade to the next version rolls real pods through every phase, and nls rollback returns', async () => {
  const before = await inventory();
  const upgraded = await nls(['upgrade', '--chart', chartRef, '--version', state.next, '--plain-http', '--timeout', '4m']);
  if (upgraded.code !== 0) throw new Error(`nls upgrade failed (${upgraded.code}):\n${upgraded.output}\n${await podLogs(OPERATOR_SELECTOR)}`);
  for (const phase of ['guard', 'controller', 'activate', 'unguard']) expect(upgraded.output.toLowerCase()).toContain(phase);
  const running = await waitForReadyPods(OPERATOR_SELECTOR, 2);
  // Both published charts pin the same signed image by digest; the pods are the next version's.
  const version = (p: { metadata: { labels?: Record<string, string> } }) => p.metadata.labels?.['app.kubernetes.io/version'];
  expect(running.map((p) => [version(p), p.spec.containers[0].image])).toEqual(running.map(() => [state.next, `${state.images.operator.repository}@${state.images.operator.digest}`]));
  await waitFor('every model Ready after the upgrade', allReady, { timeoutMs: 240000, intervalMs: 1000 });
  expect(upgraded.output).toMatch(/==> \[1\/8\] preflight[\s\S]*preflight: nothing blocks the upgrade/);
  const verify = await nls(['verify', '--images']);
  if (verify.code !== 0) throw new Error(`nls verify after upgrade failed:\n${verify.output}`);

  const rolledBack = await nls(['rollback', '--to', state.version, '--chart', chartRef, '--plain-http', '--timeout', '4m']);
  if (rolledBack.code !== 0) throw new Error(`nls rollback failed (${rolledBack.code}):\n${rolledBack.output}\n${await podLogs(OPERATOR_SELECTOR)}`);
  await waitFor('operator pods back on the old version', async () => {
    const ready = (await pods(OPERATOR_SELECTOR)).filter(isPodReady);
    return ready.length === 2 && ready.every((p) => version(p) === state.version);
  }, { timeoutMs: 240000, intervalMs: 1000 });
  await waitFor('every model Ready after the rollback', allReady, { timeoutMs: 240000, intervalMs: 1000 });
  const after = await inventory();
  for (const line of before.split('\n')) expect(after).toContain(line);
});

test('the audit log shows no 403 answered to the operator, and which granted rules went unused', async () => {
  const report = await auditReport(state.auditLog, `system:serviceaccount:${NAMESPACE}:${OPERATOR_SA}`, RELEASE);
  figures.operatorRequestsAudited = String(report.requests);
  console.log(`least-privilege report (rules the chart grants that the operator never used in this run):\n${report.unused.map((r) => `  ${r}`).join('\n') || '  (none)'}`);
  const duringUninstall = report.forbidden.filter((f) => uninstalling.some((w) => f.at >= w.from && f.at <= w.to));
  console.log(`403s while the helm 3 release was being uninstalled (its Role deleted before its pod stopped): ${duringUninstall.length}`);
  expect(report.forbidden.filter((f) => !duringUninstall.includes(f)).map((f) => `${new Date(f.at).toISOString()} ${f.request}`)).toEqual([]);
  expect(report.requests).toBeGreaterThan(100);
});

test('the audit log shows no 403 answered to the key portal', async () => {
  const report = await auditReport(state.auditLog, `system:serviceaccount:${NAMESPACE}:${PORTAL_SA}`, RELEASE);
  figures.portalRequestsAudited = String(report.requests);
  console.log(`least-privilege report for the portal:\n${report.unused.map((r) => `  ${r}`).join('\n') || '  (none)'}`);
  expect(report.forbidden.map((f) => `${new Date(f.at).toISOString()} ${f.request}`)).toEqual([]);
  expect(report.requests).toBeGreaterThan(10);
});
