import * as fs from 'node:fs';
import * as path from 'node:path';
import { changelogSection, releaseNotes, upgradeSteps } from '../../../scripts/release/changelog';

const root = path.resolve(__dirname, '..', '..', '..');
const realChangelog = fs.readFileSync(path.join(root, 'CHANGELOG.md'), 'utf8');
const realUpgrading = fs.readFileSync(path.join(root, 'docs', 'upgrading.md'), 'utf8');

const CHANGELOG = `# Changelog

All notable changes to this project are recorded here.

## [Unreleased] — 0.4.0

### Added
- Something not released yet.

## [0.3.0] — 2026-06-01

### Added
- The \`nls audit\` command.

\`\`\`sh
## not a heading: a shell comment in a code block
nls audit
\`\`\`

### Fixed
- Rollback keeps the guard.

## [0.3.0-rc.2] - 2026-05-20

### Changed
- Release candidate 2 only: the guard timeout.

## [0.2.0] - 2026-04-01

### Added
- First release.

[0.3.0]: https://example.com/compare/v0.2.0...v0.3.0
`;

const SECTION_030 = `### Added
- The \`nls audit\` command.

\`\`\`sh
## not a heading: a shell comment in a code block
nls audit
\`\`\`

### Fixed
- Rollback keeps the guard.`;

describe('changelogSection', () => {
  test('returns the trimmed body of exactly that version, up to the next ## heading (em dash accepted)', () => {
    expect(changelogSection(CHANGELOG, '0.3.0')).toBe(SECTION_030);
    expect(changelogSection(CHANGELOG, 'v0.3.0')).toBe(SECTION_030);
  });

  test('the last section runs to the end of the file', () => {
    expect(changelogSection(CHANGELOG, '0.2.0')).toBe('### Added\n- First release.\n\n[0.3.0]: https://example.com/compare/v0.2.0...v0.3.0');
  });

  test('a release candidate uses its own section when there is one', () => {
    expect(changelogSection(CHANGELOG, '0.3.0-rc.2')).toBe('### Changed\n- Release candidate 2 only: the guard timeout.');
  });

  test('a release candidate without its own section falls back to the release section', () => {
    expect(changelogSection(CHANGELOG, '0.3.0-rc.1')).toBe(SECTION_030);
    expect(changelogSection(CHANGELOG, '0.3.0-rc.3')).toBe(SECTION_030);
  });

  test('[Unreleased] — X.Y.Z is not a release section: refused with the fix and the heading to rename', () => {
    expect(() => changelogSection(CHANGELOG, '0.4.0')).toThrow(
      'CHANGELOG.md has no section for 0.4.0: add a `## [0.4.0] - YYYY-MM-DD` section to CHANGELOG.md; rename the `## [Unreleased] — 0.4.0` heading (line 5) when cutting the release',
    );
  });

  test('a missing section is refused; an RC names both headings it would accept', () => {
    expect(() => changelogSection(CHANGELOG, '0.2.1')).toThrow('CHANGELOG.md has no section for 0.2.1: add a `## [0.2.1] - YYYY-MM-DD` section to CHANGELOG.md');
    expect(() => changelogSection(CHANGELOG, '0.5.0-rc.1')).toThrow(
      'CHANGELOG.md has no section for 0.5.0-rc.1: add a `## [0.5.0] - YYYY-MM-DD` section to CHANGELOG.md (or a `## [0.5.0-rc.1] - YYYY-MM-DD` one;',
    );
  });

  test('versions match exactly: 0.3.0 is neither 10.3.0 nor 0.3.0-rc.2', () => {
    const text = '## [10.3.0] - 2026-01-01\n- ten\n\n## [0.3.0-rc.2] - 2026-01-01\n- rc\n';
    expect(() => changelogSection(text, '0.3.0')).toThrow('CHANGELOG.md has no section for 0.3.0');
  });

  test('a section with no list entry (empty or only sub-headings) is refused naming CHANGELOG.md and the fix', () => {
    const empty = '## [0.5.0] - 2026-07-01\n\n### Added\n\n### Fixed\n\n## [0.4.0] - 2026-06-01\n- x\n';
    expect(() => changelogSection(empty, '0.5.0')).toThrow(
      'CHANGELOG.md: the `## [0.5.0] - 2026-07-01` section (line 1) has no entries; add at least one `- ` list item under it',
    );
    expect(() => changelogSection('## [0.5.0] - 2026-07-01\n', '0.5.0')).toThrow('has no entries');
    // A list item inside a code block is not an entry.
    expect(() => changelogSection('## [0.5.0] - 2026-07-01\n```\n- not an entry\n```\n', '0.5.0')).toThrow('has no entries');
    // The RC fallback refuses the same way.
    expect(() => changelogSection(empty, '0.5.0-rc.1')).toThrow('CHANGELOG.md: the `## [0.5.0] - 2026-07-01` section (line 1) has no entries');
  });

  test('numbered and * list items count as entries', () => {
    expect(changelogSection('## [1.0.0] - 2026-07-01\n1. one\n', '1.0.0')).toBe('1. one');
    expect(changelogSection('## [1.0.0] - 2026-07-01\n* one\n', '1.0.0')).toBe('* one');
  });

  test('an undated, duplicated or malformed section is refused with the form to use', () => {
    expect(() => changelogSection('## [0.5.0]\n- x\n', '0.5.0')).toThrow('CHANGELOG.md line 1: the heading `## [0.5.0]` has no date; write it as `## [0.5.0] - YYYY-MM-DD`');
    expect(() => changelogSection('## [0.5.0] - 2026-13-01\n- x\n', '0.5.0')).toThrow('has no date');
    expect(() => changelogSection('## [0.5.0] - 2026-07-01\n- x\n\n## [0.5.0] - 2026-07-02\n- y\n', '0.5.0')).toThrow(
      'CHANGELOG.md has 2 sections for 0.5.0 (lines 1, 4): keep one `## [0.5.0] - YYYY-MM-DD` section',
    );
    expect(() => changelogSection(CHANGELOG, '0.3')).toThrow('"0.3" is not a release version');
  });

  test('CRLF line endings are read like LF', () => {
    expect(changelogSection('## [1.0.0] - 2026-07-01\r\n- one\r\n- two\r\n', '1.0.0')).toBe('- one\n- two');
  });

  test("the repository's CHANGELOG.md: its [Unreleased] — 0.2.0 heading is refused until renamed, then gives the whole section", () => {
    expect(() => changelogSection(realChangelog, '0.2.0')).toThrow('rename the `## [Unreleased] — 0.2.0` heading');
    const released = realChangelog.replace('## [Unreleased] — 0.2.0', '## [0.2.0] - 2026-05-01');
    const body = changelogSection(released, '0.2.0');
    expect(body.startsWith('### Added\n- **Kinds** `LLMModel`, `PassthroughModel` and `AgentDeployment`')).toBe(true);
    expect(body).toContain('\n### Fixed (found by installing the chart on a real kubelet node)\n');
    expect(body).toBe(released.slice(released.indexOf('### Added')).trim());
    expect(changelogSection(released, '0.2.0-rc.1')).toBe(body);
  });
});

