// Where a command's lines go: results on stdout, so `--output json` stays parseable; errors on
// stderr, every one with the same `error: ` prefix, as kubectl and helm keep them apart.

/** Writes `line` to stderr when it is an error (`error: …`), else to stdout. */
export function commandOutput(line: string): void {
  (line.startsWith('error: ') ? process.stderr : process.stdout).write(line + '\n');
}

/**
 * A table cell as the terminal may see it: owners, descriptions and reasons come from users (and
 * their identity provider's claims), so control characters (escape sequences that move the cursor,
 * rewrite earlier lines or set the window title; tabs and newlines that forge columns or rows) are
 * shown escaped (`\x1b`, `\t`, `\u2028`) instead of being sent to the terminal.
 */
export function terminalSafe(cell: string): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return cell.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => {
    const code = c.charCodeAt(0);
    if (c === '\t') return '\\t';
    if (c === '\n') return '\\n';
    if (c === '\r') return '\\r';
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/**
 * A JSON line as the terminal may see it: JSON.stringify escapes C0 controls but passes C1
 * controls (U+009B is a CSI on many terminals) and line separators raw; those become `\u` escapes,
 * which parse back to the same value.
 */
export function terminalSafeJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
