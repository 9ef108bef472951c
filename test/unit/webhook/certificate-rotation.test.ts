import {
  type CertificateIssuer,
  type RotationPolicy,
  type StoredCertificates,
  applyRotationStep,
  nextRotationStep,
} from '../../../src/webhook/certificate-rotation';
import { isIssuedBy, issueCertificateAuthority, issueServingCertificate, splitPemBundle } from '../../../src/webhook/certificates';

const dayMs = 24 * 60 * 60 * 1000;
const names = { dnsNames: ['hooks.system.svc'], ipAddresses: ['127.0.0.1'] };
const policy: RotationPolicy = {
  caValidityMs: 100 * dayMs,
  caRenewBeforeMs: 10 * dayMs,
  servingValidityMs: 20 * dayMs,
  servingRenewBeforeMs: 5 * dayMs,
  propagationMs: 60_000,
};

function issuerAt(clock: { now: Date }): CertificateIssuer {
  return {
    issueCa: () => issueCertificateAuthority({ commonName: 'ca', validityMs: policy.caValidityMs, now: clock.now }),
    issueServing: (ca) => issueServingCertificate({ ca, ...names, validityMs: policy.servingValidityMs, now: clock.now }),
  };
}

function step(stored: StoredCertificates | undefined, now: Date, extra: { injected?: boolean; forceCa?: boolean; forceServing?: boolean; names?: typeof names } = {}) {
  return nextRotationStep({
    stored,
    now,
    names: extra.names ?? names,
    policy,
    signingCaInjected: extra.injected ?? true,
    forceCa: extra.forceCa,
    forceServing: extra.forceServing,
  });
}

describe('certificate rotation', () => {
  const clock = { now: new Date('2030-01-01T00:00:00Z') };
  const issuer = issuerAt(clock);
  const later = (ms: number) => new Date(clock.now.getTime() + ms);

  it('creates CA and serving certificate when nothing is stored, then rests', () => {
    expect(step(undefined, clock.now).action).toBe('create');
    const created = applyRotationStep(undefined, { action: 'create', reason: '' }, issuer, clock.now);
    expect(isIssuedBy(created.tlsCrt, created.caBundle)).toBe(true);
    expect(step(created, clock.now)).toEqual({ action: 'none' });
  });

  it('re-creates everything when ca.key does not belong to the CA', () => {
    const created = applyRotationStep(undefined, { action: 'create', reason: '' }, issuer, clock.now);
    const other = issuer.issueCa();
    expect(step({ ...created, caKey: other.keyPem }, clock.now).action).toBe('create');
    expect(step({ ...created, caBundle: 'garbage' }, clock.now).action).toBe('create');
  });

  it('re-issues the serving certificate when it nears expiry, when names change, or on request', () => {
    const created = applyRotationStep(undefined, { action: 'create', reason: '' }, issuer, clock.now);
    expect(step(created, later(16 * dayMs)).action).toBe('issue-serving');
    expect(step(created, clock.now, { names: { dnsNames: ['renamed.system.svc'], ipAddresses: [] } }).action).toBe('issue-serving');
    expect(step(created, clock.now, { forceServing: true }).action).toBe('issue-serving');
    expect(step({ ...created, tlsKey: issuer.issueCa().keyPem }, clock.now).action).toBe('issue-serving');
  });

  it('replaces the CA in three steps without ever serving a certificate the bundle does not trust', () => {
    let stored = applyRotationStep(undefined, { action: 'create', reason: '' }, issuer, clock.now);
    const oldCa = splitPemBundle(stored.caBundle)[0];

    // Routine serving renewals keep the serving certificate fresh until the CA nears expiry.
    let now = later(88 * dayMs);
    clock.now = now;
    let next = step(stored, now);
    expect(next.action).toBe('issue-serving');
    stored = applyRotationStep(stored, next as never, issuer, now);
    const oldServing = stored.tlsCrt;

    // 1. The CA nears expiry: a new CA joins the bundle; the serving certificate stays.
    now = later(3 * dayMs);
    clock.now = now;
    next = step(stored, now);
    expect(next.action).toBe('introduce-ca');
    stored = applyRotationStep(stored, next as never, issuer, now);
    expect(splitPemBundle(stored.caBundle)).toHaveLength(2);
    expect(splitPemBundle(stored.caBundle)[1]).toBe(oldCa);
    expect(stored.tlsCrt).toBe(oldServing);

    // 2. Waits until every configuration trusts the new CA and the propagation time passed.
    expect(step(stored, now, { injected: false })).toEqual({ action: 'none' });
    expect(step(stored, new Date(now.getTime() + 30_000), { injected: true })).toEqual({ action: 'none' });
    expect(step(stored, new Date(now.getTime() + 61_000), { injected: false })).toEqual({ action: 'none' });
    now = new Date(now.getTime() + 61_000);
    next = step(stored, now, { injected: true });
    expect(next.action).toBe('issue-serving');
    stored = applyRotationStep(stored, next as never, issuer, now);
    expect(isIssuedBy(stored.tlsCrt, splitPemBundle(stored.caBundle)[0])).toBe(true);
    expect(splitPemBundle(stored.caBundle)).toContain(oldCa);

    // 3. Retires the old CA once replicas had time to load the new serving certificate.
    expect(step(stored, new Date(now.getTime() + 1000))).toEqual({ action: 'none' });
    now = new Date(now.getTime() + 61_000);
    next = step(stored, now);
    expect(next.action).toBe('retire-cas');
    stored = applyRotationStep(stored, next as never, issuer, now);
    expect(splitPemBundle(stored.caBundle)).toHaveLength(1);
    expect(splitPemBundle(stored.caBundle)[0]).not.toBe(oldCa);
    expect(step(stored, now)).toEqual({ action: 'none' });
  });

  it('starts a forced CA rotation only when none is in progress', () => {
    clock.now = new Date('2030-01-01T00:00:00Z');
    let stored = applyRotationStep(undefined, { action: 'create', reason: '' }, issuer, clock.now);
    const next = step(stored, clock.now, { forceCa: true });
    expect(next.action).toBe('introduce-ca');
    stored = applyRotationStep(stored, next as never, issuer, clock.now);
    expect(step(stored, clock.now, { forceCa: true, injected: false })).toEqual({ action: 'none' });
  });
});
