import { LLM_PROVIDERS } from '../../../src/api/llmmodel';
import type { LLMModelV1beta1 as LLMModel } from '../../../src/api/v1beta1';
import { providers } from '../../../src/translate/providers';
import { find, render } from './fixtures';

describe('operator RBAC', () => {
  const objects = render(undefined, { releaseName: 'r1', namespace: 'ns1' });
  const clusterRole = find(objects, 'ClusterRole');
  const role = find(objects, 'Role');

  type Rule = { apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[] };
  const grants = (rules: Rule[], group: string, resource: string, verb: string) => rules.some((r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb));

  test('the ClusterRole holds only cluster-scoped rights and reading Services: CRDs, SubjectAccessReviews, our webhook configurations by name', () => {
    expect(clusterRole.rules.map((r: Rule) => `${r.apiGroups.join()}/${r.resources.join()}`)).toEqual([
      'apiextensions.k8s.io/customresourcedefinitions',
      'apiextensions.k8s.io/customresourcedefinitions',
      '/services',
      'authorization.k8s.io/subjectaccessreviews',
      'admissionregistration.k8s.io/validatingwebhookconfigurations',
      'admissionregistration.k8s.io/mutatingwebhookconfigurations',
    ]);
    // Only our own CRDs may be patched (their spec.conversion); Services are only read (whose conversion is it).
    expect(clusterRole.rules[2]).toEqual({ apiGroups: [''], resources: ['services'], verbs: ['get'] });
    expect(clusterRole.rules[1]).toEqual({
      apiGroups: ['apiextensions.k8s.io'],
      resources: ['customresourcedefinitions'],
      resourceNames: ['llmmodels.llm.nebari.dev', 'passthroughmodels.llm.nebari.dev', 'agentdeployments.llm.nebari.dev'],
      verbs: ['patch'],
    });
  });

  test('everything namespaced is granted in the release namespace only, with no escalation', () => {
    expect(role.metadata.namespace).toBe('ns1');
    // Besides the read-only proxy Role in the Gateways' namespace (next test).
    expect(objects.filter((o) => o.kind === 'Role').map((o) => `${o.metadata.namespace}/${o.metadata.name}`)).toEqual(['ns1/r1-nebari-llm-serving-operator', 'envoy-gateway-system/r1-nebari-llm-serving-operator-proxies']);
    const rbacRule = role.rules.find((r: Rule) => r.apiGroups.includes('rbac.authorization.k8s.io'));
    expect(rbacRule.verbs).not.toContain('escalate');
    expect(rbacRule.verbs).not.toContain('bind');
  });

  test('each Gateway namespace gets a Role to list and watch Deployments only (Programmed), once per namespace, and none with platform.proxyStatus false', () => {
    const proxies = (o: { metadata?: { name?: string } }) => o.metadata?.name?.endsWith('-operator-proxies') === true;
    const [gatewayRole] = objects.filter((o) => o.kind === 'Role' && proxies(o));
    expect(gatewayRole.rules).toEqual([{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['list', 'watch'] }]);
    const binding = objects.find((o) => o.kind === 'RoleBinding' && proxies(o))!;
    expect(binding.metadata.namespace).toBe('envoy-gateway-system');
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'r1-nebari-llm-serving', namespace: 'ns1' }]);
    // HTTPRoutes in the release namespace are watched for their acceptance.
    expect(grants(role.rules, 'gateway.networking.k8s.io', 'httproutes', 'watch')).toBe(true);
    expect(grants(role.rules, 'gateway.networking.k8s.io', 'httproutes', 'patch')).toBe(false);
    const split = render((v) => (v.platform.internal.gatewayNamespace = 'gw-internal'), { releaseName: 'r1', namespace: 'ns1' });
    expect(split.filter((o) => o.kind === 'Role' && proxies(o)).map((o) => o.metadata.namespace)).toEqual(['envoy-gateway-system', 'gw-internal']);
    const off = render((v) => (v.platform.proxyStatus = false), { releaseName: 'r1', namespace: 'ns1' });
    expect(off.filter(proxies)).toEqual([]);
  });

  test('each other namespace of watchNamespaces gets the agent Role and a binding to the release ServiceAccount; the release namespace and repeats are skipped', () => {
    const watched = render((v) => (v.watchNamespaces = ['team-a', 'ns1', 'team-b', 'team-a']), { releaseName: 'r1', namespace: 'ns1' });
    const roles = watched.filter((o) => o.kind === 'Role' && !o.metadata.name.endsWith('-operator-proxies'));
    expect(roles.map((r) => `${r.metadata.namespace}/${r.metadata.name}`)).toEqual(['ns1/r1-nebari-llm-serving-operator', 'team-a/r1-nebari-llm-serving-operator-agents', 'team-b/r1-nebari-llm-serving-operator-agents']);
    const agentRole = roles[1];
    // Agents and their workloads; no models' generated kinds, no Secret listing, no RBAC writes.
    expect(grants(agentRole.rules, 'apps', 'deployments', 'patch')).toBe(true);
    expect(grants(agentRole.rules, 'llm.nebari.dev', 'agentdeployments/status', 'patch')).toBe(true);
    expect(grants(agentRole.rules, '', 'secrets', 'get')).toBe(true);
    expect(grants(agentRole.rules, '', 'secrets', 'list')).toBe(false);
    expect(grants(agentRole.rules, 'rbac.authorization.k8s.io', 'roles', 'create')).toBe(false);
    expect(grants(agentRole.rules, 'aigateway.envoyproxy.io', 'aigatewayroutes', 'create')).toBe(false);
    expect(grants(agentRole.rules, 'llm.nebari.dev', 'llmmodels', 'patch')).toBe(false);
    const binding = watched.find((o) => o.kind === 'RoleBinding' && o.metadata.namespace === 'team-b')!;
    expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r1-nebari-llm-serving-operator-agents' });
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'r1-nebari-llm-serving', namespace: 'ns1' }]);
    const env = find(watched, 'Deployment').spec.template.spec.containers[0].env;
    expect(env).toContainEqual({ name: 'NLS_WATCH_NAMESPACES', value: 'team-a,ns1,team-b,team-a' });
    expect(find(objects, 'Deployment').spec.template.spec.containers[0].env.map((e: { name: string }) => e.name)).not.toContain('NLS_WATCH_NAMESPACES');
  });

  test('can apply every provider kind (KAITO, Dynamo, KubeRay, llm-d) at any version, in the release namespace', () => {
    for (const provider of Object.values(providers)) {
      for (const r of provider.resources ?? []) {
        const plural = `${r.kind.toLowerCase()}s`;
        const rule = role.rules.find((x: Rule) => x.apiGroups.includes(r.group) && x.resources.includes(plural));
        expect({ kind: `${r.group}/${plural}`, verbs: rule?.verbs }).toEqual({ kind: `${r.group}/${plural}`, verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'] });
      }
    }
  });

  test.each(LLM_PROVIDERS)('holds every right the %s endpoint picker Role grants (no escalation needed)', (name) => {
    const model = {
      apiVersion: 'llm.nebari.dev/v1beta1',
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

  test('PodMonitors (spec.serving.monitoring.enabled) only as the apply path uses them: read, apply, delete; never listed or watched, never cluster-wide', () => {
    const rules = (rs: Rule[]) => rs.filter((r) => r.apiGroups.includes('monitoring.coreos.com'));
    expect(rules(role.rules)).toEqual([{ apiGroups: ['monitoring.coreos.com'], resources: ['podmonitors'], verbs: ['get', 'create', 'patch', 'delete'] }]);
    expect(rules(clusterRole.rules)).toEqual([]);
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
    const can = (group: string, resource: string, verb: string) => grants([...clusterRole.rules, ...role.rules], group, resource, verb);
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
