// The phase runner shared by `nls crds apply`, `upgrade` and `rollback`: each phase prints its
// name, what it waits for and how long it took; a failure names the phase to resume from and the
// exact command; `--dry-run` prints the plan and changes nothing. Exit codes are the same for
// every command so scripts can tell "refused, nothing changed" from "failed half way".

/** Exit codes of the lifecycle commands. */
export const ExitCode = {
  /** Everything done (or, for `--dry-run`, the plan printed). */
  ok: 0,
  /** An unexpected error; read the message. */
  error: 1,
  /** Bad arguments; nothing was contacted. */
  usage: 2,
  /** Refused before changing anything (unpublished version, unsafe CRD change, no release). */
  refused: 3,
  /** A phase failed after changes began; the output names the phase to `--resume-from`. */
  phaseFailed: 4,
  /** `verify` found a failing check. */
  checksFailed: 5,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** Thrown when a command must stop before it changes anything; the message says why and what to do. */
export class RefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RefusedError';
  }
}

/** Thrown for bad arguments. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export interface PhaseReporter {
  /** One progress line, indented under the phase. */
  note(line: string): void;
}

export interface Phase<C> {
  /** The name `--resume-from` takes (`crds`, `guard`, `controller`, ...). */
  readonly name: string;
  /** One line: what the phase does. */
  readonly title: string;
  /** What the phase waits for before it counts as done. */
  readonly waitsFor: string;
  /** Read-only phases (checks) run even when resuming and in the plan are marked as checks. */
  readonly readOnly?: boolean;
  /** The concrete actions (commands, objects) for the plan; computed without contacting anything. */
  actions(context: C): string[];
  run(context: C, report: PhaseReporter): Promise<void>;
}

export interface RunOptions {
  /** The command as typed, without `--resume-from` (used to print the resume command). */
  readonly command: readonly string[];
  readonly resumeFrom?: string;
  readonly dryRun?: boolean;
  /** What stays in place after a failure (e.g. the guard); printed with the resume hint. */
  readonly onFailure?: (failed: string) => string | undefined;
  readonly out: (line: string) => void;
  /** Milliseconds since some origin; injectable for tests. */
  readonly now?: () => number;
}

/** Phases that run: read-only ones always, the others from `resumeFrom` on. */
export function phasesToRun<C>(phases: readonly Phase<C>[], resumeFrom?: string): { phase: Phase<C>; skipped: boolean }[] {
  if (resumeFrom === undefined) return phases.map((phase) => ({ phase, skipped: false }));
  const start = resumablePhases(phases).indexOf(resumeFrom);
  if (start < 0) {
    throw new UsageError(`--resume-from "${resumeFrom}" is not a phase of this command; use one of: ${resumablePhases(phases).join(', ')}`);
  }
  const index = phases.findIndex((p) => p.name === resumeFrom);
  return phases.map((phase, i) => ({ phase, skipped: !phase.readOnly && i < index }));
}

export function resumablePhases<C>(phases: readonly Phase<C>[]): string[] {
  return phases.filter((p) => !p.readOnly).map((p) => p.name);
}

/** The plan `--dry-run` prints. */
export function planLines<C>(phases: readonly Phase<C>[], context: C, resumeFrom?: string): string[] {
  const lines: string[] = [];
  const selected = phasesToRun(phases, resumeFrom);
  selected.forEach(({ phase, skipped }, i) => {
    const tag = skipped ? ' (skipped: resuming later)' : phase.readOnly ? ' (check, changes nothing)' : '';
    lines.push(`${i + 1}. ${phase.name}: ${phase.title}${tag}`);
    if (skipped) return;
    for (const action of phase.actions(context)) lines.push(`     - ${action}`);
    lines.push(`     waits for: ${phase.waitsFor}`);
  });
  return lines;
}

/** The command to type to resume at `phase`. */
export function resumeCommand(command: readonly string[], phase: string): string {
  const args: string[] = [];
  for (let i = 0; i < command.length; i++) {
    const arg = command[i];
    if (arg === '--resume-from') {
      i++;
      continue;
    }
    if (arg.startsWith('--resume-from=') || arg === '--dry-run') continue;
    args.push(/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`);
  }
  return [...args, '--resume-from', phase].join(' ');
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** Runs the phases in order; returns the exit code and prints progress and, on failure, how to resume. */
export async function runPhases<C>(phases: readonly Phase<C>[], context: C, options: RunOptions): Promise<ExitCode> {
  const { out } = options;
  const now = options.now ?? (() => Date.now());
  let selected: ReturnType<typeof phasesToRun<C>>;
  try {
    selected = phasesToRun(phases, options.resumeFrom);
  } catch (error) {
    out(`error: ${(error as Error).message}`);
    return ExitCode.usage;
  }
  if (options.dryRun) {
    out(`plan (dry run, nothing is changed):`);
    for (const line of planLines(phases, context, options.resumeFrom)) out(line);
    return ExitCode.ok;
  }
  const started = now();
  let changed = false;
  const total = selected.length;
  for (const [i, { phase, skipped }] of selected.entries()) {
    if (skipped) {
      out(`--- [${i + 1}/${total}] ${phase.name}: skipped (resuming from ${options.resumeFrom})`);
      continue;
    }
    out(`==> [${i + 1}/${total}] ${phase.name}: ${phase.title}`);
    out(`    waits for: ${phase.waitsFor}`);
    const phaseStart = now();
    try {
      await phase.run(context, { note: (line) => out(`    ${line}`) });
    } catch (error) {
      const message = (error as Error).message;
      const elapsed = seconds(now() - phaseStart);
      const refused = error instanceof RefusedError && !changed;
      out(`!!! ${phase.name} ${refused ? 'refused' : 'failed'} after ${elapsed}: ${message}`);
      if (error instanceof UsageError) return ExitCode.usage;
      if (refused) {
        out('    Nothing was changed.');
        return ExitCode.refused;
      }
      if (phase.readOnly && !changed) {
        out('    Nothing was changed.');
        return ExitCode.error;
      }
      const left = options.onFailure?.(phase.name);
      if (left) out(`    ${left}`);
      out(`    Fix the cause, then resume with:`);
      out(`      ${resumeCommand(options.command, phase.name)}`);
      return ExitCode.phaseFailed;
    }
    if (!phase.readOnly) changed = true;
    out(`    done in ${seconds(now() - phaseStart)}`);
  }
  out(`completed in ${seconds(now() - started)}`);
  return ExitCode.ok;
}
