// When and how the self-managed webhook certificates change, as a pure function of what the
// Secret holds, the time, and whether our webhook configurations already trust the signing CA.
//
// Replacing the CA without failed requests takes three steps, each persisted in the Secret so
// every replica (and a restarted operator) continues where the last one stopped:
//   1. introduce: a new CA signs from now on; `ca.crt` (the caBundle) holds new and old CA.
//   2. switch: once every webhook configuration carries the new bundle and the API server has had
//      `propagationMs` to load it, the serving certificate is re-issued by the new CA.
//   3. retire: once every replica has had `propagationMs` to load the new serving certificate,
//      the old CA leaves the bundle.
// A serving certificate alone is re-issued at once: the CA that signs it is already trusted.
import {
  type CertificateFacts,
  type KeyPair,
  certificateFacts,
  coversNames,
  isIssuedBy,
  keyMatchesCertificate,
  splitPemBundle,
} from './certificates';

/** What the Secret `<release>-webhook-server-cert` holds, decoded. */
export interface StoredCertificates {
  /** `ca.crt`: every trusted CA, the signing CA first. */
  readonly caBundle: string;
  /** `ca.key`: the key of the signing CA (the first in the bundle). */
  readonly caKey: string;
  /** `tls.crt` and `tls.key`: what every replica serves. */
  readonly tlsCrt: string;
  readonly tlsKey: string;
  /** When `ca.crt` last changed (annotation). */
  readonly caBundleChangedAt?: Date;
  /** When `tls.crt` last changed (annotation). */
  readonly servingChangedAt?: Date;
}

export interface RotationPolicy {
  /** Lifetime of a new CA. @default 10 years */
  readonly caValidityMs: number;
  /** A CA expiring sooner than this is replaced. @default 1 year */
  readonly caRenewBeforeMs: number;
  /** Lifetime of a new serving certificate. @default 1 year */
  readonly servingValidityMs: number;
  /** A serving certificate expiring sooner than this is re-issued. @default 30 days */
  readonly servingRenewBeforeMs: number;
  /** How long a change must be visible before the next step relies on it (API server informers, replicas polling the Secret). @default 60 s */
  readonly propagationMs: number;
}

const dayMs = 24 * 60 * 60 * 1000;

export const defaultRotationPolicy: RotationPolicy = {
  caValidityMs: 10 * 365 * dayMs,
  caRenewBeforeMs: 365 * dayMs,
  servingValidityMs: 365 * dayMs,
  servingRenewBeforeMs: 30 * dayMs,
  propagationMs: 60_000,
};

/** The names the serving certificate must carry. */
export interface ServingNames {
  readonly dnsNames: readonly string[];
  readonly ipAddresses: readonly string[];
}

export type RotationStep =
  | { readonly action: 'none' }
  | { readonly action: 'create'; readonly reason: string }
  | { readonly action: 'introduce-ca'; readonly reason: string }
  | { readonly action: 'issue-serving'; readonly reason: string }
  | { readonly action: 'retire-cas'; readonly reason: string };

export interface RotationInput {
  readonly stored: StoredCertificates | undefined;
  readonly now: Date;
  readonly names: ServingNames;
  readonly policy: RotationPolicy;
  /** Every existing webhook configuration of ours trusts the signing CA (read this round). */
  readonly signingCaInjected: boolean;
  /** An operator asked for a new CA / a new serving certificate now. */
  readonly forceCa?: boolean;
  readonly forceServing?: boolean;
}

function expiresWithin(facts: CertificateFacts, now: Date, ms: number): boolean {
  return facts.notAfter.getTime() - now.getTime() < ms;
}

function elapsed(since: Date | undefined, now: Date, ms: number): boolean {
  return since === undefined || now.getTime() - since.getTime() >= ms;
}

