// A CycloneDX 1.5 SBOM of the operator image, from the lock files that pin what goes into it:
// package-lock.json (the production node_modules, `npm ci --omit=dev`), image/debs.lock (the
// Debian base-layer packages) and image/node.lock (the npm packages carrying the Node binary).
// Deterministic: the same inputs give byte-identical JSON, serial number included.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { formatVersion, parseVersion } from '../../src/semver';

export interface SbomInput {
  /** The release version (the image's version). */
  readonly version: string;
  /** package-lock.json contents (lockfileVersion 2 or 3). */
  readonly packageLock: string;
  /** image/debs.lock contents. */
  readonly debsLock: string;
  /** image/node.lock contents. */
  readonly nodeLock: string;
  /** ISO 8601 time for metadata.timestamp; omitted (and the SBOM deterministic) when absent. */
  readonly timestamp?: string;
}

export interface CycloneDxHash {
  readonly alg: 'SHA-1' | 'SHA-256' | 'SHA-384' | 'SHA-512';
  readonly content: string;
}

export type CycloneDxLicense = { readonly expression: string } | { readonly license: { readonly name: string } };

export interface CycloneDxProperty {
  readonly name: string;
  readonly value: string;
}

export interface CycloneDxComponent {
  readonly type: 'library' | 'application' | 'container';
  readonly 'bom-ref': string;
  readonly group?: string;
  readonly name: string;
  readonly version: string;
  readonly purl?: string;
  readonly hashes?: readonly CycloneDxHash[];
  readonly licenses?: readonly CycloneDxLicense[];
  readonly properties?: readonly CycloneDxProperty[];
}

export interface CycloneDxBom {
  readonly bomFormat: 'CycloneDX';
  readonly specVersion: '1.5';
  readonly serialNumber: string;
  readonly version: 1;
  readonly metadata: {
    readonly timestamp?: string;
    readonly component: CycloneDxComponent;
  };
  readonly components: readonly CycloneDxComponent[];
}

export const IMAGE_NAME = 'nebari-llm-serving';
/** Debian release of the image's base layer (image/debs.lock pins bookworm packages). */
const DEB_DISTRO = 'debian-12';
/** Property namespace for facts CycloneDX has no field for. */
const PROPERTY_PREFIX = 'nebari-llm-serving';

// ---------------------------------------------------------------------------------------------
// Encodings

/**
 * Percent-encodes a purl name or version segment: letters, digits, `.`, `-`, `_`, `~` and `:` stay
 * (the purl specification leaves `:` unencoded); everything else, `+` and `@` included, becomes
 * `%XX` of its UTF-8 bytes.
 */
export function purlSegment(text: string): string {
  return Array.from(new TextEncoder().encode(text))
    .map((b) => {
      const c = String.fromCharCode(b);
      return /[A-Za-z0-9.\-_~:]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
    })
    .join('');
}

/** `pkg:npm/<name>@<version>`; a scope's `@` is encoded (`pkg:npm/%40scope/name@1.0.0`). */
export function npmPurl(name: string, version: string): string {
  const slash = name.indexOf('/');
  const encoded = name.startsWith('@') && slash > 0 ? `${purlSegment(name.slice(0, slash))}/${purlSegment(name.slice(slash + 1))}` : purlSegment(name);
  return `pkg:npm/${encoded}@${purlSegment(version)}`;
}

export function debPurl(name: string, version: string, arch: string): string {
  return `pkg:deb/debian/${purlSegment(name)}@${purlSegment(version)}?arch=${purlSegment(arch)}&distro=${DEB_DISTRO}`;
}

const SRI_ALGS: Record<string, CycloneDxHash['alg']> = { sha1: 'SHA-1', sha256: 'SHA-256', sha384: 'SHA-384', sha512: 'SHA-512' };
const HEX_LENGTH: Record<CycloneDxHash['alg'], number> = { 'SHA-1': 40, 'SHA-256': 64, 'SHA-384': 96, 'SHA-512': 128 };

/**
 * Hashes of a Subresource Integrity string (`sha512-<base64>`, several separated by blanks) as
 * lowercase hex, strongest first; unknown algorithms are skipped. `where` names the source in errors.
 */
export function sriHashes(integrity: string, where: string): CycloneDxHash[] {
  const hashes: CycloneDxHash[] = [];
  for (const token of integrity.trim().split(/\s+/)) {
    const m = /^(sha1|sha256|sha384|sha512)-([A-Za-z0-9+/]+={0,2})(?:\?.*)?$/.exec(token);
    if (!m) {
      if (/^[a-z0-9]+-/.test(token)) continue; // another algorithm: nothing CycloneDX names
      throw new Error(`${where}: integrity "${token}" is not <alg>-<base64>`);
    }
    const alg = SRI_ALGS[m[1]];
    const content = Buffer.from(m[2], 'base64').toString('hex');
    if (content.length !== HEX_LENGTH[alg]) throw new Error(`${where}: the ${m[1]} integrity "${token}" does not decode to a ${HEX_LENGTH[alg] / 2}-byte digest`);
    if (!hashes.some((h) => h.alg === alg)) hashes.push({ alg, content });
  }
  return hashes.sort((a, b) => HEX_LENGTH[b.alg] - HEX_LENGTH[a.alg]);
}

