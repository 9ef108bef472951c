// Per-key token quotas end to end below the data plane: the chart rendered with quotas on gives the
// operator its NLS_QUOTAS and its RBAC; the operator, running with a token of the chart's
// ServiceAccount against a real API server with the Envoy Gateway 1.8.1 / AI Gateway 1.1.0 CRDs,
// reads each key's tier from the key metadata and applies the external route's costs and the
// model's Global BackendTrafficPolicy; a revoked key leaves the policy; restarted with quotas off,
// it deletes the policy and the costs. No request may be denied. A private control plane.
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { applyObject, type ControlPlane, getObject, rest, startControlPlane, uniqueName } from '../support/cluster';
import { waitFor } from '../support/processes';
import { mintKey, revokeKey } from '../../src/api-keys/key-store';
import { plainObjects } from '../../src/chart/render';
import { defaultValues } from '../../src/chart/values-schema';
import { KubeObject, KubeRest } from '../../src/kube/rest';
import { apiKeyMetadataConfigMapName, apiKeysSecretName } from '../../src/translate/keys/api-keys';
import { OperatorProcess, installGatewayCRDs, installOwnCRDs, isReadyAtGeneration, passthroughModel, providerCredential, startOperator } from './operator-support';

const ns = uniqueName('op-quota');
const release = uniqueName('quota');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-quota-'));
const values = defaultValues();
// The operator's test environment names an issuer (operator-support.ts), so the chart carries the
// audiences that must go with it (issue 29, Medium 9).
values.platform.jwt.audiences = ['nebari-llm'];
values.quotas = {
  rateLimitBackend: 'redis://redis.envoy-gateway-system:6379',
  costType: 'OutputToken',
  defaultTier: 'standard',
  tiers: [
    { name: 'standard', tokens: 100000, unit: 'Hour' },
    { name: 'large', tokens: 5000000, unit: 'Day', requestsPerMinute: 60 },
  ],
};
const chart = plainObjects(values, { releaseName: release, namespace: ns }) as KubeObject[];
const deployment = chart.find((o) => o.kind === 'Deployment' && o.metadata.name.endsWith('-operator')) as KubeObject & {
  spec: { template: { spec: { serviceAccountName: string; containers: { env: { name: string; value?: string }[] }[] } } };
};
const chartEnv = Object.fromEntries(deployment.spec.template.spec.containers[0].env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));
const model = { kind: 'PassthroughModel' as const, name: 'quota-model', namespace: ns };
const policyRef = { apiVersion: 'gateway.envoyproxy.io/v1alpha1', kind: 'BackendTrafficPolicy', metadata: { name: 'quota-model-external-quota', namespace: ns } };
const routeRef = { apiVersion: 'aigateway.envoyproxy.io/v1beta1', kind: 'AIGatewayRoute', metadata: { name: 'quota-model-external', namespace: ns } };

type Rule = { clientSelectors: Array<{ headers: Array<{ value: string }> }>; limit: { requests: number; unit: string } };
const rulesOf = async () => ((await getObject<{ spec: { rateLimit: { global: { rules: Rule[] } } } }>(policyRef, admin))?.spec.rateLimit.global.rules ?? []).map((r) => `${r.clientSelectors[0].headers[0].value} ${r.limit.requests}/${r.limit.unit}`);
const costsOf = async () => (await getObject<{ spec: { llmRequestCosts?: unknown } }>(routeRef, admin))?.spec.llmRequestCosts;

let plane: ControlPlane;
let admin: k8s.KubeConfig;
let client: KubeRest;
let kubeconfigPath: string;
let operator: OperatorProcess | undefined;
const denials: string[] = [];

