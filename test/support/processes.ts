// Child processes of the test control plane: started with their output in a log file, and
// killed when the test process exits for any reason, so a failed or interrupted run leaves
// nothing behind.
import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as net from 'net';
import * as path from 'path';

const running = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  const killAll = () => {
    for (const child of running) child.kill('SIGKILL');
  };
  process.on('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      killAll();
      process.exit(128 + (signal === 'SIGINT' ? 2 : signal === 'SIGTERM' ? 15 : 1));
    });
  }
}

/** A program of the control plane running in the background. */
export interface ManagedProcess {
  readonly name: string;
  readonly logFile: string;
  readonly child: ChildProcess;
  /** Resolves when the process has exited. */
  readonly exited: Promise<number | null>;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
  /** The last lines of its log, for error messages. */
  logTail(lines?: number): string;
}

export function startProcess(
  name: string,
  binary: string,
  args: string[],
  opts: { logDir: string; env?: NodeJS.ProcessEnv; cwd?: string },
): ManagedProcess {
  installExitHook();
  const logFile = path.join(opts.logDir, `${name}.log`);
  const out = fs.openSync(logFile, 'a');
  const child = spawn(binary, args, {
    cwd: opts.cwd,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', out, out],
  });
  fs.closeSync(out);
  running.add(child);
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      running.delete(child);
      resolve(code);
    });
    child.once('error', () => {
      running.delete(child);
      resolve(-1);
    });
  });
  const logTail = (lines = 30) => {
    try {
      return fs.readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  };
  const stop = async (graceMs = 5000) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  };
  return { name, logFile, child, exited, stop, logTail };
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Polls `check` until it returns true, failing with `describe()` after `timeoutMs`, or at once
 * when `process` exits (a crashed server never becomes ready).
 */
export async function waitFor(
  what: string,
  check: () => Promise<boolean | undefined>,
  opts: { timeoutMs?: number; intervalMs?: number; process?: ManagedProcess } = {},
): Promise<void> {
  const deadline = Date.now() + (opts.timeoutMs ?? 60000);
  let lastError = '';
  for (;;) {
    if (opts.process && opts.process.child.exitCode !== null) {
      throw new Error(`${opts.process.name} exited with code ${opts.process.child.exitCode} while waiting for ${what}; log ${opts.process.logFile}:\n${opts.process.logTail()}`);
    }
    try {
      if (await check()) return;
    } catch (err) {
      lastError = (err as Error).message;
    }
    if (Date.now() > deadline) {
      const tail = opts.process ? `\nlog ${opts.process.logFile}:\n${opts.process.logTail()}` : '';
      throw new Error(`timed out waiting for ${what}${lastError ? ` (last error: ${lastError})` : ''}${tail}`);
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 200));
  }
}
