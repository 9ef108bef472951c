import { LLM_PROVIDERS, type LLMModel } from '../../../src/api/llmmodel';
import { providers } from '../../../src/translate/providers';
import { find, render } from './fixtures';

describe('operator RBAC', () => {
  const objects = render(undefined, { releaseName: 'r1', namespace: 'ns1' });
  const clusterRole = find(objects, 'ClusterRole');
  const role = find(objects, 'Role');

  test('Secrets, Leases and the endpoint picker RBAC only in the release namespace', () => {
    const clusterResources = clusterRole.rules.flatMap((r: { resources: string[] }) => r.resources);
    for (const resource of ['secrets', 'leases', 'serviceaccounts', 'roles', 'rolebindings']) expect(clusterResources).not.toContain(resource);
    expect(role.metadata.namespace).toBe('ns1');
    expect(role.rules.map((r: { resources: string[] }) => r.resources).flat()).toEqual(['secrets', 'leases', 'serviceaccounts', 'roles', 'rolebindings']);
    const rbacRule = role.rules.find((r: { apiGroups: string[] }) => r.apiGroups.includes('rbac.authorization.k8s.io'));
    expect(rbacRule.verbs).not.toContain('escalate');
    expect(rbacRule.verbs).not.toContain('bind');
  });

  test('can apply every provider kind (KAITO, Dynamo, KubeRay, llm-d) at any version', () => {
    for (const provider of Object.values(providers)) {
      for (const r of provider.resources ?? []) {
        const plural = `${r.kind.toLowerCase()}s`;
        const rule = clusterRole.rules.find((x: { apiGroups: string[]; resources: string[] }) => x.apiGroups.includes(r.group) && x.resources.includes(plural));
        expect({ kind: `${r.group}/${plural}`, verbs: rule?.verbs }).toEqual({ kind: `${r.group}/${plural}`, verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'] });
      }
    }
  });

  test.each(LLM_PROVIDERS)('holds every right the %s endpoint picker Role grants (no escalation needed)', (name) => {
    const model = {
      apiVersion: 'llm.nebari.dev/v1alpha1',
      kind: 'LLMModel',
      metadata: { name: 'qwen', namespace: 'ns1' },
      spec: { model: { name: 'Qwen/Qwen3-8B', source: 'huggingface' }, resources: { gpu: { count: 1, type: 'nvidia' } }, ...(name === 'dynamo' ? { serving: { image: 'example/runtime:1' } } : {}), access: { public: true } },
    } as LLMModel;
    const epp = providers[name].translate(model, {}, { Workspace: 'kaito.sh/v1beta1', DynamoGraphDeployment: 'nvidia.com/v1alpha1', RayService: 'ray.io/v1', InferenceObjective: 'llm-d.ai/v1alpha2' }).objects.find((o) => o.kind === 'Role') as unknown as { rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[] };
    const rules = [...clusterRole.rules, ...role.rules] as { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    for (const wanted of epp.rules) {
      for (const group of wanted.apiGroups) for (const resource of wanted.resources) for (const verb of wanted.verbs) {
        expect(rules.some((r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb))).toBe(true);
      }
    }
  });

  test('no wildcards anywhere', () => {
    for (const r of [...clusterRole.rules, ...role.rules]) {
      expect(r.verbs).not.toContain('*');
      expect(r.resources).not.toContain('*');
      expect(r.apiGroups).not.toContain('*');
    }
  });

  test('webhook configurations only by name, and only get/patch', () => {
    const admission = clusterRole.rules.filter((r: { apiGroups: string[] }) => r.apiGroups.includes('admissionregistration.k8s.io'));
    expect(admission).toEqual([
      { apiGroups: ['admissionregistration.k8s.io'], resources: ['validatingwebhookconfigurations'], resourceNames: ['r1-nebari-llm-serving-validating'], verbs: ['get', 'patch'] },
      {
        apiGroups: ['admissionregistration.k8s.io'],
        resources: ['mutatingwebhookconfigurations'],
        resourceNames: ['r1-nebari-llm-serving-mutating', 'r1-nebari-llm-serving-agentdeployment-guard'],
        verbs: ['get', 'patch'],
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
    expect(can('gateway.networking.k8s.io', 'httproutes', 'get')).toBe(true);
    // What the e2e audit log showed the operator never uses is not granted.
    expect(can('gateway.networking.k8s.io', 'httproutes', 'create')).toBe(false);
    expect(can('aigateway.envoyproxy.io', 'aigatewayroutes', 'update')).toBe(false);
    expect(can('', 'namespaces', 'get')).toBe(false);
    expect(can('aigateway.envoyproxy.io', 'gatewayconfigs', 'create')).toBe(false);
    expect(can('gateway.networking.k8s.io', 'referencegrants', 'create')).toBe(false);
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