/** A kubeconfig file for the chart's ServiceAccount, with a token from the TokenRequest API. */
async function serviceAccountKubeconfig(serviceAccount: string): Promise<string> {
  const review = await rest(admin).request<{ status: { token: string } }>('POST', `/api/v1/namespaces/${ns}/serviceaccounts/${serviceAccount}/token`, {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  const cluster = admin.getCurrentCluster()!;
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({ clusters: [cluster], users: [{ name: serviceAccount, token: review.status.token }], contexts: [{ name: 'sa', cluster: cluster.name, user: serviceAccount }], currentContext: 'sa' });
  const file = path.join(tmp, 'kubeconfig');
  fs.writeFileSync(file, kc.exportConfig());
  return file;
}

function start(name: string, env: Record<string, string>): OperatorProcess {
  return startOperator({
    kubeconfigPath,
    namespace: ns,
    name,
    releaseName: release,
    leaderElection: false,
    env: { ...env, NLS_WEBHOOKS: 'false', NLS_HEALTH_PORT: '0', NLS_METRICS_PORT: '0', NLS_BIND_ADDRESS: '127.0.0.1', NLS_BASE_DOMAIN: 'example.com', NLS_CONVERSION_CRDS: '' },
  });
}

async function stop(): Promise<void> {
  if (!operator) return;
  denials.push(...operator.lines.filter((l) => /\b403\b|forbidden/i.test(l)));
  if (operator.child.exitCode === null) await operator.stop();
  operator = undefined;
}

beforeAll(async () => {
  plane = await startControlPlane({ mode: 'apiserver' });
  admin = plane.kubeConfig();
  client = new KubeRest(admin);
  await installOwnCRDs(admin);
  await installGatewayCRDs(admin);
  await applyObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, { kubeConfig: admin });
  for (const o of chart.filter((x) => ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'].includes(x.kind))) await applyObject(o, { kubeConfig: admin });
  await applyObject(providerCredential(ns), { kubeConfig: admin });
  kubeconfigPath = await serviceAccountKubeconfig(deployment.spec.template.spec.serviceAccountName);
}, 180_000);

afterAll(async () => {
  if (operator && operator.child.exitCode === null) await operator.kill();
  client?.close();
  await plane?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

test('the chart passes the quota settings to the operator only with a rate-limit backend', () => {
  expect(JSON.parse(chartEnv.NLS_QUOTAS)).toEqual({ costType: 'OutputToken', defaultTier: 'standard', tiers: values.quotas.tiers });
});

test('quotas on: costs on the external route; a policy with each key at its tier once keys exist; a revoked key leaves it', async () => {
  operator = start('quota-0', chartEnv);
  await operator.waitForLine(/"msg":"informers listed and watching".*"kind":"PassthroughModel"/, 60_000);
  await applyObject(passthroughModel(ns, 'quota-model'), { kubeConfig: admin });
  const modelRef = { apiVersion: 'llm.nebari.dev/v1beta1', kind: 'PassthroughModel', metadata: { name: 'quota-model', namespace: ns } };
  await waitFor('quota-model Ready', async () => isReadyAtGeneration(await getObject(modelRef, admin)), { timeoutMs: 60_000 }).catch(async (err: Error) => {
    throw new Error(`${err.message}\nstatus: ${JSON.stringify((await getObject(modelRef, admin))?.status)}\noperator:\n${operator?.lines.slice(-15).join('\n')}`);
  });
  expect(await costsOf()).toEqual([{ metadataKey: 'llm_quota_tokens', type: 'OutputToken' }]);
  // No keys yet: nobody passes the SecurityPolicy, so there is nothing to limit.
  expect(await getObject(policyRef, admin)).toBeUndefined();

  // A key minted by the CLI (no tier: the default tier)...
  const alice = await mintKey(client, model, 'alice');
  // ...and one minted with a tier as the key record carries it (record first, then the Secret entry, as mintKey writes them).
  const bob = `quota-model-bob-${randomBytes(8).toString('hex')}`;
  await applyObject(
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: apiKeyMetadataConfigMapName('quota-model'), namespace: ns }, data: { [bob]: JSON.stringify({ clientId: bob, createdBy: 'bob', createdAt: new Date().toISOString(), tier: 'large', source: 'portal' }) } },
    { kubeConfig: admin, fieldManager: 'test-portal' },
  );
  const minted = Date.now();
  await applyObject(
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: apiKeysSecretName('quota-model'), namespace: ns }, data: { [bob]: Buffer.from(`sk-${randomBytes(32).toString('base64url')}`).toString('base64') } },
    { kubeConfig: admin, fieldManager: 'test-portal' },
  );
  const expected = [`${alice.clientId} 100000/Hour`, `${bob} 5000000/Day`, `${bob} 60/Minute`].sort();
  await waitFor('the quota policy with both keys', async () => JSON.stringify((await rulesOf()).sort()) === JSON.stringify(expected), { timeoutMs: 60_000, intervalMs: 200 });
  console.log(`quota policy with a new key's tier applied ${Date.now() - minted} ms after the key was stored`);

  expect(await revokeKey(client, model, alice.clientId)).toBe(true);
  await waitFor('the revoked key leaves the policy', async () => JSON.stringify(await rulesOf()) === JSON.stringify([`${bob} 5000000/Day`, `${bob} 60/Minute`]), { timeoutMs: 60_000, intervalMs: 200 });
  await stop();
  expect(denials).toEqual([]);
}, 180_000);

test('quotas turned off (the operator restarted without NLS_QUOTAS): the policy and the route costs are removed', async () => {
  const { NLS_QUOTAS: _off, ...withoutQuotas } = chartEnv;
  operator = start('quota-1', withoutQuotas);
  const started = Date.now();
  await waitFor('the quota policy deleted', async () => (await getObject(policyRef, admin)) === undefined, { timeoutMs: 60_000, intervalMs: 200 });
  await waitFor('the route without costs', async () => (await costsOf()) === undefined, { timeoutMs: 30_000, intervalMs: 200 });
  console.log(`quota policy deleted ${Date.now() - started} ms after the operator started without quotas`);
  await stop();
  expect(denials).toEqual([]);
}, 120_000);
