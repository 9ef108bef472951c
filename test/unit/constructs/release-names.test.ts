import { AnyObject, find, render } from './fixtures';

describe('release name and namespace', () => {
  test('two releases in two namespaces share no cluster-scoped name and no namespaced name', () => {
    const a = render((v) => { v.gateway.gatewayClass.create = true; }, { releaseName: 'alpha', namespace: 'ns-a' });
    const b = render((v) => { v.gateway.gatewayClass.create = true; }, { releaseName: 'beta', namespace: 'ns-b' });
    const key = (o: AnyObject) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
    const aKeys = new Set(a.map(key));
    expect(b.map(key).filter((k) => aKeys.has(k))).toEqual([]);
    for (const o of [...a, ...b].filter((x) => !x.metadata.namespace && x.kind !== 'Namespace')) {
      expect(o.metadata.name).toMatch(/^(alpha|beta)-/);
    }
  });

  test('every namespaced object goes to the release namespace', () => {
    const objects = render(undefined, { releaseName: 'r', namespace: 'team-llm' });
    const cluster = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration', 'GatewayClass', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);
    // The proxy Role and its binding go to the Gateways' namespace (platform.proxyStatus).
    const inGatewayNamespace = (x: { metadata?: { name?: string } }) => x.metadata?.name === 'r-nebari-llm-serving-operator-proxies';
    for (const o of objects.filter((x) => !cluster.has(x.kind) && !inGatewayNamespace(x))) expect(o.metadata.namespace).toBe('team-llm');
    expect(objects.filter(inGatewayNamespace).map((o) => o.metadata.namespace)).toEqual(['envoy-gateway-system', 'envoy-gateway-system']);
    // helm --create-namespace makes the namespace; the chart only does with namespace.create.
    expect(objects.some((o) => o.kind === 'Namespace')).toBe(false);
    const created = render((v) => { v.namespace.create = true; }, { releaseName: 'r', namespace: 'team-llm' });
    expect(find(created, 'Namespace').metadata).toMatchObject({ name: 'team-llm', labels: { 'nebari.dev/managed': 'true' }, annotations: { 'helm.sh/resource-policy': 'keep' } });
  });

  test('a release name containing the chart name is used as is; long names are cut to fit every suffix', () => {
    expect(find(render(undefined, { releaseName: 'my-nebari-llm-serving' }), 'Deployment').metadata.name).toBe('my-nebari-llm-serving-operator');
    const long = render((v) => { v.webhook.upgradeGuard.enabled = true; }, { releaseName: 'a-very-long-release-name-that-goes-on-and-on' });
    for (const o of long) expect(o.metadata.name.length).toBeLessThanOrEqual(63);
  });

  test('gateway-level objects are created once, named after the release, with the GatewayConfig attached', () => {
    const objects = render((v) => {
      v.gateway.gatewayClass.create = true;
      v.gateway.gateway.create = true;
      v.gateway.gatewayConfig.create = true;
      v.gateway.clientTrafficPolicy.create = true;
    }, { releaseName: 'r', namespace: 'n' });
    expect(find(objects, 'GatewayClass').metadata.name).toBe('r-nebari-llm-serving');
    const gw = find(objects, 'Gateway');
    expect(gw.spec.gatewayClassName).toBe('r-nebari-llm-serving');
    expect(gw.metadata.annotations).toEqual({ 'aigateway.envoyproxy.io/gateway-config': 'r-nebari-llm-serving' });
    expect(find(objects, 'GatewayConfig').metadata).toMatchObject({ name: 'r-nebari-llm-serving', namespace: 'n' });
    expect(find(objects, 'ClientTrafficPolicy').spec.targetRefs).toEqual([{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'r-nebari-llm-serving' }]);
  });
});
