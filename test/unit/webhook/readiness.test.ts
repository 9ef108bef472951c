import { issueCertificateAuthority, issueServingCertificate } from '../../../src/webhook/certificates';
import { ReadinessGate, webhooksNotTrusting } from '../../../src/webhook/readiness';
import type { WebhookConfigurationTrust } from '../../../src/webhook/webhook-configurations';

const ca = issueCertificateAuthority({ commonName: 'ready-ca' });
const otherCa = issueCertificateAuthority({ commonName: 'other-ca' });
const served = issueServingCertificate({ ca, dnsNames: ['hooks.system.svc'] }).certPem;

const configuration = (caBundles: string[]): WebhookConfigurationTrust => ({
  kind: 'ValidatingWebhookConfiguration',
  name: 'hooks',
  resourceVersion: '1',
  webhooks: caBundles.map((caBundle, i) => ({ name: `w${i}.llm.nebari.dev`, caBundle })),
});

describe('readiness', () => {
  it('is ready only when every webhook trusts the served certificate', () => {
    expect(webhooksNotTrusting([configuration([ca.certPem, otherCa.certPem + ca.certPem])], served)).toEqual([]);
    expect(webhooksNotTrusting([configuration([ca.certPem, otherCa.certPem, ''])], served)).toEqual([
      'ValidatingWebhookConfiguration/hooks#w1.llm.nebari.dev',
      'ValidatingWebhookConfiguration/hooks#w2.llm.nebari.dev',
    ]);
  });

  it('reports why it is not ready', () => {
    const gate = new ReadinessGate();
    expect(gate.ready()).toBe(false);
    gate.observe([configuration([otherCa.certPem])], served);
    expect(gate.ready()).toBe(false);
    expect(gate.reason()).toContain('caBundle does not verify the served certificate: ValidatingWebhookConfiguration/hooks#w0');
    gate.observe([configuration([ca.certPem])], served);
    expect(gate.ready()).toBe(true);
    gate.fail('shutting down');
    expect(gate.ready()).toBe(false);
  });
});
