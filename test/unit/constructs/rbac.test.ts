import { find, render } from './fixtures';

describe('operator RBAC', () => {
  const objects = render(undefined, { releaseName: 'r1', namespace: 'ns1' });
  const clusterRole = find(objects, 'ClusterRole');
  const role = find(objects, 'Role');

  test('Secrets and Leases only in the release namespace', () => {
    const clusterResources = clusterRole.rules.flatMap((r: { resources: string[] }) => r.resources);
    expect(clusterResources).not.toContain('secrets');
    expect(clusterResources).not.toContain('leases');
    expect(role.metadata.namespace).toBe('ns1');
    expect(role.rules.map((r: { resources: string[] }) => r.resources).flat()).toEqual(['secrets', 'leases']);
  });

  test('no wildcards anywhere', () => {
    for (const r of [...clusterRole.rules, ...role.rules]) {
      expect(r.verbs).not.toContain('*');
      expect(r.resources).not.toContain('*');
      expect(r.apiGroups).not.toContain('*');
    }
  });

  test('webhook configurations only by name, and only get/update/patch', () => {
    const admission = clusterRole.rules.filter((r: { apiGroups: string[] }) => r.apiGroups.includes('admissionregistration.k8s.io'));
    expect(admission).toEqual([
      { apiGroups: ['admissionregistration.k8s.io'], resources: ['validatingwebhookconfigurations'], resourceNames: ['r1-nebari-llm-serving-validating'], verbs: ['get', 'update', 'patch'] },
      {
        apiGroups: ['admissionregistration.k8s.io'],
        resources: ['mutatingwebhookconfigurations'],
        resourceNames: ['r1-nebari-llm-serving-mutating', 'r1-nebari-llm-serving-agentdeployment-guard'],
        verbs: ['get', 'update', 'patch'],
      },
    ]);
  });

  test('covers our kinds with status and finalizers, the gateway kinds and SubjectAccessReviews', () => {
    const can = (group: string, resource: string, verb: string) =>
      clusterRole.rules.some((r: { apiGroups: string[]; resources: string[]; verbs: string[] }) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb));
    expect(can('llm.nebari.dev', 'agentdeployments/status', 'patch')).toBe(true);
    expect(can('llm.nebari.dev', 'llmmodels/finalizers', 'update')).toBe(true);
    expect(can('aigateway.envoyproxy.io', 'aigatewayroutes', 'create')).toBe(true);
    expect(can('gateway.envoyproxy.io', 'securitypolicies', 'delete')).toBe(true);
    expect(can('gateway.networking.k8s.io', 'httproutes', 'watch')).toBe(true);
    expect(can('inference.networking.k8s.io', 'inferencepools', 'patch')).toBe(true);
    expect(can('authorization.k8s.io', 'subjectaccessreviews', 'create')).toBe(true);
    expect(can('llm.nebari.dev', 'llmmodels', 'delete')).toBe(false);
  });

  test('bindings point at the release ServiceAccount', () => {
    for (const b of [find(objects, 'ClusterRoleBinding'), find(objects, 'RoleBinding')]) {
      expect(b.subjects).toEqual([{ kind: 'ServiceAccount', name: 'r1-nebari-llm-serving', namespace: 'ns1' }]);
    }
  });
});
