// Where a command's lines go: results on stdout, so `--output json` stays parseable; errors on
// stderr, every one with the same `error: ` prefix, as kubectl and helm keep them apart.

/** Writes `line` to stderr when it is an error (`error: …`), else to stdout. */
export function commandOutput(line: string): void {
  (line.startsWith('error: ') ? process.stderr : process.stdout).write(line + '\n');
}
