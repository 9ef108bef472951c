// SHA256SUMS for the release assets, in the format `sha256sum` writes and `sha256sum -c` checks:
// `<64 hex digits><two spaces><name>` per line.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';

export interface ChecksumEntry {
  readonly name: string;
  /** 64 lowercase hex digits. */
  readonly sha256: string;
}

const SHA256 = /^[0-9a-f]{64}$/;

/** The SHA-256 of a file's bytes as lowercase hex, read in chunks (release assets can be large). */
export function sha256File(file: string): string {
  const hash = createHash('sha256');
  const buf = Buffer.alloc(1 << 20);
  const fd = fs.openSync(file, 'r');
  try {
    for (let n = fs.readSync(fd, buf, 0, buf.length, null); n > 0; n = fs.readSync(fd, buf, 0, buf.length, null)) {
      hash.update(buf.subarray(0, n));
    }
  } finally {
    fs.closeSync(fd);
  }
  return hash.digest('hex');
}

/**
 * A name sha256sum would write escaped (a backslash or line break) is refused rather than
 * escaped: release assets have plain names.
 */
function checkName(name: string, where: string): void {
  if (name === '' || /[\\\n\r]/.test(name)) {
    throw new Error(`${where}: the file name ${JSON.stringify(name)} is empty or has a backslash or line break; release assets need plain names`);
  }
}

/** `<sha256>  <name>\n` per entry, sorted by name (code-unit order); names must be unique. */
export function checksumsFile(entries: readonly ChecksumEntry[]): string {
  const sorted = [...entries].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return sorted
    .map((e, i) => {
      checkName(e.name, 'checksumsFile');
      if (!SHA256.test(e.sha256)) throw new Error(`checksumsFile: the sha256 of ${e.name} is "${e.sha256}", not 64 lowercase hex digits`);
      if (i > 0 && sorted[i - 1].name === e.name) throw new Error(`checksumsFile: ${e.name} is listed twice`);
      return `${e.sha256}  ${e.name}\n`;
    })
    .join('');
}

/**
 * The entries of a sha256sum file, in file order. Accepts the text (`  `) and binary (` *`)
 * separators and upper-case hex (returned lower-case); blank lines are skipped. Throws naming the
 * line for anything else, and for a name listed twice.
 */
export function parseChecksums(text: string): ChecksumEntry[] {
  const out: ChecksumEntry[] = [];
  const seen = new Set<string>();
  text.split('\n').forEach((raw, i) => {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '') return;
    const m = /^([0-9a-fA-F]{64}) [ *](.+)$/.exec(line);
    if (!m) throw new Error(`checksums line ${i + 1}: expected "<sha256>  <name>", found ${JSON.stringify(line)}`);
    const name = m[2];
    checkName(name, `checksums line ${i + 1}`);
    if (seen.has(name)) throw new Error(`checksums line ${i + 1}: ${name} is listed twice`);
    seen.add(name);
    out.push({ name, sha256: m[1].toLowerCase() });
  });
  return out;
}
