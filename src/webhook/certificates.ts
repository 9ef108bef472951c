// X.509 for the webhook: a small self-signed CA and serving certificates it signs.
// Node's crypto can generate keys and inspect certificates but cannot create them, so signing
// uses node-forge; key generation and all inspection use Node's native crypto.
import { X509Certificate, createPrivateKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import forge from 'node-forge';

/** A PEM certificate with its PEM private key. */
export interface KeyPair {
  readonly certPem: string;
  readonly keyPem: string;
}

/** What the webhook needs to know about a certificate. */
export interface CertificateFacts {
  readonly notBefore: Date;
  readonly notAfter: Date;
  readonly dnsNames: readonly string[];
  readonly ipAddresses: readonly string[];
  readonly isCA: boolean;
  readonly fingerprint256: string;
}

/** The organisation written into every certificate we issue, so operators can tell them apart. */
export const certificateOrganization = 'nebari-llm-serving';

// Backdating tolerates clocks that lag ours (the API server verifies notBefore).
const clockSkewMs = 60 * 60 * 1000;
const dayMs = 24 * 60 * 60 * 1000;

function newRsaKey(): { privatePem: string; forgeKey: forge.pki.rsa.PrivateKey; forgePublic: forge.pki.rsa.PublicKey } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const privatePem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  return {
    privatePem,
    forgeKey: forge.pki.privateKeyFromPem(privatePem),
    forgePublic: forge.pki.publicKeyFromPem(publicPem) as forge.pki.rsa.PublicKey,
  };
}

// Go (the API server) rejects negative serial numbers; clearing the top bit keeps it positive.
function positiveSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] & 0x7f) | 0x01;
  return bytes.toString('hex');
}

function validity(cert: forge.pki.Certificate, now: Date, validityMs: number): void {
  cert.validity.notBefore = new Date(now.getTime() - clockSkewMs);
  cert.validity.notAfter = new Date(now.getTime() + validityMs);
}

/** Creates a self-signed CA able to sign serving certificates. */
export function issueCertificateAuthority(options: { commonName: string; validityMs?: number; now?: Date }): KeyPair {
  const key = newRsaKey();
  const cert = forge.pki.createCertificate();
  cert.publicKey = key.forgePublic;
  cert.serialNumber = positiveSerial();
  validity(cert, options.now ?? new Date(), options.validityMs ?? 10 * 365 * dayMs);
  const subject = [
    { name: 'commonName', value: options.commonName },
    { name: 'organizationName', value: certificateOrganization },
  ];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(key.forgeKey, forge.md.sha256.create());
  return { certPem: toPem(cert), keyPem: key.privatePem };
}

// forge writes CRLF line endings; Kubernetes tooling and our comparisons use LF.
function toPem(cert: forge.pki.Certificate): string {
  return forge.pki.certificateToPem(cert).replace(/\r\n/g, '\n');
}

/** Creates a serving certificate for the given DNS names and IP addresses, signed by `ca`. */
export function issueServingCertificate(options: {
  ca: KeyPair;
  dnsNames: readonly string[];
  ipAddresses?: readonly string[];
  validityMs?: number;
  now?: Date;
}): KeyPair {
  if (options.dnsNames.length === 0 && !options.ipAddresses?.length) {
    throw new Error('a serving certificate needs at least one DNS name or IP address');
  }
  const caCert = forge.pki.certificateFromPem(options.ca.certPem);
  const caKey = forge.pki.privateKeyFromPem(options.ca.keyPem);
  const key = newRsaKey();
  const cert = forge.pki.createCertificate();
  cert.publicKey = key.forgePublic;
  cert.serialNumber = positiveSerial();
  const now = options.now ?? new Date();
  let validityMs = options.validityMs ?? 365 * dayMs;
  // A leaf must not outlive its issuer, or verifiers reject it early.
  validityMs = Math.min(validityMs, caCert.validity.notAfter.getTime() - now.getTime());
  validity(cert, now, validityMs);
  cert.setSubject([
    { name: 'commonName', value: options.dnsNames[0] ?? options.ipAddresses![0] },
    { name: 'organizationName', value: certificateOrganization },
  ]);
  cert.setIssuer(caCert.subject.attributes);
  const altNames = [
    ...options.dnsNames.map((value) => ({ type: 2, value })),
    ...(options.ipAddresses ?? []).map((ip) => ({ type: 7, ip })),
  ];
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  cert.sign(caKey, forge.md.sha256.create());
  return { certPem: toPem(cert), keyPem: key.privatePem };
}

