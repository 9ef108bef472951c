import {
  caBundleChangedAnnotation,
  secretWithCertificates,
  servingChangedAnnotation,
  storedCertificatesFromSecret,
} from '../../../src/webhook/self-managed-certificates';

const stored = {
  caBundle: 'CA-PEM',
  caKey: 'CA-KEY',
  tlsCrt: 'TLS-CRT',
  tlsKey: 'TLS-KEY',
  caBundleChangedAt: new Date('2030-01-01T00:00:00.000Z'),
  servingChangedAt: new Date('2030-01-02T00:00:00.000Z'),
};

describe('the certificate Secret', () => {
  it('round-trips certificates and rotation timestamps, keeping what else the Secret carries', () => {
    const base = { metadata: { name: 's', namespace: 'n', resourceVersion: '7', labels: { a: 'b' }, annotations: { keep: 'me' } }, data: { other: 'eA==' } };
    const secret = secretWithCertificates(base, stored);
    expect(secret.metadata).toEqual({
      name: 's',
      namespace: 'n',
      resourceVersion: '7',
      labels: { a: 'b' },
      annotations: { keep: 'me', [caBundleChangedAnnotation]: '2030-01-01T00:00:00.000Z', [servingChangedAnnotation]: '2030-01-02T00:00:00.000Z' },
    });
    expect(Object.keys(secret.data ?? {}).sort()).toEqual(['ca.crt', 'ca.key', 'other', 'tls.crt', 'tls.key']);
    expect(storedCertificatesFromSecret(secret)).toEqual(stored);
  });

  it('reads nothing from an absent or empty Secret (the chart may ship an empty one)', () => {
    expect(storedCertificatesFromSecret(undefined)).toBeUndefined();
    expect(storedCertificatesFromSecret({ metadata: { name: 's' } })).toBeUndefined();
  });

  it('ignores unreadable timestamps', () => {
    const secret = secretWithCertificates({ metadata: { annotations: { [caBundleChangedAnnotation]: 'yesterday' } } }, { ...stored, caBundleChangedAt: undefined });
    expect(storedCertificatesFromSecret(secret)?.caBundleChangedAt).toBeUndefined();
  });
});
