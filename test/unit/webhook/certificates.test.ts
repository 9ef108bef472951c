import {
  certificateFacts,
  coversNames,
  isIssuedBy,
  isIssuedByAny,
  issueCertificateAuthority,
  issueServingCertificate,
  keyMatchesCertificate,
  serviceDnsNames,
  splitPemBundle,
} from '../../../src/webhook/certificates';

const dayMs = 24 * 60 * 60 * 1000;

describe('certificates', () => {
  const ca = issueCertificateAuthority({ commonName: 'test-ca' });
  const otherCa = issueCertificateAuthority({ commonName: 'other-ca' });
  const serving = issueServingCertificate({ ca, dnsNames: serviceDnsNames('hooks', 'system'), ipAddresses: ['127.0.0.1', '::1'] });

  it('issues a CA and a serving certificate for the service names and IPs', () => {
    const caFacts = certificateFacts(ca.certPem);
    const facts = certificateFacts(serving.certPem);
    expect(caFacts?.isCA).toBe(true);
    expect(facts?.isCA).toBe(false);
    expect(facts?.dnsNames).toEqual(['hooks.system.svc', 'hooks.system.svc.cluster.local', 'hooks.system', 'hooks']);
    expect(coversNames(facts!, ['hooks.system.svc'], ['127.0.0.1', '::1'])).toBe(true);
    expect(coversNames(facts!, ['other.system.svc'], [])).toBe(false);
    expect(coversNames(facts!, [], ['10.0.0.1'])).toBe(false);
  });

  it('knows which CA signed a certificate and which key belongs to it', () => {
    expect(isIssuedBy(serving.certPem, ca.certPem)).toBe(true);
    expect(isIssuedBy(serving.certPem, otherCa.certPem)).toBe(false);
    expect(isIssuedBy(serving.certPem, serving.certPem)).toBe(false);
    expect(isIssuedByAny(serving.certPem, otherCa.certPem + ca.certPem)).toBe(true);
    expect(keyMatchesCertificate(serving.certPem, serving.keyPem)).toBe(true);
    expect(keyMatchesCertificate(serving.certPem, ca.keyPem)).toBe(false);
    expect(keyMatchesCertificate('garbage', serving.keyPem)).toBe(false);
  });

  it('backdates notBefore for clock skew and never outlives the CA', () => {
    const now = new Date('2030-01-01T00:00:00Z');
    const shortCa = issueCertificateAuthority({ commonName: 'short', validityMs: 10 * dayMs, now });
    const leaf = issueServingCertificate({ ca: shortCa, dnsNames: ['x'], validityMs: 365 * dayMs, now });
    const facts = certificateFacts(leaf.certPem)!;
    expect(facts.notBefore.getTime()).toBeLessThan(now.getTime());
    expect(facts.notAfter.getTime()).toBeLessThanOrEqual(certificateFacts(shortCa.certPem)!.notAfter.getTime());
  });

  it('splits bundles and tolerates garbage', () => {
    expect(splitPemBundle(`${ca.certPem}junk\n${otherCa.certPem}`)).toHaveLength(2);
    expect(splitPemBundle('no pem here')).toEqual([]);
    expect(certificateFacts('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n')).toBeUndefined();
  });

  it('refuses a serving certificate without names', () => {
    expect(() => issueServingCertificate({ ca, dnsNames: [] })).toThrow('at least one DNS name or IP address');
  });
});