/** The names a webhook Service is reached by from inside the cluster. */
export function serviceDnsNames(service: string, namespace: string): string[] {
  return [`${service}.${namespace}.svc`, `${service}.${namespace}.svc.cluster.local`, `${service}.${namespace}`, service];
}

/** Splits a PEM bundle (e.g. `ca.crt` holding the current and the previous CA) into certificates. */
export function splitPemBundle(bundle: string): string[] {
  const matches = bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return matches.map((pem) => `${pem}\n`);
}

function parse(pem: string): X509Certificate | undefined {
  try {
    return new X509Certificate(pem);
  } catch {
    return undefined;
  }
}

function parseSubjectAltName(value: string | undefined): { dnsNames: string[]; ipAddresses: string[] } {
  const dnsNames: string[] = [];
  const ipAddresses: string[] = [];
  for (const entry of (value ?? '').split(',').map((s) => s.trim())) {
    if (entry.startsWith('DNS:')) dnsNames.push(entry.slice(4));
    else if (entry.startsWith('IP Address:')) ipAddresses.push(entry.slice(11));
  }
  return { dnsNames, ipAddresses };
}

/** Reads validity, names and CA flag of a PEM certificate; undefined when it does not parse. */
export function certificateFacts(pem: string): CertificateFacts | undefined {
  const cert = parse(pem);
  if (!cert) return undefined;
  const names = parseSubjectAltName(cert.subjectAltName);
  return {
    notBefore: new Date(cert.validFrom),
    notAfter: new Date(cert.validTo),
    dnsNames: names.dnsNames,
    ipAddresses: names.ipAddresses,
    isCA: cert.ca,
    fingerprint256: cert.fingerprint256,
  };
}

/** True when `caPem` is a CA whose key signed `certPem`. */
export function isIssuedBy(certPem: string, caPem: string): boolean {
  const cert = parse(certPem);
  const ca = parse(caPem);
  if (!cert || !ca || !ca.ca) return false;
  try {
    return cert.checkIssued(ca) && cert.verify(ca.publicKey);
  } catch {
    return false;
  }
}

/** True when the certificate in `bundle` chain (any of them) issued `certPem`. */
export function isIssuedByAny(certPem: string, bundle: string): boolean {
  return splitPemBundle(bundle).some((ca) => isIssuedBy(certPem, ca));
}

/** True when the private key belongs to the certificate. */
export function keyMatchesCertificate(certPem: string, keyPem: string): boolean {
  const cert = parse(certPem);
  if (!cert) return false;
  try {
    return cert.checkPrivateKey(createPrivateKey(keyPem));
  } catch {
    return false;
  }
}

/** True when the certificate names every wanted DNS name and IP address. */
export function coversNames(facts: CertificateFacts, dnsNames: readonly string[], ipAddresses: readonly string[]): boolean {
  const normalisedIps = new Set(facts.ipAddresses.map(normaliseIp));
  return (
    dnsNames.every((name) => facts.dnsNames.includes(name)) && ipAddresses.every((ip) => normalisedIps.has(normaliseIp(ip)))
  );
}

// Node prints IPv6 SANs in full form; compare by canonical text.
function normaliseIp(ip: string): string {
  if (isIP(ip) !== 6) return ip;
  try {
    return new URL(`http://[${ip}]/`).hostname;
  } catch {
    return ip;
  }
}
