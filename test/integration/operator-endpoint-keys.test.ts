// The keys every model's external SecurityPolicy accepts, with the operator process against the
// shared control plane. Envoy authenticates a request before the AI Gateway re-routes it by model,
// on whichever model's route is oldest on the host, so every external policy must list the key
// Secrets of all models on the endpoint (authorization stays per model). Models of both kinds join
// in an order that is neither alphabetical nor by kind, one leaves by deletion, one by disabling
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

/** Waits until the external policy of each of `models` accepts exactly the key Secrets of `members`. */
async function expectEveryPolicyToAccept(models: string[], members: string[]): Promise<void> {
  const expected = members.map((m) => `${m}-api-keys`).sort();
  const seen = async () => Object.fromEntries(await Promise.all(models.map(async (m) => [m, await keySecretsOf(m)] as const)));
  try {
    await waitFor(`every external policy of ${models.join(', ')} to accept the keys of ${members.join(', ')}`, async () => {
      const all = await seen();
      return models.every((m) => JSON.stringify(all[m]) === JSON.stringify(expected));
    }, { timeoutMs: 60_000 });
  } finally {
    expect(await seen()).toEqual(Object.fromEntries(models.map((m) => [m, expected])));
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

it('every external policy accepts the key Secrets of all three models, created in an order neither alphabetical nor by kind', async () => {
  await applyObject(passthroughModel(ns, 'zeta', { declared: ['zeta-model'] }));
  await waitFor('zeta published', async () => condition(await getObject(passthroughModel(ns, 'zeta')), 'ExternalEndpointReady')?.status === 'True');
  await applyObject(llmModel('alpha'));
  await applyObject(passthroughModel(ns, 'mid', { declared: ['mid-model'] }));
  await expectEveryPolicyToAccept(['zeta', 'alpha', 'mid'], ['zeta', 'alpha', 'mid']);
  // Authorization is still the model's own: no client IDs yet, so it denies everyone.
  expect((await policy('alpha'))!.spec.authorization).toEqual({ defaultAction: 'Deny' });
  // Each key Secret the policies name exists (a policy never names a Secret that is not there).
  for (const name of ['zeta', 'alpha', 'mid']) {
    expect(await getObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name: `${name}-api-keys`, namespace: ns } })).toBeDefined();
  }
});

it('after one model is deleted, the remaining two accept exactly their two', async () => {
  await deleteObject({ apiVersion: 'llm.nebari.dev/v1beta1', kind: 'LLMModel', metadata: { name: 'alpha', namespace: ns } });
  await waitFor('alpha gone', async () => (await getObject({ apiVersion: 'llm.nebari.dev/v1beta1', kind: 'LLMModel', metadata: { name: 'alpha', namespace: ns } })) === undefined);
  await expectEveryPolicyToAccept(['zeta', 'mid'], ['zeta', 'mid']);
});

it('a model that disables its external endpoint leaves the others\' policies; one that joins again is in all of them', async () => {
  await applyObject(passthroughModel(ns, 'mid', { declared: ['mid-model'], external: false }));
  await waitFor('mid external policy gone', async () => (await policy('mid')) === undefined);
  await expectEveryPolicyToAccept(['zeta'], ['zeta']);
  await applyObject(llmModel('alpha'));
  await applyObject(passthroughModel(ns, 'mid', { declared: ['mid-model'] }));
  await expectEveryPolicyToAccept(['mid', 'alpha', 'zeta'], ['zeta', 'alpha', 'mid']);
  // An LLMModel whose endpoint is internal only has no external policy and is in none.
  await applyObject(llmModel('internal-only', false));
  await waitFor('internal-only published', async () => condition(await getObject(llmModel('internal-only')), 'InternalEndpointReady')?.status === 'True');
  expect(await policy('internal-only')).toBeUndefined();
  await expectEveryPolicyToAccept(['mid', 'alpha', 'zeta'], ['zeta', 'alpha', 'mid']);
});
