// Flag parsing shared by the `nls` commands: node:util parseArgs in strict mode (`--name value`,
// `--name=value`, short aliases, `multiple` for repeatable flags, booleans for switches). Bad
// flags become a UsageError (exit code 2) that names the flag and what to do.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './phases';

/** parseArgs' `options`: `{ name: { type: 'string' | 'boolean', short?, multiple? } }`. */
export type FlagOptions = NonNullable<ParseArgsConfig['options']>;

/** `values` typed by the options (string, string[] or boolean per flag) and the positionals. */
export type ParsedFlags<O extends FlagOptions> = ReturnType<typeof parseArgs<{ args: string[]; options: O; strict: true; allowPositionals: true }>>;

/** Short forms every command gets with its long flag, as kubectl and helm have them. */
const CONVENTIONAL_SHORT: Readonly<Record<string, string>> = { namespace: 'n', output: 'o' };

/** `options` with `-n` for `--namespace` and `-o` for `--output` wherever the command has them. */
function withConventionalShorts<O extends FlagOptions>(options: O): O {
  const out: FlagOptions = { ...options };
  for (const [name, short] of Object.entries(CONVENTIONAL_SHORT)) {
    if (out[name] && !out[name].short) out[name] = { ...out[name], short };
  }
  return out as O;
}

/** Parses `args` of `nls <command>`. */
export function parseFlags<const O extends FlagOptions>(command: string, args: readonly string[], declared: O): ParsedFlags<O> {
  const options = withConventionalShorts(declared);
  let parsed;
  try {
    parsed = parseArgs({ args: [...args], options, strict: true, allowPositionals: true, tokens: true });
  } catch (err) {
    if (!String((err as { code?: string }).code).startsWith('ERR_PARSE_ARGS_')) throw err;
    throw explain(command, args, options) ?? new UsageError(`${command}: ${(err as Error).message}`);
  }
  // parseArgs keeps the last of a repeated single-value flag; silently dropping one is worse.
  const spec: FlagOptions = options;
  const seen = new Set<string>();
  for (const token of parsed.tokens) {
    if (token.kind !== 'option' || spec[token.name].type !== 'string' || spec[token.name].multiple) continue;
    if (seen.has(token.name)) throw new UsageError(`${command}: --${token.name} given twice; give it once`);
    seen.add(token.name);
  }
  return { values: parsed.values, positionals: parsed.positionals };
}

/** Names the first bad flag. Strict parseArgs refused `args`; a lenient pass shows which token. */
function explain(command: string, args: readonly string[], options: FlagOptions): UsageError | undefined {
  const { tokens } = parseArgs({ args: [...args], options, strict: false, allowPositionals: true, tokens: true });
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    const option = options[token.name];
    if (!option) return new UsageError(`${command}: unknown flag ${token.rawName}; see \`nls ${command} --help\``);
    if (option.type === 'boolean' && token.value !== undefined) return new UsageError(`${command}: --${token.name} takes no value`);
    // Strict mode does not take `--chart --dry-run` as chart "--dry-run"; the lenient pass does.
    if (option.type === 'string' && (token.value === undefined || (!token.inlineValue && token.value.startsWith('-')))) {
      const hint = token.value === undefined ? '' : ` (write --${token.name}=VALUE for a value that starts with "-")`;
      return new UsageError(`${command}: --${token.name} needs a value${hint}`);
    }
  }
  return undefined;
}

/** Parses a duration like `300s`, `5m`, `30d`, `90` (seconds) into milliseconds. */
export function durationMs(flag: string, text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)?$/.exec(text.trim());
  if (!m) throw new UsageError(`--${flag} "${text}" is not a duration; write e.g. 300s or 5m (units: ms, s, m, h, d, w)`);
  const factor = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[(m[2] ?? 's') as 'ms' | 's' | 'm' | 'h' | 'd' | 'w'];
  return Math.round(Number(m[1]) * factor);
}

/** A duration in helm's Go syntax (`300s`). */
export function goDuration(ms: number): string {
  return `${Math.max(1, Math.ceil(ms / 1000))}s`;
}