/** The next step for the stored certificates; apply it, persist it, and ask again. */
export function nextRotationStep(input: RotationInput): RotationStep {
  const { stored, now, names, policy } = input;
  if (!stored) return { action: 'create', reason: 'no certificates stored yet' };
  const bundle = splitPemBundle(stored.caBundle);
  const signingCa = bundle[0];
  const signingFacts = signingCa ? certificateFacts(signingCa) : undefined;
  if (!signingCa || !signingFacts?.isCA || !keyMatchesCertificate(signingCa, stored.caKey)) {
    return { action: 'create', reason: 'the stored CA is missing, unreadable or does not match ca.key' };
  }
  if (signingFacts.notAfter <= now) return { action: 'create', reason: 'the stored CA has expired' };

  const servingFacts = certificateFacts(stored.tlsCrt);
  const servingUsable =
    servingFacts !== undefined &&
    servingFacts.notAfter > now &&
    keyMatchesCertificate(stored.tlsCrt, stored.tlsKey) &&
    coversNames(servingFacts, names.dnsNames, names.ipAddresses) &&
    bundle.some((ca) => isIssuedBy(stored.tlsCrt, ca));
  const servingFromSigningCa = servingUsable && isIssuedBy(stored.tlsCrt, signingCa);
  const rotationInProgress = servingUsable && !servingFromSigningCa;

  if (!rotationInProgress && (input.forceCa || expiresWithin(signingFacts, now, policy.caRenewBeforeMs))) {
    return { action: 'introduce-ca', reason: input.forceCa ? 'CA rotation requested' : 'the CA expires soon' };
  }
  if (!servingUsable) {
    return { action: 'issue-serving', reason: 'the serving certificate is missing, expired, for other names or not signed by a trusted CA' };
  }
  if (rotationInProgress) {
    if (input.signingCaInjected && elapsed(stored.caBundleChangedAt, now, policy.propagationMs)) {
      return { action: 'issue-serving', reason: 'every webhook configuration trusts the new CA' };
    }
    return { action: 'none' };
  }
  if (input.forceServing || expiresWithin(servingFacts, now, policy.servingRenewBeforeMs)) {
    return { action: 'issue-serving', reason: input.forceServing ? 'serving certificate rotation requested' : 'the serving certificate expires soon' };
  }
  const retired = bundle.slice(1);
  if (retired.length > 0) {
    const expiredOnly = retired.every((ca) => (certificateFacts(ca)?.notAfter ?? now) <= now);
    if (expiredOnly || elapsed(stored.servingChangedAt, now, policy.propagationMs)) {
      return { action: 'retire-cas', reason: 'every replica serves a certificate of the new CA' };
    }
  }
  return { action: 'none' };
}

/** Everything needed to carry out a step: how to make CAs and serving certificates. */
export interface CertificateIssuer {
  issueCa(): KeyPair;
  issueServing(ca: KeyPair): KeyPair;
}

/** The stored certificates after `step` (timestamps set to `now` for what changed). */
export function applyRotationStep(
  stored: StoredCertificates | undefined,
  step: Exclude<RotationStep, { action: 'none' }>,
  issuer: CertificateIssuer,
  now: Date,
): StoredCertificates {
  switch (step.action) {
    case 'create': {
      const ca = issuer.issueCa();
      const serving = issuer.issueServing(ca);
      return {
        caBundle: ca.certPem,
        caKey: ca.keyPem,
        tlsCrt: serving.certPem,
        tlsKey: serving.keyPem,
        caBundleChangedAt: now,
        servingChangedAt: now,
      };
    }
    case 'introduce-ca': {
      const current = stored as StoredCertificates;
      const ca = issuer.issueCa();
      const stillValid = splitPemBundle(current.caBundle).filter((pem) => (certificateFacts(pem)?.notAfter ?? now) > now);
      return { ...current, caBundle: [ca.certPem, ...stillValid].join(''), caKey: ca.keyPem, caBundleChangedAt: now };
    }
    case 'issue-serving': {
      const current = stored as StoredCertificates;
      const signingCa = splitPemBundle(current.caBundle)[0];
      const serving = issuer.issueServing({ certPem: signingCa, keyPem: current.caKey });
      return { ...current, tlsCrt: serving.certPem, tlsKey: serving.keyPem, servingChangedAt: now };
    }
    case 'retire-cas': {
      const current = stored as StoredCertificates;
      return { ...current, caBundle: splitPemBundle(current.caBundle)[0], caBundleChangedAt: now };
    }
  }
}
