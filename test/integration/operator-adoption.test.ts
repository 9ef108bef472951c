// The adoption rule on a real API server: the operator never takes over an object of the desired
// name that someone else created (it reports a Conflict naming the object and its manager, and
// proceeds once that object is gone), and it gives `spec.replicas` up to a HorizontalPodAutoscaler
// that targets its Deployment, while still putting back a hand edit when no autoscaler does; a
// cache that lags someone else's create does not turn into a takeover.
import { applyObject, createNamespace, deleteObject, getObject, kubeConfig, kubeconfigPath, uniqueName } from '../support/cluster';
import { waitFor } from '../support/processes';
import { KubeObject, KubeRest, type OwnerReference } from '../../src/kube/rest';
import { AdoptionConflict, applyObject as operatorApply } from '../../src/operator/runtime/apply';
import { registerCachedKind } from '../../src/operator/runtime/cached-lookups';
import { OperatorProcess, condition, installGatewayCRDs, installOwnCRDs, startOperator } from './operator-support';

const GROUP = 'llm.nebari.dev/v1alpha1';
const ns = uniqueName('op-adopt');
let operator: OperatorProcess;
let client: KubeRest;

const agent = (name: string, extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: GROUP,
  kind: 'AgentDeployment',
  metadata: { name, namespace: ns },
  spec: {
    image: 'example.com/agent:1',
    replicas: 1,
    model: { externalAPI: { type: 'anthropic', baseURL: 'https://api.anthropic.com', modelName: 'claude-sonnet-4', credentialsRef: { name: 'anthropic', key: 'apiKey' } } },
    ...extra,
  },
});
const deploymentRef = (name: string) => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace: ns } });
type Deployment = KubeObject & { spec: { replicas?: number; template: { spec: { containers: { env?: { name: string; value?: string }[] }[] } } } };
const getAgent = (name: string) => getObject<KubeObject>({ apiVersion: GROUP, kind: 'AgentDeployment', metadata: { name, namespace: ns } });
const getDeployment = (name: string) => getObject<Deployment>(deploymentRef(name));
const hasEnv = (d: Deployment | undefined, name: string) => !!d?.spec.template.spec.containers[0].env?.some((e) => e.name === name);

/** Sets the Deployment's replicas through the scale subresource, as the HPA controller or `kubectl scale` do. */
async function scale(name: string, replicas: number, manager: string): Promise<void> {
  await client.request('PATCH', `/apis/apps/v1/namespaces/${ns}/deployments/${name}/scale`, {
    query: { fieldManager: manager },
    body: { spec: { replicas } },
    contentType: 'application/merge-patch+json',
  });
}

beforeAll(async () => {
  await installOwnCRDs();
  await installGatewayCRDs();
  await createNamespace(ns);
  await applyObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'anthropic', namespace: ns }, stringData: { apiKey: 'sk-ant-test-value-not-real-0000000000' } });
  client = new KubeRest(kubeConfig());
  operator = startOperator({ kubeconfigPath: kubeconfigPath(), namespace: ns, name: 'adoption-operator' });
});

afterAll(async () => {
  if (operator?.child.exitCode === null) await operator.kill();
  client?.close();
});

it('reports a Conflict for a Deployment someone else created, never changes it, and proceeds once it is gone', async () => {
  const foreign = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'squatted', namespace: ns, labels: { app: 'theirs' } },
    spec: { replicas: 2, selector: { matchLabels: { app: 'theirs' } }, template: { metadata: { labels: { app: 'theirs' } }, spec: { containers: [{ name: 'web', image: 'example.com/theirs:1' }] } } },
  };
  await client.create(foreign as unknown as KubeObject, { fieldManager: 'someone-else' });
  const before = (await getDeployment('squatted'))!;

  await applyObject(agent('squatted'));
  await waitFor('a Conflict condition', async () => condition(await getAgent('squatted'), 'ProviderReady')?.reason === 'Conflict');
  const ready = condition(await getAgent('squatted'), 'ProviderReady')!;
  expect(ready.message).toContain(`Deployment ${ns}/squatted already exists and was not created by the operator for AgentDeployment squatted (its fields are managed by someone-else)`);
  expect(ready.message).toContain('delete or rename');
  const after = (await getDeployment('squatted'))!;
  // Untouched: same spec, labels and generation, no owner, no field of ours (status is the controllers').
  expect(after.spec).toEqual(before.spec);
  expect(after.metadata.generation).toBe(before.metadata.generation);
  expect(after.metadata.labels).toEqual({ app: 'theirs' });
  expect(after.metadata.ownerReferences).toBeUndefined();
  expect(JSON.stringify(after.metadata.managedFields)).not.toContain('nebari-llm-serving-operator');

  await deleteObject(deploymentRef('squatted'));
  await waitFor('the agent applied once the name is free', async () => condition(await getAgent('squatted'), 'ProviderReady')?.reason === 'Applied', { timeoutMs: 60_000 });
  expect((await getDeployment('squatted'))!.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'AgentDeployment', name: 'squatted', controller: true });
});