/** A package.json `license` as CycloneDX: an SPDX expression when it looks like one, else a name. */
function licenses(license: unknown): CycloneDxLicense[] | undefined {
  if (typeof license !== 'string' || license.trim() === '') return undefined;
  const text = license.trim();
  // SPDX ids are letters, digits, `.`, `-` and `+`; expressions join them with AND/OR/WITH and parentheses.
  const spdx = /^[()\s]*[A-Za-z0-9.+-]+[()\s]*(?:\s(?:AND|OR|WITH)\s[()\s]*[A-Za-z0-9.+-]+[()\s]*)*$/.test(text) && !/^SEE\b/i.test(text);
  return [spdx ? { expression: text } : { license: { name: text } }];
}

/**
 * A name-based UUID (RFC 4122 version 5, SHA-1) for the SBOM's serial number, from a digest of
 * everything that determines the document: the same commit and version give the same serial.
 */
function serialNumber(input: SbomInput): string {
  // The RFC 4122 URL namespace, with a project-specific name below it.
  const namespace = Buffer.from('6ba7b8119dad11d180b400c04fd430c8', 'hex');
  const digest = createHash('sha256');
  for (const part of [input.version, input.packageLock, input.debsLock, input.nodeLock, input.timestamp ?? '']) {
    digest.update(`${Buffer.byteLength(part)}:`).update(part);
  }
  const name = `urn:${IMAGE_NAME}:sbom:${digest.digest('hex')}`;
  const b = createHash('sha1').update(namespace).update(name).digest().subarray(0, 16);
  b[6] = (b[6] & 0x0f) | 0x50;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `urn:uuid:${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

// ---------------------------------------------------------------------------------------------
// Lock files

interface LockEntry {
  name?: string;
  version?: string;
  integrity?: string;
  license?: unknown;
  dev?: boolean;
  devOptional?: boolean;
  optional?: boolean;
  link?: boolean;
  inBundle?: boolean;
  extraneous?: boolean;
}

/**
 * Production packages of package-lock.json (lockfileVersion 2 or 3, its `packages` map): what
 * `npm ci --omit=dev` installs. Skipped: the root `""`, `dev: true` entries, links and workspace
 * folders (keys outside node_modules/) and extraneous entries. `devOptional` entries are kept:
 * npm sets it on a package that is a dev dependency and also an optional dependency of a production
 * package, and --omit=dev installs those. A package installed at several paths (a copy bundled
 * in another package, say) is one component listing each path.
 */
export function npmComponents(packageLock: string): CycloneDxComponent[] {
  let lock: { lockfileVersion?: number; packages?: Record<string, LockEntry> };
  try {
    lock = JSON.parse(packageLock) as typeof lock;
  } catch (err) {
    throw new Error(`package-lock.json is not JSON: ${(err as Error).message}`);
  }
  if (typeof lock.packages !== 'object' || lock.packages === null || (lock.lockfileVersion ?? 0) < 2) {
    throw new Error(`package-lock.json has lockfileVersion ${lock.lockfileVersion} and no "packages" map: regenerate it with npm 7 or later (npm install --package-lock-only)`);
  }
  const byPurl = new Map<string, { name: string; version: string; hashes: CycloneDxHash[]; license?: unknown; paths: string[]; bundled: boolean }>();
  for (const [key, entry] of Object.entries(lock.packages)) {
    if (key === '' || entry.dev === true || entry.link === true || entry.extraneous === true) continue;
    const at = key.lastIndexOf('node_modules/');
    if (at < 0) continue; // a workspace folder: its own package is not a dependency
    const name = entry.name ?? key.slice(at + 'node_modules/'.length);
    if (typeof entry.version !== 'string' || entry.version === '') throw new Error(`package-lock.json: "${key}" has no version`);
    const where = `package-lock.json "${key}"`;
    const hashes = entry.integrity === undefined ? [] : sriHashes(entry.integrity, where);
    const purl = npmPurl(name, entry.version);
    const seen = byPurl.get(purl);
    if (seen === undefined) {
      byPurl.set(purl, { name, version: entry.version, hashes, license: entry.license, paths: [key], bundled: entry.inBundle === true });
      continue;
    }
    for (const h of hashes) {
      const other = seen.hashes.find((s) => s.alg === h.alg);
      if (other === undefined) seen.hashes.push(h);
      else if (other.content !== h.content) throw new Error(`${where}: ${name}@${entry.version} has a different ${h.alg} integrity than at "${seen.paths[0]}"`);
    }
    seen.hashes.sort((a, b) => HEX_LENGTH[b.alg] - HEX_LENGTH[a.alg]);
    seen.license ??= entry.license;
    seen.paths.push(key);
    seen.bundled &&= entry.inBundle === true;
  }
  return [...byPurl.entries()].map(([purl, p]) => {
    const slash = p.name.indexOf('/');
    const scoped = p.name.startsWith('@') && slash > 0;
    const properties: CycloneDxProperty[] = p.paths.sort().map((value) => ({ name: 'cdx:npm:package:path', value }));
    if (p.bundled) properties.push({ name: 'cdx:npm:package:bundled', value: 'true' });
    return component({
      type: 'library',
      'bom-ref': purl,
      group: scoped ? p.name.slice(0, slash) : undefined,
      name: scoped ? p.name.slice(slash + 1) : p.name,
      version: p.version,
      purl,
      hashes: p.hashes,
      licenses: licenses(p.license),
      properties,
    });
  });
}

/** The data lines of a lock file: comments (`#`) and blank lines dropped, fields split on blanks. */
function lockLines(file: string, text: string, fields: readonly string[]): { line: number; values: string[] }[] {
  const out: { line: number; values: string[] }[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const values = line.split(/\s+/);
    if (values.length !== fields.length) {
      throw new Error(`${file} line ${i + 1}: expected ${fields.length} fields (${fields.join(' ')}), found ${values.length}: "${line}"`);
    }
    out.push({ line: i + 1, values });
  });
  return out;
}