describe('upgradeSteps', () => {
  test("docs/upgrading.md: the 0.2 line's steps for 0.2.0, its RCs and patches; the next heading ends them", () => {
    const steps = upgradeSteps(realUpgrading, '0.2.0');
    expect(steps?.startsWith('- 0.2.0 adds the `AgentDeployment` kind and its CRD;')).toBe(true);
    expect(steps?.endsWith('0.2.0 is not supported by `nls rollback`.')).toBe(true);
    expect(steps).not.toContain('Releases after 0.1.4');
    expect(upgradeSteps(realUpgrading, '0.2.0-rc.1')).toBe(steps);
    expect(upgradeSteps(realUpgrading, '0.2.3')).toBe(steps);
  });

  test('undefined for a line without steps; "Upgrading from 0.1.4 or earlier" names no target line', () => {
    expect(upgradeSteps(realUpgrading, '0.3.0')).toBeUndefined();
    expect(upgradeSteps(realUpgrading, '0.1.5')).toBeUndefined();
    expect(upgradeSteps(realUpgrading, '1.2.0')).toBeUndefined();
  });

  const DOC = `# Upgrading

## Release-specific steps

### Upgrading to 0.4: Envoy AI Gateway 1.2

- Upgrade the gateway first.

#### Values renamed
- \`a\` is now \`b\`.

\`\`\`sh
# a shell comment, not a heading
helm upgrade ...
\`\`\`

### Upgrading to 0.3.0

- Apply the CRDs.

## Supported gateway versions

Text.
`;

  test('X.Y and X.Y.0 headings, a subtitle, deeper sub-headings and code blocks stay in the section', () => {
    expect(upgradeSteps(DOC, '0.4.1')).toBe(
      '- Upgrade the gateway first.\n\n#### Values renamed\n- `a` is now `b`.\n\n```sh\n# a shell comment, not a heading\nhelm upgrade ...\n```',
    );
    expect(upgradeSteps(DOC, '0.3.0')).toBe('- Apply the CRDs.');
    expect(upgradeSteps(DOC, '0.30.0')).toBeUndefined();
  });

  test('a patch heading, two sections for one line and an empty section are refused', () => {
    expect(() => upgradeSteps('### Upgrading to 0.4.2\n- x\n', '0.4.2')).toThrow(
      'docs/upgrading.md line 1: `Upgrading to 0.4.2` names a patch release; release-specific steps are kept per release line under `### Upgrading to 0.4.0`',
    );
    expect(() => upgradeSteps('### Upgrading to 0.4\n- x\n### Upgrading to 0.4.0\n- y\n', '0.4.0')).toThrow(
      'docs/upgrading.md has 2 sections for the 0.4 line (lines 1, 3): merge them into one `### Upgrading to 0.4.0`',
    );
    expect(() => upgradeSteps('### Upgrading to 0.4.0\n\n### Upgrading to 0.3.0\n- y\n', '0.4.0')).toThrow(
      'docs/upgrading.md line 1: the `Upgrading to 0.4.0` section is empty; write the steps or remove the heading',
    );
  });
});

