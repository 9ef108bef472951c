// Release versions (RELEASES.md): SemVer `X.Y.Z` and release candidates `X.Y.Z-rc.N`. Other
// pre-release words are refused for releases; the e2e suite's throw-away versions are never cut.

export interface Version {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
  /** The `N` of `-rc.N`; undefined for a final release. */
  readonly rc?: number;
}

const RELEASE = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-rc\.([1-9]\d*))?$/;

/** Parses a release version, or explains the accepted forms. A leading `v` (a tag) is accepted. */
export function parseVersion(text: string): Version {
  const m = RELEASE.exec(text.startsWith('v') ? text.slice(1) : text);
  if (!m) throw new Error(`"${text}" is not a release version: use X.Y.Z for a release or X.Y.Z-rc.N for a release candidate (N from 1)`);
  return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]), rc: m[4] === undefined ? undefined : Number(m[4]) };
}

/** Like parseVersion, but undefined for text that is not a release version. */
export function tryParseVersion(text: string): Version | undefined {
  try {
    return parseVersion(text);
  } catch {
    return undefined;
  }
}

export function formatVersion(v: Version): string {
  return `${v.major}.${v.minor}.${v.patch}${v.rc === undefined ? '' : `-rc.${v.rc}`}`;
}

/** SemVer precedence: a release candidate sorts before its release. */
export function compareVersions(a: Version, b: Version): number {
  return (
    a.major - b.major ||
    a.minor - b.minor ||
    a.patch - b.patch ||
    (a.rc === undefined ? (b.rc === undefined ? 0 : 1) : b.rc === undefined ? -1 : a.rc - b.rc)
  );
}

/** The release line `X.Y` a version belongs to (what the support policy counts). */
export function releaseLine(v: Version): string {
  return `${v.major}.${v.minor}`;
}

/**
 * The N→N+1 rule: an upgrade may move to the same or the next minor release line (patches may be
 * skipped). Returns the minor release line to install first when `to` skips one, else undefined.
 * For 0.x the minor is the release line, as for 1.x and later within a major; a major step must
 * start from the last minor of the previous major, which the caller cannot know, so a major
 * step is allowed only from X.Y to (X+1).0.
 */
export function skippedLine(from: Version, to: Version): string | undefined {
  if (compareVersions(to, from) <= 0) return undefined;
  if (to.major === from.major) return to.minor - from.minor > 1 ? `${from.major}.${from.minor + 1}` : undefined;
  if (to.major === from.major + 1) return to.minor > 0 ? `${to.major}.0` : undefined;
  return `${from.major + 1}.0`;
}