it('puts back a hand-scaled replica count, but leaves replicas to an autoscaler that targets the Deployment', async () => {
  await applyObject(agent('scaled'));
  await waitFor('scaled applied', async () => condition(await getAgent('scaled'), 'ProviderReady')?.reason === 'Applied', { timeoutMs: 60_000 });

  // No autoscaler: a `kubectl scale` is drift; the next reconcile (here: a spec change) restores the spec.
  await scale('scaled', 3, 'kubectl');
  await applyObject(agent('scaled', { env: [{ name: 'ROUND', value: '1' }] }));
  await waitFor('round 1 applied', async () => hasEnv(await getDeployment('scaled'), 'ROUND'));
  expect((await getDeployment('scaled'))!.spec.replicas).toBe(1);

  // With an HPA targeting it, the autoscaler's count stays through later reconciles.
  await applyObject({
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'scaled', namespace: ns },
    spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'scaled' }, minReplicas: 1, maxReplicas: 5, metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }] },
  });
  await scale('scaled', 4, 'kube-controller-manager');
  await applyObject(agent('scaled', { env: [{ name: 'ROUND', value: '1' }, { name: 'ROUND2', value: '2' }] }));
  await waitFor('round 2 applied', async () => hasEnv(await getDeployment('scaled'), 'ROUND2'));
  expect((await getDeployment('scaled'))!.spec.replicas).toBe(4);
  expect(operator.lines.filter((l) => /\b403\b|forbidden/i.test(l))).toEqual([]);
});

it('a cache that has not yet seen someone else\'s new object does not let the apply take it over', async () => {
  // The informer cache lags a create by someone else: it still says the name is free. The first
  // apply is then not forced, so the foreign object's own fields make the API server refuse it.
  const route = (labels: Record<string, string>, backend: string, owner?: OwnerReference): KubeObject => ({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name: 'lagged', namespace: ns, labels, ...(owner ? { ownerReferences: [owner] } : {}) },
    spec: { rules: [{ backendRefs: [{ name: backend, port: 8000 }] }] },
  } as unknown as KubeObject);
  const stale = new KubeRest(kubeConfig());
  registerCachedKind(stale, 'gateway.networking.k8s.io/v1', 'HTTPRoute', ns, { get: () => undefined, hasSynced: true });
  try {
    await client.create(route({ app: 'theirs' }, 'theirs'), { fieldManager: 'someone-else' });
    const before = (await getObject<KubeObject>(route({}, '')))!;
    const owner: OwnerReference = { apiVersion: GROUP, kind: 'PassthroughModel', name: 'lagged', uid: '00000000-0000-0000-0000-00000000a11e', controller: true, blockOwnerDeletion: true };

    await expect(operatorApply(stale, route({ app: 'ours' }, 'ours', owner))).rejects.toThrow(AdoptionConflict);
    const after = (await getObject<KubeObject>(route({}, '')))!;
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(after.metadata.ownerReferences).toBeUndefined();

    // A name that is really free is created by the same unforced apply.
    const fresh = { ...route({ app: 'ours' }, 'ours', owner), metadata: { ...route({ app: 'ours' }, 'ours', owner).metadata, name: 'lagged-free' } };
    const created = await operatorApply(stale, fresh);
    expect(created.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'PassthroughModel', uid: owner.uid });
    // Its owner does not exist, so the garbage collector would delete it moments later, inside the
    // next test file's count of writes (operator-restart.test.ts): removed here instead.
    await deleteObject(fresh);
    await waitFor('the route without an owner gone', async () => (await getObject(fresh)) === undefined);
  } finally {
    stale.close();
  }
});
