// Signing and verifying release artifacts by digest with cosign v3 (pinned in tools/release).
// Two modes: a key pair (tests, rehearsals, air-gapped registries; no transparency log, no
// network: an empty local signing config and trusted root keep cosign from fetching anything),
// and keyless (the release workflow: the workflow's OIDC identity, public Fulcio and Rekor).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ReleaseRefs } from './publish';
import { type ReleaseTools, run } from './tools';

export type Signing = { readonly key: string } | { readonly keyless: true };
export type Verification = { readonly key: string } | { readonly identity: string; readonly issuer: string };

const SIGNATURE_TYPE = 'https://sigstore.dev/cosign/sign/v1';
const CYCLONEDX_TYPE = 'https://cyclonedx.org/bom';

function registryArgs(refs: ReleaseRefs): string[] {
  return refs.plainHttp ? ['--allow-http-registry'] : [];
}

/** `--key` plus an offline signing config and trusted root, so key-pair signing needs no network. */
function signingArgs(tools: ReleaseTools, signing: Signing, dir: string): string[] {
  if ('keyless' in signing) return [];
  const config = path.join(dir, 'signing-config.json');
  const root = path.join(dir, 'trusted-root.json');
  if (!fs.existsSync(config)) {
    run(tools.cosign, ['signing-config', 'create', '--no-default-fulcio', '--no-default-rekor', '--no-default-tsa', '--no-default-oidc', '--out', config]);
    run(tools.cosign, ['trusted-root', 'create', '--out', root]);
  }
  return ['--key', signing.key, '--signing-config', config, '--trusted-root', root];
}

function verificationArgs(how: Verification): string[] {
  return 'key' in how ? ['--key', how.key, '--insecure-ignore-tlog'] : ['--certificate-identity-regexp', how.identity, '--certificate-oidc-issuer', how.issuer];
}

function withWorkDir<T>(fn: (dir: string) => T): T {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-cosign-'));
  try {
    return fn(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function requireDigestRef(ref: string): string {
  const digest = /@(sha256:[0-9a-f]{64})$/.exec(ref)?.[1];
  if (!digest) throw new Error(`${ref}: sign and verify by digest (REPOSITORY@sha256:…), never by tag`);
  return digest;
}

/** Signs one artifact by digest. */
export function signArtifact(tools: ReleaseTools, refs: ReleaseRefs, ref: string, signing: Signing): void {
  requireDigestRef(ref);
  withWorkDir((dir) => run(tools.cosign, ['sign', ...signingArgs(tools, signing, dir), ...registryArgs(refs), '--yes', ref]));
}

/** Attaches the CycloneDX SBOM to an artifact as a signed in-toto attestation. */
export function attestSbom(tools: ReleaseTools, refs: ReleaseRefs, ref: string, sbomFile: string, signing: Signing): void {
  requireDigestRef(ref);
  withWorkDir((dir) =>
    run(tools.cosign, ['attest', ...signingArgs(tools, signing, dir), ...registryArgs(refs), '--yes', '--type', 'cyclonedx', '--predicate', sbomFile, ref]),
  );
}

interface VerifiedSignature {
  readonly critical?: { readonly type?: string; readonly image?: { readonly 'docker-manifest-digest'?: string } };
}

/**
 * Verifies that `ref` (by digest) carries a valid signature. cosign v3's `verify` also counts an
 * attestation as a verified entry, so an attested but unsigned artifact would pass on the exit code
 * alone: require an entry of the signature type for exactly this digest.
 */
export function verifySignature(tools: ReleaseTools, refs: ReleaseRefs, ref: string, how: Verification): void {
  const digest = requireDigestRef(ref);
  let out: string;
  try {
    out = run(tools.cosign, ['verify', ...verificationArgs(how), ...registryArgs(refs), ref]);
  } catch (err) {
    throw new Error(`signature check failed for ${ref}: ${(err as Error).message}`);
  }
  const entries = JSON.parse(out.trim() || '[]') as VerifiedSignature[];
  const signed = entries.some((e) => e.critical?.type === SIGNATURE_TYPE && e.critical.image?.['docker-manifest-digest'] === digest);
  if (!signed) throw new Error(`signature check failed for ${ref}: cosign verified ${entries.length} entries but none is a signature of ${digest}`);
}

/** Verifies the signed CycloneDX attestation of `ref` (by digest) and that it is a CycloneDX BOM. */
export function verifySbomAttestation(tools: ReleaseTools, refs: ReleaseRefs, ref: string, how: Verification): void {
  requireDigestRef(ref);
  let out: string;
  try {
    out = run(tools.cosign, ['verify-attestation', ...verificationArgs(how), ...registryArgs(refs), '--type', 'cyclonedx', ref]);
  } catch (err) {
    throw new Error(`SBOM attestation check failed for ${ref}: ${(err as Error).message}`);
  }
  const statements = out
    .split('\n')
    .filter((l) => l.trim().startsWith('{'))
    .map((l) => JSON.parse(Buffer.from((JSON.parse(l) as { payload: string }).payload, 'base64').toString('utf8')) as { predicateType?: string; predicate?: { bomFormat?: string } });
  if (!statements.some((s) => s.predicateType === CYCLONEDX_TYPE && s.predicate?.bomFormat === 'CycloneDX')) {
    throw new Error(`SBOM attestation check failed for ${ref}: no CycloneDX statement among ${statements.length} verified attestations`);
  }
}
