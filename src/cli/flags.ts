// Flag parsing shared by the lifecycle commands: `--name value`, `--name=value`, repeatable
// flags, and boolean switches. Unknown flags are errors that list the known ones.
import { UsageError } from './phases';

export interface FlagSpec {
  /** Flags that take a value. */
  readonly values: readonly string[];
  /** Flags that may be given more than once (subset of values). */
  readonly repeatable?: readonly string[];
  /** Flags without a value. */
  readonly switches?: readonly string[];
  /** Short aliases, e.g. `{ f: 'values' }`. */
  readonly aliases?: Readonly<Record<string, string>>;
}

export interface ParsedFlags {
  readonly values: Record<string, string>;
  readonly lists: Record<string, string[]>;
  readonly switches: Set<string>;
  readonly positional: string[];
}

export function parseFlags(command: string, args: readonly string[], spec: FlagSpec, usage: string): ParsedFlags {
  const values: Record<string, string> = {};
  const lists: Record<string, string[]> = {};
  const switches = new Set<string>();
  const positional: string[] = [];
  const known = new Set([...spec.values, ...(spec.switches ?? [])]);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const long = /^--([a-z][a-z-]*)(?:=(.*))?$/.exec(arg);
    const short = /^-([a-zA-Z])$/.exec(arg);
    if (!long && !short) {
      if (arg.startsWith('-')) throw new UsageError(`${command}: unknown flag ${arg}\n${usage}`);
      positional.push(arg);
      continue;
    }
    const name = long ? long[1] : spec.aliases?.[short![1]];
    if (!name || !known.has(name)) throw new UsageError(`${command}: unknown flag ${arg}\n${usage}`);
    if (spec.switches?.includes(name)) {
      if (long?.[2] !== undefined) throw new UsageError(`${command}: --${name} takes no value`);
      switches.add(name);
      continue;
    }
    const value = long?.[2] ?? args[++i];
    if (value === undefined || (long?.[2] === undefined && value.startsWith('--'))) throw new UsageError(`${command}: --${name} needs a value`);
    if (spec.repeatable?.includes(name)) (lists[name] ??= []).push(value);
    else if (name in values) throw new UsageError(`${command}: --${name} given twice; give it once`);
    else values[name] = value;
  }
  return { values, lists, switches, positional };
}

/** Parses a duration like `300s`, `5m`, `90` (seconds) into milliseconds. */
export function durationMs(flag: string, text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!m) throw new UsageError(`--${flag} "${text}" is not a duration; write e.g. 300s or 5m`);
  const factor = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  return Math.round(Number(m[1]) * factor);
}

/** A duration in helm's Go syntax (`300s`). */
export function goDuration(ms: number): string {
  return `${Math.max(1, Math.ceil(ms / 1000))}s`;
}
