// `npm run release` as a maintainer runs it, against the real local OCI registry: from a tagged
// copy of this repository (its files as they are now, committed into a fresh git repository),
// a release candidate and then the release are built, pushed, signed with a cosign key pair,
// attested and verified with helm v3 and v4, crane and cosign; the release files check out; a
// tampered image or chart fails `release verify`; and every refusal (untagged, dirty, older,
// already published, empty changelog) happens before anything reaches the registry.
import { execFileSync, spawnSync } from 'child_process';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parse as parseYaml } from 'yaml';
import { registryAddress } from '../support/cluster';
import { repoRoot, toolPaths } from '../support/tools';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-release-test-'));
const copy = path.join(tmp, 'repo');
const prefix = `release-${crypto.randomBytes(3).toString('hex')}`;
let registry: string;
const env = { ...process.env, COSIGN_PASSWORD: 'release-test', HELM_CONFIG_HOME: path.join(tmp, 'helm', 'config'), HELM_CACHE_HOME: path.join(tmp, 'helm', 'cache'), HELM_REGISTRY_CONFIG: path.join(tmp, 'helm', 'registry.json') };

function sh(file: string, args: string[], cwd = copy): string {
  return execFileSync(file, args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
}
const git = (...args: string[]) => sh('git', args);

/** Runs `npm run release -- …` in the copy; returns the exit code and all output. */
function release(args: string[]): { code: number; output: string } {
  const result = spawnSync(path.join(repoRoot, 'node_modules', '.bin', 'ts-node'), ['--transpile-only', 'scripts/release/main.ts', ...args], {
    cwd: copy, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: 600000,
  });
  return { code: result.status ?? -1, output: `${result.stdout}${result.stderr}` };
}
const registryArgs = () => ['--registry', `oci://${registry}/${prefix}`, '--plain-http'];
const crane = (...args: string[]) => sh(toolPaths().crane, args).trim();

/** Repositories under this test's prefix in the registry. */
function repositories(): string[] {
  return crane('catalog', registry).split('\n').filter((r) => r.startsWith(`${prefix}/`));
}

/** Sets the version everywhere it is generated from, adds its changelog section, commits and tags. */
function cut(version: string, changelogVersion = version.replace(/-rc\.\d+$/, '')): void {
  sh('npm', ['version', version, '--no-git-tag-version', '--allow-same-version']);
  sh('npm', ['run', 'synth']);
  const changelog = path.join(copy, 'CHANGELOG.md');
  const text = fs.readFileSync(changelog, 'utf8');
  if (!text.includes(`## [${changelogVersion}]`)) {
    const at = text.indexOf('\n## ');
    fs.writeFileSync(changelog, `${text.slice(0, at)}\n## [${changelogVersion}] - 2026-12-01\n\n### Fixed\n- Release test entry for ${changelogVersion}.\n${text.slice(at)}`);
  }
  git('add', '-A');
  git('commit', '-q', '-m', `nebari-llm-serving ${version}`);
  git('tag', '-a', `v${version}`, '-m', `nebari-llm-serving ${version}`);
}

beforeAll(() => {
  registry = registryAddress();
  // This checkout's files as they are (committed or not), in a fresh repository.
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: repoRoot, encoding: 'utf8' }).split('\0').filter((f) => f && fs.existsSync(path.join(repoRoot, f)));
  for (const f of files) {
    fs.mkdirSync(path.dirname(path.join(copy, f)), { recursive: true });
    fs.copyFileSync(path.join(repoRoot, f), path.join(copy, f));
    fs.chmodSync(path.join(copy, f), fs.statSync(path.join(repoRoot, f)).mode);
  }
  fs.symlinkSync(path.join(repoRoot, 'node_modules'), path.join(copy, 'node_modules'));
  git('init', '-q', '-b', 'main');
  fs.appendFileSync(path.join(copy, '.git', 'info', 'exclude'), 'node_modules\n');
  git('config', 'user.email', 'release-test@example.com');
  git('config', 'user.name', 'release test');
  git('add', '-A');
  git('commit', '-q', '-m', 'base');
  sh(toolPaths().cosign, ['generate-key-pair', '--output-key-prefix', path.join(tmp, 'cosign')]);
}, 120000);

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const key = () => ['--key', path.join(tmp, 'cosign.key')];
const pub = () => ['--key', path.join(tmp, 'cosign.pub')];

