import { AnyObject, find, render } from './fixtures';

const entryNames = (o: AnyObject) => o.webhooks.map((w: { name: string }) => w.name);

describe('webhook configurations', () => {
  test('validate and mutate all three kinds, fail closed, with no caBundle rendered', () => {
    const objects = render();
    for (const [kind, prefix] of [['ValidatingWebhookConfiguration', 'validate'], ['MutatingWebhookConfiguration', 'mutate']] as const) {
      const c = find(objects, kind, prefix === 'validate' ? '-validating' : '-mutating');
      expect(entryNames(c)).toEqual([`${prefix[0]}llmmodel.llm.nebari.dev`, `${prefix[0]}passthroughmodel.llm.nebari.dev`, `${prefix[0]}agentdeployment.llm.nebari.dev`]);
      for (const w of c.webhooks) {
        expect(w.failurePolicy).toBe('Fail');
        expect(w.clientConfig.caBundle).toBeUndefined();
        expect(w.clientConfig.service).toMatchObject({ name: 'nebari-llm-serving-webhook', namespace: 'nebari-llm-serving-system', port: 443 });
      }
      expect(c.webhooks.map((w: { clientConfig: { service: { path: string } } }) => w.clientConfig.service.path)).toEqual([
        `/${prefix}-llmmodel`,
        `/${prefix}-passthroughmodel`,
        `/${prefix}-agentdeployment`,
      ]);
    }
  });

  test('the AgentDeployment routes can be switched off', () => {
    const objects = render((v) => { v.webhook.agentDeployment.enabled = false; });
    expect(entryNames(find(objects, 'ValidatingWebhookConfiguration'))).toEqual(['vllmmodel.llm.nebari.dev', 'vpassthroughmodel.llm.nebari.dev']);
    expect(entryNames(find(objects, 'MutatingWebhookConfiguration', '-mutating'))).toEqual(['mllmmodel.llm.nebari.dev', 'mpassthroughmodel.llm.nebari.dev']);
  });

  test('the upgrade guard points at a Service that is never rendered', () => {
    expect(render().some((o) => o.metadata.name.endsWith('-agentdeployment-guard'))).toBe(false);
    const objects = render((v) => { v.webhook.upgradeGuard.enabled = true; });
    const guard = find(objects, 'MutatingWebhookConfiguration', '-agentdeployment-guard');
    expect(guard.metadata.name).toBe('nebari-llm-serving-agentdeployment-guard');
    expect(guard.webhooks).toHaveLength(1);
    expect(guard.webhooks[0]).toMatchObject({
      name: 'agentdeployment-upgrade-guard.llm.nebari.dev',
      failurePolicy: 'Fail',
      sideEffects: 'None',
      timeoutSeconds: 1,
      rules: [{ apiGroups: ['llm.nebari.dev'], operations: ['CREATE', 'UPDATE'], resources: ['agentdeployments'] }],
    });
    const target = guard.webhooks[0].clientConfig.service.name;
    expect(target).toBe('nebari-llm-serving-agentdeployment-guard');
    expect(objects.some((o) => o.kind === 'Service' && o.metadata.name === target)).toBe(false);
  });

  test('the upgrade guard exempts the operator\'s own ServiceAccount (its finalizer removals are UPDATEs)', () => {
    const guard = find(render((v) => { v.webhook.upgradeGuard.enabled = true; v.serviceAccount.name = 'op'; }, { releaseName: 'r', namespace: 'n' }), 'MutatingWebhookConfiguration', '-agentdeployment-guard');
    expect(guard.webhooks[0].matchConditions).toEqual([{ name: 'not-the-operator', expression: "request.userInfo.username != 'system:serviceaccount:n:op'" }]);
  });

  test('cert-manager mode: Issuer, Certificate for the Service DNS name, and the CA-injection annotation', () => {
    const objects = render((v) => { v.webhook.certificates.mode = 'cert-manager'; }, { releaseName: 'r', namespace: 'n' });
    const cert = find(objects, 'Certificate');
    expect(cert.spec.secretName).toBe('r-webhook-server-cert');
    expect(cert.spec.dnsNames).toContain('r-nebari-llm-serving-webhook.n.svc');
    expect(cert.spec.issuerRef).toEqual({ name: 'r-nebari-llm-serving-selfsigned', kind: 'Issuer', group: 'cert-manager.io' });
    expect(find(objects, 'Issuer').spec).toEqual({ selfSigned: {} });
    for (const kind of ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']) {
      expect(find(objects, kind).metadata.annotations).toEqual({ 'cert-manager.io/inject-ca-from': 'n/r-nebari-llm-serving-webhook' });
    }
    const existing = render((v) => { v.webhook.certificates.mode = 'cert-manager'; v.webhook.certificates.certManager.issuerRef = { name: 'corp-ca', kind: 'ClusterIssuer' }; });
    expect(existing.some((o) => o.kind === 'Issuer')).toBe(false);
    expect(find(existing, 'Certificate').spec.issuerRef).toEqual({ name: 'corp-ca', kind: 'ClusterIssuer', group: 'cert-manager.io' });
  });

  test('self-managed mode creates no cert-manager objects and no annotation', () => {
    const objects = render();
    expect(objects.some((o) => String(o.apiVersion).startsWith('cert-manager.io'))).toBe(false);
    expect(find(objects, 'ValidatingWebhookConfiguration').metadata.annotations).toBeUndefined();
  });
});
