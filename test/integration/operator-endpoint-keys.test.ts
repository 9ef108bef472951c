// The keys each model's external SecurityPolicy accepts, with the operator process against the
// shared control plane. Envoy authenticates a request before the AI Gateway re-routes it by model,
// on the endpoint's oldest HTTPRoute, so the external policies of the models whose routes are the
// two oldest list the key Secrets of all models on the endpoint, and every other policy only its
// model's own (authorization stays per model). No AI Gateway controller runs here: the test
// creates the generated HTTPRoutes itself, in the order it wants. Models of both kinds join in an
// order that is neither alphabetical nor by kind, the oldest leaves by deletion, one by disabling
// its external endpoint, and one comes back; the policies are read back as stored.
import { applyObject, deleteObject, getObject, kubeconfigPath, uniqueName } from '../support/cluster';
import { waitFor } from '../support/processes';
import { KubeRest, KubeObject } from '../../src/kube/rest';
import { OperatorProcess, condition, passthroughModel, prepareOperatorNamespace, startOperator } from './operator-support';

const ns = uniqueName('op-endpoint-keys');
let client: KubeRest;
let operator: OperatorProcess;

const llmModel = (name: string, external = true): KubeObject => ({
  apiVersion: 'llm.nebari.dev/v1beta1',
  kind: 'LLMModel',
  metadata: { name, namespace: ns },
  spec: {
    model: { name: `org/${name}`, source: 'huggingface', storage: { type: 'emptyDir' } },
    provider: { name: 'vllm' },
    resources: { gpu: { count: 0, type: 'nvidia' }, requests: { cpu: '100m', memory: '128Mi' } },
    access: { public: true },
    endpoints: { external: { enabled: external } },
  },
});

interface StoredPolicy {
  spec: { apiKeyAuth: { credentialRefs: { group?: string; kind?: string; name: string }[] }; authorization: { defaultAction: string } };
}
const policy = (model: string) => getObject<StoredPolicy>({ apiVersion: 'gateway.envoyproxy.io/v1alpha1', kind: 'SecurityPolicy', metadata: { name: `${model}-external-auth`, namespace: ns } });
const keySecretsOf = async (model: string) => (await policy(model))?.spec.apiKeyAuth.credentialRefs.map((r) => r.name);

/** Waits until the external policy of each model accepts exactly the key Secrets given for it. */
async function expectPolicies(expected: Record<string, string[]>): Promise<void> {
  const want = Object.fromEntries(Object.entries(expected).map(([m, members]) => [m, members.map((x) => `${x}-api-keys`).sort()]));
  const seen = async () => Object.fromEntries(await Promise.all(Object.keys(want).map(async (m) => [m, await keySecretsOf(m)] as const)));
  try {
    await waitFor(`the external policies to accept ${JSON.stringify(expected)}`, async () => JSON.stringify(await seen()) === JSON.stringify(want), { timeoutMs: 60_000 });
  } finally {
    expect(await seen()).toEqual(want);
  }
}

const routeRef = (model: string): KubeObject => ({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: `${model}-external`, namespace: ns } });

/**
 * Creates the HTTPRoutes the AI Gateway controller would generate, in this order and in distinct
 * seconds (the API server's creation times have whole seconds; ties go by name).
 */
async function createRoutes(...models: string[]): Promise<void> {
  for (const [i, model] of models.entries()) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, 1100));
    await client.create({ ...routeRef(model), spec: { rules: [{ backendRefs: [{ name: model, port: 80 }] }] } } as KubeObject);
  }
}

beforeAll(async () => {
  client = await prepareOperatorNamespace(ns);
  operator = startOperator({ kubeconfigPath: kubeconfigPath(), namespace: ns, name: 'endpoint-keys-operator' });
});

afterAll(async () => {
  if (operator?.child.exitCode === null) await operator.kill();
  client?.close();
});

it('before any route exists, the first two models by route name accept every model\'s keys and the third only its own', async () => {
  await applyObject(passthroughModel(ns, 'zeta', { declared: ['zeta-model'] }));
  await waitFor('zeta published', async () => condition(await getObject(passthroughModel(ns, 'zeta')), 'ExternalEndpointReady')?.status === 'True');
  await applyObject(llmModel('alpha'));
  await applyObject(passthroughModel(ns, 'mid', { declared: ['mid-model'] }));
  await expectPolicies({ alpha: ['zeta', 'alpha', 'mid'], mid: ['zeta', 'alpha', 'mid'], zeta: ['zeta'] });
  // Authorization is still the model's own: no client IDs yet, so it denies everyone.
  expect((await policy('alpha'))!.spec.authorization).toEqual({ defaultAction: 'Deny' });
  // Each key Secret the policies name exists (a policy never names a Secret that is not there).
  for (const name of ['zeta', 'alpha', 'mid']) {
    expect(await getObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name: `${name}-api-keys`, namespace: ns } })).toBeDefined();
  }
});

it('once the routes exist, the models of the two oldest routes accept every key, whatever their names', async () => {
  await createRoutes('zeta', 'mid', 'alpha');
  await expectPolicies({ zeta: ['zeta', 'alpha', 'mid'], mid: ['zeta', 'alpha', 'mid'], alpha: ['alpha'] });
});

it('when the oldest model is deleted, the next two accept every remaining key before its route goes', async () => {
  await deleteObject(passthroughModel(ns, 'zeta'));
  // Its route is still the oldest while it goes (the AI Gateway removes it after the AIGatewayRoute).
  await expectPolicies({ mid: ['alpha', 'mid'], alpha: ['alpha', 'mid'] });
  await deleteObject(routeRef('zeta'));
  await waitFor('zeta gone', async () => (await getObject(passthroughModel(ns, 'zeta'))) === undefined);
  await expectPolicies({ mid: ['alpha', 'mid'], alpha: ['alpha', 'mid'] });
});

it('a model that disables its external endpoint leaves the others\' policies; one that joins again accepts only its own keys, its route being the youngest', async () => {
  await applyObject(passthroughModel(ns, 'mid', { declared: ['mid-model'], external: false }));
  // The operator removes the policy once the generated route is gone, as the AI Gateway would remove it.
  await deleteObject(routeRef('mid'));
  await waitFor('mid external policy gone', async () => (await policy('mid')) === undefined);
  await expectPolicies({ alpha: ['alpha'] });
  await applyObject(passthroughModel(ns, 'zeta', { declared: ['zeta-model'] }));
  await applyObject(passthroughModel(ns, 'mid', { declared: ['mid-model'] }));
  // alpha's route is the oldest; of the two without a route yet, mid comes first by name.
  await expectPolicies({ alpha: ['zeta', 'alpha', 'mid'], mid: ['zeta', 'alpha', 'mid'], zeta: ['zeta'] });
  await createRoutes('zeta', 'mid');
  await expectPolicies({ alpha: ['zeta', 'alpha', 'mid'], zeta: ['zeta', 'alpha', 'mid'], mid: ['mid'] });
  // An LLMModel whose endpoint is internal only has no external policy and is in none.
  await applyObject(llmModel('internal-only', false));
  await waitFor('internal-only published', async () => condition(await getObject(llmModel('internal-only')), 'InternalEndpointReady')?.status === 'True');
  expect(await policy('internal-only')).toBeUndefined();
  await expectPolicies({ alpha: ['zeta', 'alpha', 'mid'], zeta: ['zeta', 'alpha', 'mid'], mid: ['mid'] });
});
