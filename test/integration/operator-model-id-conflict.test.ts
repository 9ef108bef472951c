// Two models that serve one model id on one endpoint, stored before the webhook refused such pairs
// (issue 29, Low): the operator says so on both (ModelIdConflict=True, naming the other model and
// the fix), and clears it on the remaining one once the other is gone, without a spec change.
import { applyObject, kubeconfigPath, uniqueName } from '../support/cluster';
import { waitFor } from '../support/processes';
import { KubeRest, objectRef } from '../../src/kube/rest';
import { OperatorProcess, condition, passthroughModel, prepareOperatorNamespace, startOperator } from './operator-support';

const ns = uniqueName('model-id-conflict');
const modelRef = (name: string) => objectRef('llm.nebari.dev/v1beta1', 'PassthroughModel', name, ns);
let client: KubeRest;
let operator: OperatorProcess;

beforeAll(async () => {
  client = await prepareOperatorNamespace(ns);
  operator = startOperator({ kubeconfigPath: kubeconfigPath(), namespace: ns, name: 'operator-model-ids' });
});

afterAll(async () => {
  if (operator && operator.child.exitCode === null) await operator.kill();
  client?.close();
});

it('reports a model id two models serve on both, and clears it when one goes', async () => {
  await applyObject(passthroughModel(ns, 'first', { declared: ['gpt-4o', 'only-first'] }));
  await applyObject(passthroughModel(ns, 'second', { declared: ['gpt-4o'] }));
  await waitFor('ModelIdConflict on both', async () =>
    condition(await client.get(modelRef('first')), 'ModelIdConflict')?.status === 'True' && condition(await client.get(modelRef('second')), 'ModelIdConflict')?.status === 'True',
    { timeoutMs: 60_000 });
  const onFirst = condition(await client.get(modelRef('first')), 'ModelIdConflict')!;
  expect(onFirst.reason).toBe('DuplicateModelId');
  expect(onFirst.message).toContain('"gpt-4o" on the external endpoint is also served by PassthroughModel second');
  expect(onFirst.message).toContain('Remove the id from one of the models');
  expect(onFirst.message).not.toContain('only-first');

  await client.delete(modelRef('second'));
  await waitFor('the conflict resolved on the remaining model', async () => condition(await client.get(modelRef('first')), 'ModelIdConflict')?.status === 'False', { timeoutMs: 60_000 });
  expect(condition(await client.get(modelRef('first')), 'ModelIdConflict')?.reason).toBe('Resolved');
});
