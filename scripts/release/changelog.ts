// Release notes from the repository's own documents: the version's CHANGELOG.md section, the
// release-specific steps of docs/upgrading.md, and how to install and verify the published chart
// and image. Pure functions over file contents; `npm run release` reads the files.
import { formatVersion, parseVersion, releaseLine, type Version } from '../../src/semver';

// ---------------------------------------------------------------------------------------------
// Markdown structure, just enough for these documents: ATX headings outside fenced code blocks (a
// `# comment` line inside a ```sh block is not a heading) and list items.

interface Heading {
  /** 1 for `#`, 2 for `##`, ... */
  readonly level: number;
  /** The heading text without the `#` marks and surrounding blanks. */
  readonly text: string;
  /** Index of the heading's line. */
  readonly line: number;
}

interface Markdown {
  readonly lines: readonly string[];
  /** Per line: inside a fenced code block, or one of its fence lines. */
  readonly fenced: readonly boolean[];
  readonly headings: readonly Heading[];
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const ATX_HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const LIST_ITEM = /^\s*(?:[-*+]|\d{1,9}[.)])[ \t]+\S/;

function parseMarkdown(text: string): Markdown {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const fenced: boolean[] = [];
  const headings: Heading[] = [];
  let fence: string | undefined;
  lines.forEach((line, i) => {
    const f = FENCE.exec(line);
    if (fence !== undefined) {
      fenced.push(true);
      // A fence closes with the same character, at least as many of them, and nothing else.
      if (f && f[1][0] === fence[0] && f[1].length >= fence.length && line.trim() === f[1]) fence = undefined;
      return;
    }
    if (f) {
      fence = f[1];
      fenced.push(true);
      return;
    }
    fenced.push(false);
    const h = ATX_HEADING.exec(line);
    if (h) headings.push({ level: h[1].length, text: (h[2] ?? '').trim(), line: i });
  });
  return { lines, fenced, headings };
}

/** The lines under a heading up to the next heading of the same or a higher level, trimmed. */
function sectionBody(md: Markdown, heading: Heading): string {
  const next = md.headings.find((h) => h.line > heading.line && h.level <= heading.level);
  return md.lines
    .slice(heading.line + 1, next === undefined ? md.lines.length : next.line)
    .join('\n')
    .trim();
}

function hasListItem(md: Markdown, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (!md.fenced[i] && LIST_ITEM.test(md.lines[i])) return true;
  return false;
}

// ---------------------------------------------------------------------------------------------
// CHANGELOG.md

interface ReleaseHeading {
  readonly heading: Heading;
  /** What the brackets hold, e.g. `0.3.0` or `0.3.0-rc.1`. */
  readonly label: string;
  /** Whether the heading has the ` - YYYY-MM-DD` (or ` — YYYY-MM-DD`) date. */
  readonly dated: boolean;
}

const BRACKETED = /^\[([^\]]+)\](.*)$/;
const DATE_SUFFIX = /^[ \t]+[-—][ \t]+\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;

/** The `## [label] ...` headings; `## [Unreleased]` (with or without a version after it) is none. */
function releaseHeadings(md: Markdown): ReleaseHeading[] {
  const out: ReleaseHeading[] = [];
  for (const heading of md.headings) {
    if (heading.level !== 2) continue;
    const m = BRACKETED.exec(heading.text);
    if (!m || m[1].trim().toLowerCase() === 'unreleased') continue;
    out.push({ heading, label: m[1].trim(), dated: DATE_SUFFIX.test(m[2]) });
  }
  return out;
}

function sectionFor(md: Markdown, label: string): ReleaseHeading | undefined {
  const found = releaseHeadings(md).filter((r) => r.label === label);
  if (found.length > 1) {
    throw new Error(
      `CHANGELOG.md has ${found.length} sections for ${label} (lines ${found.map((r) => r.heading.line + 1).join(', ')}): keep one \`## [${label}] - YYYY-MM-DD\` section`,
    );
  }
  return found[0];
}

/**
 * The body of the CHANGELOG.md section of `version` (Keep a Changelog: `## [X.Y.Z] - YYYY-MM-DD`,
 * an em dash instead of the hyphen is accepted), up to the next `## ` heading, trimmed.
 * `## [Unreleased]` (also `## [Unreleased] — X.Y.Z`) is never a release's section.
 * A release candidate `X.Y.Z-rc.N` uses its own `## [X.Y.Z-rc.N] - ...` section when there is one,
 * else the section of `X.Y.Z` (an RC previews the coming release's notes).
 * Throws, naming the fix, when the section is missing, undated, duplicated or has no list entry:
 * the release pipeline refuses such a release.
 */