describe('releaseNotes', () => {
  const base = {
    changelog: CHANGELOG,
    upgrading: `## Release-specific steps\n\n### Upgrading to 0.3.0\n\n- Apply the CRDs first.\n`,
    imageDigest: `sha256:${'a'.repeat(64)}`,
    chartDigest: `sha256:${'b'.repeat(64)}`,
    chartRef: 'oci://registry.example.com/nebari/charts/nebari-llm-serving',
    imageRef: 'registry.example.com/nebari/nebari-llm-serving',
  };
  const chart = 'registry.example.com/nebari/charts/nebari-llm-serving';
  const image = 'registry.example.com/nebari/nebari-llm-serving';

  test('a release: title, changes, upgrade steps, install and verify commands, digests', () => {
    const notes = releaseNotes({ ...base, version: '0.3.0' });
    const lines = notes.split('\n');
    expect(lines[0]).toBe('# nebari-llm-serving 0.3.0');
    expect(notes).not.toContain('Pre-release');
    expect(notes).toContain(`## Changes\n\n${SECTION_030}\n\n## Upgrading\n`);
    expect(notes).toContain("Release-specific steps for the 0.3 line; do these along with `nls upgrade`:\n\n- Apply the CRDs first.\n");
    expect(lines).toContain(`nls upgrade --chart oci://${chart} --version 0.3.0 \\`);
    expect(notes).toContain(`helm install nebari-llm-serving oci://${chart} \\\n  --version 0.3.0 -n nebari-llm-serving-system --create-namespace \\`);
    expect(lines).toContain(`helm show chart oci://${chart} --version 0.3.0`);
    expect(lines).toContain(`cosign verify --key cosign.pub ${image}@sha256:${'a'.repeat(64)}`);
    expect(lines).toContain(`cosign verify --key cosign.pub ${chart}@sha256:${'b'.repeat(64)}`);
    expect(lines).toContain(`| Operator image (linux/amd64, linux/arm64) | \`${image}:0.3.0\` | \`sha256:${'a'.repeat(64)}\` |`);
    expect(lines).toContain(`| Helm chart | \`oci://${chart}\` version 0.3.0 | \`sha256:${'b'.repeat(64)}\` |`);
    expect(notes.endsWith('|\n')).toBe(true);
    // Sections in order.
    const order = ['## Changes', '## Upgrading', '## Install', '## Verify'].map((h) => lines.indexOf(h));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(order.every((i) => i > 0)).toBe(true);
  });

  test('a release candidate is marked as a pre-release not for production and uses the release section', () => {
    const notes = releaseNotes({ ...base, version: '0.3.0-rc.1' });
    expect(notes.split('\n').slice(0, 3)).toEqual([
      '# nebari-llm-serving 0.3.0-rc.1',
      '',
      '> **Pre-release: not for production.** Release candidate 1 of 0.3.0, published for testing. Install it only on test clusters; upgrade to 0.3.0 (or a later release candidate) when it is out.',
    ]);
    expect(notes).toContain(SECTION_030);
    expect(notes).toContain(`helm show chart oci://${chart} --version 0.3.0-rc.1\n`);
  });

  test('without release-specific steps, one line says nls upgrade is all it takes', () => {
    const notes = releaseNotes({ ...base, version: '0.2.0', imageRef: `${image}/`, chartRef: chart });
    expect(notes).toContain('## Upgrading\n\nNo release-specific steps for the 0.2 line: `nls upgrade` is all it takes.\n');
    expect(notes).toContain(`helm show chart oci://${chart} --version 0.2.0\n`);
    expect(notes).toContain(`cosign verify --key cosign.pub ${image}@sha256:`);
  });

  test('refuses a release without changelog entries, bad digests and references with a tag or digest', () => {
    expect(() => releaseNotes({ ...base, version: '0.4.0' })).toThrow('add a `## [0.4.0] - YYYY-MM-DD` section to CHANGELOG.md');
    expect(() => releaseNotes({ ...base, version: '0.3.0', imageDigest: 'sha256:abc' })).toThrow('imageDigest "sha256:abc" is not a digest');
    expect(() => releaseNotes({ ...base, version: '0.3.0', chartDigest: 'a'.repeat(64) })).toThrow('chartDigest');
    expect(() => releaseNotes({ ...base, version: '0.3.0', imageRef: `${image}:0.3.0` })).toThrow('imageRef "registry.example.com/nebari/nebari-llm-serving:0.3.0" is not a repository reference');
    expect(() => releaseNotes({ ...base, version: '0.3.0', chartRef: `${chart}@sha256:${'b'.repeat(64)}` })).toThrow('chartRef');
    // A registry port is not a tag.
    expect(releaseNotes({ ...base, version: '0.3.0', imageRef: 'localhost:5000/nebari/nebari-llm-serving' })).toContain(
      'cosign verify --key cosign.pub localhost:5000/nebari/nebari-llm-serving@sha256:',
    );
  });
});