/** image/debs.lock: `package arch version sha256` per line. */
export function debComponents(debsLock: string): CycloneDxComponent[] {
  return lockLines('image/debs.lock', debsLock, ['package', 'arch', 'version', 'sha256']).map(({ line, values: [name, arch, version, sha256] }) => {
    if (!/^[0-9a-f]{64}$/.test(sha256)) throw new Error(`image/debs.lock line ${line}: "${sha256}" is not a SHA-256 (64 lowercase hex digits)`);
    const purl = debPurl(name, version, arch);
    return component({
      type: 'library',
      'bom-ref': purl,
      name,
      version,
      purl,
      hashes: [{ alg: 'SHA-256', content: sha256 }],
    });
  });
}

/** image/node.lock: `package version integrity` per line, the npm packages carrying /nodejs/bin/node. */
export function nodeComponents(nodeLock: string): CycloneDxComponent[] {
  return lockLines('image/node.lock', nodeLock, ['package', 'version', 'integrity']).map(({ line, values: [name, version, integrity] }) => {
    const hashes = sriHashes(integrity, `image/node.lock line ${line}`);
    if (hashes.length === 0) throw new Error(`image/node.lock line ${line}: no sha512 integrity for ${name}@${version}`);
    const purl = npmPurl(name, version);
    return component({
      type: 'application',
      'bom-ref': purl,
      name,
      version,
      purl,
      hashes,
      properties: [{ name: `${PROPERTY_PREFIX}:image-role`, value: 'Node.js runtime of the operator image (/nodejs/bin/node)' }],
    });
  });
}

/** Drops empty optional fields so the JSON carries no `[]` or undefined. */
function component(c: CycloneDxComponent): CycloneDxComponent {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(c)) {
    if (v === undefined || (Array.isArray(v) && v.length === 0)) continue;
    out[k] = v;
  }
  return out as unknown as CycloneDxComponent;
}

/** Code-unit order, independent of the locale. */
function byRef(a: CycloneDxComponent, b: CycloneDxComponent): number {
  return a['bom-ref'] < b['bom-ref'] ? -1 : a['bom-ref'] > b['bom-ref'] ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------

/**
 * The CycloneDX 1.5 SBOM of the operator image `nebari-llm-serving` at `version`: production npm
 * packages, Debian packages and the Node runtime, sorted by bom-ref (= purl, unique).
 */
export function cycloneDxSbom(input: SbomInput): CycloneDxBom {
  const version = formatVersion(parseVersion(input.version));
  if (input.timestamp !== undefined && Number.isNaN(Date.parse(input.timestamp))) {
    throw new Error(`timestamp "${input.timestamp}" is not an ISO 8601 date-time`);
  }
  const components = [...npmComponents(input.packageLock), ...debComponents(input.debsLock), ...nodeComponents(input.nodeLock)].sort(byRef);
  for (let i = 1; i < components.length; i++) {
    if (components[i]['bom-ref'] === components[i - 1]['bom-ref']) {
      throw new Error(`two components have the bom-ref ${components[i]['bom-ref']}: a lock file lists the same package twice`);
    }
  }
  return {
    bomFormat: 'CycloneDX',
    specVersion: '1.5',
    serialNumber: serialNumber({ ...input, version }),
    version: 1,
    metadata: {
      ...(input.timestamp === undefined ? {} : { timestamp: input.timestamp }),
      component: { type: 'container', 'bom-ref': `${IMAGE_NAME}@${version}`, name: IMAGE_NAME, version },
    },
    components,
  };
}

/** cycloneDxSbom over the repository's package-lock.json, image/debs.lock and image/node.lock. */
export function sbomFromRepo(root: string, version: string, timestamp?: string): CycloneDxBom {
  const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');
  return cycloneDxSbom({
    version,
    packageLock: read('package-lock.json'),
    debsLock: read(path.join('image', 'debs.lock')),
    nodeLock: read(path.join('image', 'node.lock')),
    timestamp,
  });
}
