// Key objects are never adopted (issue 29, Low): a Secret or ConfigMap someone else created under a
// model's key-object name (to plant keys of their choosing, or another model's whose name cuts to
// the same bounded name) leaves the model unpublished with reason Conflict naming the object and
// the fix, is not changed, and is not deleted with the model; once it is gone the model proceeds.
import { applyObject, deleteObject, getObject, kubeconfigPath, uniqueName } from '../support/cluster';
import { waitFor } from '../support/processes';
import { KubeObject, KubeRest } from '../../src/kube/rest';
import { OperatorProcess, condition, isReadyAtGeneration, passthroughModel, prepareOperatorNamespace, startOperator } from './operator-support';

const ns = uniqueName('key-objects');
const ref = (apiVersion: string, kind: string, name: string) => ({ apiVersion, kind, metadata: { name, namespace: ns } });
const getModel = (name: string) => getObject<KubeObject>(ref('llm.nebari.dev/v1beta1', 'PassthroughModel', name));
let client: KubeRest;
let operator: OperatorProcess;

beforeAll(async () => {
  client = await prepareOperatorNamespace(ns);
  operator = startOperator({ kubeconfigPath: kubeconfigPath(), namespace: ns, name: 'operator-key-objects' });
});

afterAll(async () => {
  if (operator && operator.child.exitCode === null) await operator.kill();
  client?.close();
});

it('refuses to adopt a key Secret it did not create, leaves it untouched, and proceeds once it is gone', async () => {
  const planted = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'planted-api-keys', namespace: ns, labels: { app: 'theirs' } }, stringData: { 'their-client': 'sk-planted-key-not-real' } };
  await applyObject(planted);
  const before = (await getObject<KubeObject & { data?: Record<string, string> }>(planted))!;

  await applyObject(passthroughModel(ns, 'planted'));
  await waitFor('a Conflict on the external endpoint', async () => condition(await getModel('planted'), 'ExternalEndpointReady')?.reason === 'Conflict', { timeoutMs: 60_000 });
  const message = condition(await getModel('planted'), 'ExternalEndpointReady')!.message;
  expect(message).toContain(`Secret ${ns}/planted-api-keys already exists and is not the API-key object of PassthroughModel planted`);
  expect(message).toContain(`delete or rename Secret ${ns}/planted-api-keys`);
  // Nothing published with the planted key, and the Secret is as its author left it.
  expect(await getObject(ref('gateway.envoyproxy.io/v1alpha1', 'SecurityPolicy', 'planted-external-auth'))).toBeUndefined();
  const after = (await getObject<KubeObject & { data?: Record<string, string> }>(planted))!;
  expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
  expect(after.metadata.labels).toEqual({ app: 'theirs' });

  await deleteObject(planted);
  await waitFor('the model Ready once the name is free', async () => isReadyAtGeneration(await getModel('planted')), { timeoutMs: 60_000 });
  const ours = (await getObject<KubeObject & { data?: Record<string, string> }>(planted))!;
  expect(ours.metadata.labels?.['llm.nebari.dev/api-keys']).toBe('true');
  expect(ours.data ?? {}).toEqual({});
});

it('does not delete a foreign key object with a model that never owned it', async () => {
  const foreign = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'gone-api-key-metadata', namespace: ns }, data: { note: 'not the operator\'s' } };
  await applyObject(foreign);
  await applyObject(passthroughModel(ns, 'gone'));
  await waitFor('a Conflict', async () => condition(await getModel('gone'), 'ExternalEndpointReady')?.reason === 'Conflict', { timeoutMs: 60_000 });
  await deleteObject(ref('llm.nebari.dev/v1beta1', 'PassthroughModel', 'gone'));
  await waitFor('the model gone', async () => (await getModel('gone')) === undefined, { timeoutMs: 60_000 });
  expect((await getObject<KubeObject & { data?: Record<string, string> }>(foreign))?.data).toEqual({ note: 'not the operator\'s' });
});
