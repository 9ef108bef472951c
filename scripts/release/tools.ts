// The programs a release runs: crane and cosign built by scripts/build-tools.sh from the pinned Go
// modules, and helm v3 and v4 from the pinned npm packages (both publish checks use them).
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface ReleaseTools {
  readonly crane: string;
  readonly cosign: string;
  readonly helm3: string;
  readonly helm4: string;
}

export function releaseTools(root: string): ReleaseTools {
  const bin = execFileSync('bash', [path.join(root, 'scripts', 'build-tools.sh'), '--print-dir'], { encoding: 'utf8' }).trim();
  const tools: ReleaseTools = {
    crane: path.join(bin, 'crane'),
    cosign: path.join(bin, 'cosign'),
    helm3: path.join(bin, 'helm3'),
    helm4: path.join(bin, 'helm4'),
  };
  const missing = Object.values(tools).filter((file) => !fs.existsSync(file));
  if (missing.length > 0) throw new Error(`release tools are missing: ${missing.join(', ')}; build them with bash scripts/build-tools.sh --release (needs Go)`);
  return tools;
}

/** Runs a program; a non-zero exit throws with the command and the end of its output. */
export function run(file: string, args: readonly string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): string {
  try {
    return execFileSync(file, args, { encoding: 'utf8', env: { ...process.env, ...opts.env }, cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
  } catch (err) {
    const e = err as { status?: number; stdout?: string; stderr?: string };
    const output = `${e.stderr ?? ''}${e.stdout ?? ''}`.trim().split('\n').slice(-8).join('\n');
    throw new Error(`${path.basename(file)} ${args.slice(0, 2).join(' ')} failed (exit ${e.status ?? '?'}): ${output}`);
  }
}

/** Like run, but returns the exit status and output instead of throwing. */
export function tryRun(file: string, args: readonly string[], opts: { env?: NodeJS.ProcessEnv } = {}): { code: number; output: string } {
  try {
    return { code: 0, output: run(file, args, opts) };
  } catch (err) {
    return { code: 1, output: (err as Error).message };
  }
}
