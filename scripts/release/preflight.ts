// What `npm run release` checks before it changes anything: the version's form, that the tree is
// clean and tagged with it, that it is newer than every earlier release tag, that the committed
// chart carries it, and that its changelog section has entries. Each refusal says how to fix it.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { compareVersions, formatVersion, parseVersion, tryParseVersion, type Version } from '../../src/semver';
import { changelogSection } from './changelog';

export class ReleaseRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReleaseRefused';
  }
}

function git(root: string, args: string[]): string {
  return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** Release tags (`vX.Y.Z`, `vX.Y.Z-rc.N`) in the repository; other tags are ignored. */
export function releaseTags(root: string): Version[] {
  return git(root, ['tag', '--list', 'v*'])
    .split('\n')
    .map((t) => tryParseVersion(t.trim()))
    .filter((v): v is Version => v !== undefined)
    .sort(compareVersions);
}

/**
 * The newest earlier release this one must be newer than; refuses a version that is not. A patch
 * (X.Y.Z, Z > 0) is cut from its release/vX.Y branch while main may already have tagged later
 * lines, so it must be newer than the tags of its own line; any other version than every tag.
 * The tag of the version itself (at HEAD) is not "earlier".
 */
export function requireNewer(version: Version, tags: readonly Version[]): Version | undefined {
  const pool = tags.filter((t) => compareVersions(t, version) !== 0 && (version.patch === 0 || (t.major === version.major && t.minor === version.minor)));
  const last = pool[pool.length - 1];
  if (version.patch > 0 && version.rc === undefined && !pool.some((t) => t.patch === 0 && t.rc === undefined)) {
    throw new ReleaseRefused(`${formatVersion(version)} is a patch release, but ${version.major}.${version.minor}.0 was never released: patches are cut from release/v${version.major}.${version.minor}, which starts at v${version.major}.${version.minor}.0`);
  }
  if (last && compareVersions(version, last) <= 0) {
    throw new ReleaseRefused(
      `${formatVersion(version)} is not newer than the last release tag v${formatVersion(last)}` +
        (version.patch === 0 ? '' : ` of the ${version.major}.${version.minor} line`) +
        ': releases only move forward; pick a higher version',
    );
  }
  return last;
}

export interface Preflight {
  readonly version: Version;
  readonly text: string;
  readonly commit: string;
  readonly previous?: Version;
  readonly changelog: string;
}

/** Every check that needs no registry. Throws ReleaseRefused naming the fix. */
export function preflight(root: string, versionText: string): Preflight {
  let version: Version;
  try {
    version = parseVersion(versionText);
  } catch (err) {
    throw new ReleaseRefused((err as Error).message);
  }
  const text = formatVersion(version);

  const dirty = git(root, ['status', '--porcelain', '--untracked-files=normal']);
  if (dirty) {
    throw new ReleaseRefused(`the work tree is not clean; commit or stash these first (a release is built only from a tagged commit):\n${dirty}`);
  }
  const commit = git(root, ['rev-parse', 'HEAD']);
  const tagsHere = git(root, ['tag', '--points-at', 'HEAD']).split('\n').map((t) => t.trim());
  if (!tagsHere.includes(`v${text}`)) {
    throw new ReleaseRefused(
      `HEAD (${commit.slice(0, 12)}) is not tagged v${text}; tag the release commit first: git tag -a v${text} -m "nebari-llm-serving ${text}" (RELEASES.md)`,
    );
  }
  const previous = requireNewer(version, releaseTags(root));

  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
  if (pkg.version !== text) {
    throw new ReleaseRefused(
      `package.json has version ${pkg.version}, not ${text}: the chart, the image and the CLI all carry the package version; ` +
        `set it (npm version ${text} --no-git-tag-version), run npm run synth, commit, and tag that commit`,
    );
  }
  const chart = parseYaml(fs.readFileSync(path.join(root, 'charts', 'nebari-llm-serving', 'Chart.yaml'), 'utf8')) as { version?: string; appVersion?: string };
  if (chart.version !== text || chart.appVersion !== text) {
    throw new ReleaseRefused(`charts/nebari-llm-serving/Chart.yaml has version ${chart.version} / appVersion ${chart.appVersion}, not ${text}; run npm run synth and commit the generated files`);
  }
  let changelog: string;
  try {
    changelog = changelogSection(fs.readFileSync(path.join(root, 'CHANGELOG.md'), 'utf8'), text);
  } catch (err) {
    throw new ReleaseRefused((err as Error).message);
  }
  return { version, text, commit, previous, changelog };
}