export function changelogSection(changelog: string, version: string): string {
  const v = parseVersion(version);
  const text = formatVersion(v);
  const final = formatVersion({ ...v, rc: undefined });
  const md = parseMarkdown(changelog);

  const section = sectionFor(md, text) ?? (v.rc === undefined ? undefined : sectionFor(md, final));
  if (section === undefined) {
    const unreleased = md.headings.find((h) => h.level === 2 && /^\[unreleased\]/i.test(h.text) && h.text.includes(final));
    throw new Error(
      `CHANGELOG.md has no section for ${text}: add a \`## [${final}] - YYYY-MM-DD\` section to CHANGELOG.md` +
        (v.rc === undefined ? '' : ` (or a \`## [${text}] - YYYY-MM-DD\` one; a release candidate uses its release's section when it has none of its own)`) +
        (unreleased === undefined ? '' : `; rename the \`## ${unreleased.text}\` heading (line ${unreleased.line + 1}) when cutting the release`),
    );
  }
  const { heading, label, dated } = section;
  if (!dated) {
    throw new Error(`CHANGELOG.md line ${heading.line + 1}: the heading \`## ${heading.text}\` has no date; write it as \`## [${label}] - YYYY-MM-DD\``);
  }
  const next = md.headings.find((h) => h.line > heading.line && h.level <= 2);
  const end = next === undefined ? md.lines.length : next.line;
  if (!hasListItem(md, heading.line + 1, end)) {
    throw new Error(
      `CHANGELOG.md: the \`## ${heading.text}\` section (line ${heading.line + 1}) has no entries; ` +
        'add at least one `- ` list item under it (e.g. below `### Added`, `### Changed` or `### Fixed`): a release without notes is refused',
    );
  }
  return sectionBody(md, heading);
}

// ---------------------------------------------------------------------------------------------
// docs/upgrading.md

/**
 * Convention (docs/upgrading.md, under `## Release-specific steps`): the steps for moving onto a
 * release line X.Y are one section headed `### Upgrading to X.Y.0`, named after the release that
 * opens the line; `Upgrading to X.Y` is read the same way. Any heading level counts, and text
 * after the version (`### Upgrading to 0.3.0: Envoy AI Gateway 1.2`) is a free subtitle. The
 * section applies to every release of the line (X.Y.Z and X.Y.Z-rc.N): with patches allowed to be
 * skipped, someone on X.(Y-1) may go straight to X.Y.2 and needs the same steps. A heading naming
 * a patch (`Upgrading to X.Y.Z`, Z > 0) is refused: steps a patch adds belong in the line's
 * section, marked "from X.Y.Z". Headings such as `Upgrading from 0.1.4 or earlier` never match.
 */
const UPGRADING_TO = /^Upgrading to v?(0|[1-9]\d*)\.(0|[1-9]\d*)(?:\.(0|[1-9]\d*))?(?![\w.-])/i;

/**
 * The release-specific steps of docs/upgrading.md for `version`'s release line (see the
 * convention above), trimmed; undefined when the document has none for that line.
 */
export function upgradeSteps(upgrading: string, version: string): string | undefined {
  const v: Version = parseVersion(version);
  const line = releaseLine(v);
  const md = parseMarkdown(upgrading);
  const matches = md.headings.filter((h) => {
    const m = UPGRADING_TO.exec(h.text);
    return m !== null && `${m[1]}.${m[2]}` === line;
  });
  for (const h of matches) {
    const patch = UPGRADING_TO.exec(h.text)?.[3];
    if (patch !== undefined && patch !== '0') {
      throw new Error(
        `docs/upgrading.md line ${h.line + 1}: \`${h.text}\` names a patch release; release-specific steps are kept per release line ` +
          `under \`${'#'.repeat(h.level)} Upgrading to ${line}.0\` (mark steps a patch adds with "from ${line}.${patch}")`,
      );
    }
  }
  if (matches.length > 1) {
    throw new Error(
      `docs/upgrading.md has ${matches.length} sections for the ${line} line (lines ${matches.map((h) => h.line + 1).join(', ')}): merge them into one \`### Upgrading to ${line}.0\``,
    );
  }
  if (matches.length === 0) return undefined;
  const body = sectionBody(md, matches[0]);
  if (body === '') {
    throw new Error(`docs/upgrading.md line ${matches[0].line + 1}: the \`${matches[0].text}\` section is empty; write the steps or remove the heading`);
  }
  return body;
}

// ---------------------------------------------------------------------------------------------
// Release notes

