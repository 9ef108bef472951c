// The chart's user-facing ClusterRoles on the real API server: kube-controller-manager's
// aggregation controller merges them into the built-in `view`, `edit` and `admin` roles, so a user
// bound to one of those in a namespace gets exactly the rights on our kinds the chart promises.
// Checked with SubjectAccessReviews (shared control plane, cluster mode).
import { plainObjectsByFile } from '../../src/chart/render';
import { defaultValues } from '../../src/chart/values-schema';
import { type KubeObject, objectRef } from '../../src/kube/rest';
import { applyObject, rest, uniqueName } from '../support/cluster';
import { waitFor } from '../support/processes';

const client = rest();
const release = uniqueName('roles');
const ns = uniqueName('roles-ns');
const roles = plainObjectsByFile(defaultValues(), { releaseName: release, namespace: ns })['user-roles.yaml'] as KubeObject[];

/** Whether `user` may `verb` the resource in the namespace, as the API server decides it. */
async function may(user: string, verb: string, resource: string, subresource?: string): Promise<boolean> {
  const review = await client.request<{ status: { allowed: boolean } }>('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
    body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user, resourceAttributes: { namespace: ns, verb, group: 'llm.nebari.dev', resource, subresource } } },
  });
  return review.status.allowed;
}

beforeAll(async () => {
  await applyObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  for (const role of roles) await applyObject(role);
  for (const [user, role] of [['viewer', 'view'], ['editor', 'edit'], ['owner', 'admin']]) {
    await applyObject({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: user, namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
    });
  }
  // The aggregation controller copies the rules into the built-in roles asynchronously.
  await waitFor('the built-in roles to aggregate ours', async () => (await may('viewer', 'list', 'llmmodels')) && (await may('editor', 'create', 'agentdeployments')) && (await may('owner', 'delete', 'passthroughmodels')), { timeoutMs: 60_000 });
}, 90_000);

afterAll(async () => {
  for (const role of roles) await client.delete(objectRef('rbac.authorization.k8s.io/v1', 'ClusterRole', role.metadata.name));
  await client.delete(objectRef('v1', 'Namespace', ns));
});

test('the chart renders a view and an edit role with the aggregation labels', () => {
  expect(roles.map((r) => [r.metadata.name, Object.keys(r.metadata.labels ?? {}).filter((l) => l.includes('aggregate-to')).sort()])).toEqual([
    [`${release}-nebari-llm-serving-view`, ['rbac.authorization.k8s.io/aggregate-to-admin', 'rbac.authorization.k8s.io/aggregate-to-edit', 'rbac.authorization.k8s.io/aggregate-to-view']],
    [`${release}-nebari-llm-serving-edit`, ['rbac.authorization.k8s.io/aggregate-to-admin', 'rbac.authorization.k8s.io/aggregate-to-edit']],
  ]);
});

test.each(['llmmodels', 'passthroughmodels', 'agentdeployments'])('%s: view reads, edit and admin also write, nobody writes status', async (resource) => {
  for (const verb of ['get', 'list', 'watch']) for (const user of ['viewer', 'editor', 'owner']) expect([user, verb, await may(user, verb, resource)]).toEqual([user, verb, true]);
  expect(await may('viewer', 'get', resource, 'status')).toBe(true);
  for (const verb of ['create', 'update', 'patch', 'delete', 'deletecollection']) {
    expect(['viewer', verb, await may('viewer', verb, resource)]).toEqual(['viewer', verb, false]);
    expect(['editor', verb, await may('editor', verb, resource)]).toEqual(['editor', verb, true]);
    expect(['owner', verb, await may('owner', verb, resource)]).toEqual(['owner', verb, true]);
  }
  // Binding an agent to a restricted model: editors of the models' namespace, who may make it public anyway.
  if (resource !== 'agentdeployments') {
    expect(await may('viewer', 'bind', resource)).toBe(false);
    for (const user of ['editor', 'owner']) expect([user, 'bind', await may(user, 'bind', resource)]).toEqual([user, 'bind', true]);
  }
  // Status is what the operator reports; people do not write it.
  for (const user of ['editor', 'owner']) expect([user, await may(user, 'patch', resource, 'status')]).toEqual([user, false]);
  // Nothing outside the namespace of the binding.
  expect(await may('someone-else', 'get', resource)).toBe(false);
});

test('with rbac.userFacingRoles=false the chart renders none', () => {
  const values = defaultValues();
  values.rbac.userFacingRoles = false;
  expect(plainObjectsByFile(values)['user-roles.yaml']).toBeUndefined();
});