test('refusals before anything is pushed: untagged HEAD, dirty tree, no changelog section, bad arguments', () => {
  const untagged = release(['--version', '0.3.0-rc.1', ...registryArgs(), ...key()]);
  expect(untagged.code).toBe(3);
  expect(untagged.output).toContain('is not tagged v0.3.0-rc.1');

  git('tag', '-a', 'v0.9.0-rc.1', '-m', 'x');
  fs.appendFileSync(path.join(copy, 'README.md'), '\nlocal edit\n');
  const dirty = release(['--version', '0.9.0-rc.1', ...registryArgs(), ...key()]);
  expect(dirty.code).toBe(3);
  expect(dirty.output).toContain('the work tree is not clean');
  expect(dirty.output).toContain('README.md');
  git('checkout', '--', 'README.md');

  // Tagged and clean, but package.json and the changelog know nothing of 0.9.0.
  const wrongVersion = release(['--version', '0.9.0-rc.1', ...registryArgs(), ...key()]);
  expect(wrongVersion.code).toBe(3);
  expect(wrongVersion.output).toContain('package.json has version');
  git('tag', '-d', 'v0.9.0-rc.1');

  sh('npm', ['version', '0.9.0', '--no-git-tag-version']);
  sh('npm', ['run', 'synth']);
  git('commit', '-qam', '0.9.0 without a changelog section');
  git('tag', '-a', 'v0.9.0', '-m', 'x');
  const noNotes = release(['--version', '0.9.0', ...registryArgs(), ...key()]);
  expect(noNotes.code).toBe(3);
  expect(noNotes.output).toContain('CHANGELOG.md');
  git('tag', '-d', 'v0.9.0');
  git('reset', '-q', '--hard', 'HEAD~1');

  expect(release(['--version', '0.3', ...registryArgs(), ...key()]).code).toBe(3);
  const noSigning = release(['--version', '0.3.0', ...registryArgs()]);
  expect(noSigning.code).toBe(2);
  expect(noSigning.output).toContain('--key');
  expect(repositories()).toEqual([]);
}, 300000);

test('a release candidate, then the release: published, signed, attested, verified, files that check out', () => {
  for (const version of ['0.3.0-rc.1', '0.3.0']) {
    cut(version);
    const published = release(['--version', version, ...registryArgs(), ...key()]);
    if (published.code !== 0) throw new Error(`release ${version} failed (${published.code}):\n${published.output}`);
    expect(published.output).toContain(`released ${version} in `);
    console.log(published.output.split('\n').filter((l) => /^(released| {2}(image|chart) )/.test(l)).join('\n'));
    if (version.includes('-rc.')) expect(published.output).toContain('(release candidate)');

    // What a user checks: the chart with both helm majors, pinned to the signed image digest.
    const chartRef = `oci://${registry}/${prefix}/charts/nebari-llm-serving`;
    const imageDigest = crane('digest', `${registry}/${prefix}/nebari-llm-serving:${version}`);
    for (const helm of [toolPaths().helm3, toolPaths().helm4]) {
      const chart = parseYaml(sh(helm, ['show', 'chart', chartRef, '--version', version, '--plain-http'])) as { version: string; appVersion: string };
      expect([chart.version, chart.appVersion]).toEqual([version, version]);
      const values = parseYaml(sh(helm, ['show', 'values', chartRef, '--version', version, '--plain-http'])) as { operator: { image: { repository: string; digest: string } } };
      expect(values.operator.image).toMatchObject({ repository: `${registry}/${prefix}/nebari-llm-serving`, digest: imageDigest });
    }
    const index = JSON.parse(crane('manifest', `${registry}/${prefix}/nebari-llm-serving@${imageDigest}`)) as { manifests: { platform: { architecture: string } }[] };
    expect(index.manifests.map((m) => m.platform.architecture).sort()).toEqual(['amd64', 'arm64']);

    // The release files: SHA256SUMS holds for every file; image-index.json hashes to the digest.
    const out = path.join(copy, 'dist', 'release', version);
    const sums = fs.readFileSync(path.join(out, 'SHA256SUMS'), 'utf8').trim().split('\n').map((l) => l.split(/\s+/));
    expect(sums.map(([, name]) => name).sort()).toEqual(['image-index.json', `nebari-llm-serving-${version}.tgz`, 'release-notes.md', 'sbom.cdx.json']);
    for (const [sum, name] of sums) expect(crypto.createHash('sha256').update(fs.readFileSync(path.join(out, name))).digest('hex')).toBe(sum);
    expect(`sha256:${sums.find(([, n]) => n === 'image-index.json')![0]}`).toBe(imageDigest);
    const notes = fs.readFileSync(path.join(out, 'release-notes.md'), 'utf8');
    expect(notes).toContain(`Release test entry for 0.3.0`);
    expect(notes).toContain(imageDigest);
    const sbom = JSON.parse(fs.readFileSync(path.join(out, 'sbom.cdx.json'), 'utf8')) as { bomFormat: string; components: { purl: string }[] };
    expect(sbom.bomFormat).toBe('CycloneDX');
    expect(sbom.components.map((c) => c.purl)).toEqual(expect.arrayContaining(['pkg:npm/yaml@2.9.1', expect.stringMatching(/^pkg:deb\/debian\/libc6@/)]));

    const verified = release(['verify', '--version', version, ...registryArgs(), ...pub()]);
    if (verified.code !== 0) throw new Error(`release verify ${version} failed:\n${verified.output}`);
    expect(verified.output).toContain(`verified ${version}`);
  }
}, 1200000);