export interface ReleaseNotesInput {
  /** The release version, `X.Y.Z` or `X.Y.Z-rc.N`. */
  readonly version: string;
  /** CHANGELOG.md contents. */
  readonly changelog: string;
  /** docs/upgrading.md contents. */
  readonly upgrading: string;
  /** The operator image index digest, `sha256:<hex>`. */
  readonly imageDigest: string;
  /** The chart's OCI manifest digest, `sha256:<hex>`. */
  readonly chartDigest: string;
  /** The chart's OCI repository without tag, e.g. `<registry>/nebari/charts/nebari-llm-serving`; an `oci://` prefix is accepted. */
  readonly chartRef: string;
  /** The operator image repository without tag, e.g. `<registry>/nebari/nebari-llm-serving`. */
  readonly imageRef: string;
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;
const RELEASE_NAME = 'nebari-llm-serving';
const NAMESPACE = 'nebari-llm-serving-system';

/** A repository reference without scheme, tag or digest; throws naming the field otherwise. */
function repository(field: string, ref: string): string {
  const repo = ref.replace(/^oci:\/\//, '').replace(/\/+$/, '');
  const last = repo.slice(repo.lastIndexOf('/') + 1);
  if (repo === '' || /\s/.test(repo) || repo.includes('@') || last.includes(':') || !repo.includes('/')) {
    throw new Error(`${field} "${ref}" is not a repository reference: give <registry>/<path> without a tag or digest`);
  }
  return repo;
}

function digest(field: string, value: string): string {
  if (!DIGEST.test(value)) throw new Error(`${field} "${value}" is not a digest: give sha256:<64 lowercase hex digits>`);
  return value;
}

/**
 * The Markdown release notes: title (and a pre-release warning for an RC), the changelog section,
 * upgrade steps, install and verify commands, and the digests of the image and chart.
 * Throws like changelogSection when the changelog has no usable section.
 */
export function releaseNotes(input: ReleaseNotesInput): string {
  const v = parseVersion(input.version);
  const version = formatVersion(v);
  const chart = repository('chartRef', input.chartRef);
  const image = repository('imageRef', input.imageRef);
  const imageDigest = digest('imageDigest', input.imageDigest);
  const chartDigest = digest('chartDigest', input.chartDigest);
  const changes = changelogSection(input.changelog, version);
  const steps = upgradeSteps(input.upgrading, version);
  const final = formatVersion({ ...v, rc: undefined });

  const out: string[] = [`# ${RELEASE_NAME} ${version}`, ''];
  if (v.rc !== undefined) {
    out.push(
      `> **Pre-release: not for production.** Release candidate ${v.rc} of ${final}, published for testing. ` +
        `Install it only on test clusters; upgrade to ${final} (or a later release candidate) when it is out.`,
      '',
    );
  }
  out.push('## Changes', '', changes, '', '## Upgrading', '');
  if (steps === undefined) {
    out.push(`No release-specific steps for the ${releaseLine(v)} line: \`nls upgrade\` is all it takes.`, '');
  } else {
    out.push(`Release-specific steps for the ${releaseLine(v)} line; do these along with \`nls upgrade\`:`, '', steps, '');
  }
  out.push(
    'Read the notes of every release between yours and this one, then upgrade with the guarded sequence (docs/upgrading.md):',
    '',
    '```sh',
    `nls upgrade --chart oci://${chart} --version ${version} \\`,
    `  --release ${RELEASE_NAME} --namespace ${NAMESPACE} [-f <your-values>.yaml]`,
    '```',
    '',
    '## Install',
    '',
    '```sh',
    `helm install ${RELEASE_NAME} oci://${chart} \\`,
    `  --version ${version} -n ${NAMESPACE} --create-namespace \\`,
    '  --set platform.baseDomain=<your domain>',
    '```',
    '',
    '## Verify',
    '',
    'Check that the chart is published, then verify the signatures of the image and the chart by digest with the project\'s `cosign.pub`:',
    '',
    '```sh',
    `helm show chart oci://${chart} --version ${version}`,
    `cosign verify --key cosign.pub ${image}@${imageDigest}`,
    `cosign verify --key cosign.pub ${chart}@${chartDigest}`,
    '```',
    '',
    '| Artifact | Reference | Digest |',
    '|---|---|---|',
    `| Operator image (linux/amd64, linux/arm64) | \`${image}:${version}\` | \`${imageDigest}\` |`,
    `| Helm chart | \`oci://${chart}\` version ${version} | \`${chartDigest}\` |`,
    '',
  );
  return out.join('\n');
}
