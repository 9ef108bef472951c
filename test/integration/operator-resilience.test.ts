// On a private control plane (its CRD set and API server are this file's to break): a model
// created before the gateway CRDs exist gets GatewayCRDUnavailable and converges once they are
// installed, without an operator restart; after an API server restart the operator reconnects
// its watches and converges on changes made while it was down.
import { startControlPlane, type ControlPlane } from '../support/cluster';
import { waitFor } from '../support/processes';
import { KubeRest, KubeObject, objectRef } from '../../src/kube/rest';
import { OperatorProcess, condition, installGatewayCRDs, installOwnCRDs, isReadyAtGeneration, passthroughModel, providerCredential, startOperator } from './operator-support';

const ns = 'models';
let plane: ControlPlane;
let client: KubeRest;
let operator: OperatorProcess;

const get = (name: string) => client.get(objectRef('llm.nebari.dev/v1alpha1', 'PassthroughModel', name, ns));

beforeAll(async () => {
  plane = await startControlPlane({ mode: 'apiserver' });
  await installOwnCRDs(plane.kubeConfig());
  client = new KubeRest(plane.kubeConfig());
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, { fieldManager: 'test' });
  await client.create(providerCredential(ns), { fieldManager: 'test' });
  operator = startOperator({ kubeconfigPath: plane.kubeconfigPath, namespace: ns, name: 'resilient', leaderElection: true });
}, 180_000);

afterAll(async () => {
  if (operator && operator.child.exitCode === null) await operator.kill();
  client?.close();
  await plane?.stop();
});

it('degrades with GatewayCRDUnavailable while the gateway CRDs are missing, then converges without a restart', async () => {
  await client.apply(passthroughModel(ns, 'early'), { fieldManager: 'test' });
  await waitFor('GatewayCRDUnavailable', async () => condition(await get('early'), 'ExternalEndpointReady')?.reason === 'GatewayCRDUnavailable');
  const degraded = (await get('early'))!;
  expect(degraded.status).toMatchObject({ phase: 'Error' });
  expect(condition(degraded, 'BackendConfigured')).toMatchObject({ status: 'False', reason: 'GatewayCRDUnavailable' });
  expect(condition(degraded, 'BackendConfigured')!.message).toContain('AIServiceBackend.aigateway.envoyproxy.io/v1beta1');

  await installGatewayCRDs(plane.kubeConfig());
  await waitFor('the model Ready after the CRDs appear', async () => isReadyAtGeneration(await get('early')), { timeoutMs: 90_000 });
  expect(await client.get(objectRef('aigateway.envoyproxy.io/v1beta1', 'AIGatewayRoute', 'early-external', ns))).toBeDefined();
  expect(operator.child.exitCode).toBeNull();
});

it('reconnects after an API server restart and converges on what changed meanwhile', async () => {
  await client.apply(passthroughModel(ns, 'before'), { fieldManager: 'test' });
  await waitFor('model before Ready', async () => isReadyAtGeneration(await get('before')));
  await plane.restartApiServer();
  // Changes made right after the restart must be seen through the re-opened watches.
  await client.apply(passthroughModel(ns, 'after'), { fieldManager: 'test' });
  await client.apply(passthroughModel(ns, 'before', { declared: ['gpt-4o', 'o3'] }), { fieldManager: 'test' });
  await waitFor('both models Ready at their generation', async () => isReadyAtGeneration(await get('after')) && isReadyAtGeneration(await get('before')), { timeoutMs: 120_000 });
  const route = await client.get<KubeObject>(objectRef('aigateway.envoyproxy.io/v1beta1', 'AIGatewayRoute', 'before-external', ns));
  expect(JSON.stringify(route?.spec)).toContain('o3');
  expect(operator.child.exitCode).toBeNull();
  expect(operator.lines.some((l) => /watch failed; reconnecting|listing again/.test(l))).toBe(true);
});