test('publishing a version twice, or an older one, is refused before anything changes', () => {
  const before = crane('digest', `${registry}/${prefix}/nebari-llm-serving:0.3.0`);
  const again = release(['--version', '0.3.0', ...registryArgs(), ...key()]);
  expect(again.code).toBe(3);
  expect(again.output).toContain('0.3.0 is already published');
  expect(crane('digest', `${registry}/${prefix}/nebari-llm-serving:0.3.0`)).toBe(before);

  cut('0.3.0-rc.2');
  const older = release(['--version', '0.3.0-rc.2', ...registryArgs(), ...key()]);
  expect(older.code).toBe(3);
  expect(older.output).toContain('0.3.0-rc.2 is not newer than the last release tag v0.3.0');
  expect(repositories().sort()).toEqual([`${prefix}/charts/nebari-llm-serving`, `${prefix}/nebari-llm-serving`]);
  expect(crane('ls', `${registry}/${prefix}/nebari-llm-serving`).split('\n')).not.toContain('0.3.0-rc.2');
}, 300000);

test('a tampered image or chart fails release verify', () => {
  const repo = `${registry}/${prefix}/nebari-llm-serving`;
  // Someone pushes a different image under the released tag.
  fs.writeFileSync(path.join(tmp, 'payload'), 'not the release\n');
  sh('tar', ['-C', tmp, '-cf', path.join(tmp, 'payload.tar'), 'payload']);
  crane('append', '--oci-empty-base', '-f', path.join(tmp, 'payload.tar'), '-t', `${repo}:0.3.0-rc.1`);
  const image = release(['verify', '--version', '0.3.0-rc.1', ...registryArgs(), ...pub()]);
  expect(image.code).toBe(1);
  expect(image.output).toMatch(/signature check failed for .*nebari-llm-serving@sha256/);

  // … or a different chart under the released version.
  const work = fs.mkdtempSync(path.join(tmp, 'tamper-'));
  const chartRef = `oci://${registry}/${prefix}/charts/nebari-llm-serving`;
  sh(toolPaths().helm3, ['pull', chartRef, '--version', '0.3.0', '--plain-http', '--untar', '--untardir', work]);
  fs.appendFileSync(path.join(work, 'nebari-llm-serving', 'values.yaml'), '\nextraValue: injected\n');
  sh(toolPaths().helm3, ['package', path.join(work, 'nebari-llm-serving'), '--destination', work]);
  sh(toolPaths().helm3, ['push', path.join(work, 'nebari-llm-serving-0.3.0.tgz'), `oci://${registry}/${prefix}/charts`, '--plain-http']);
  const chart = release(['verify', '--version', '0.3.0', ...registryArgs(), ...pub()]);
  expect(chart.code).toBe(1);
  expect(chart.output).toMatch(/signature check failed for .*charts\/nebari-llm-serving@sha256/);

  // The right key is needed too: another key pair's public key fails the untouched image.
  sh(toolPaths().cosign, ['generate-key-pair', '--output-key-prefix', path.join(tmp, 'other')]);
  const otherKey = release(['verify', '--version', '0.3.0', ...registryArgs(), '--key', path.join(tmp, 'other.pub')]);
  expect(otherKey.code).toBe(1);
  expect(otherKey.output).toContain('signature check failed');
}, 300000);
