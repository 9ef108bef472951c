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
// Ports handed to child processes come from below the kernel's ephemeral range (32768-60999 by
// default): a port the kernel picked for `listen(0)` and this process closed again can be taken as
// the source port of any outgoing connection before the child binds it (etcd once failed with
// "address already in use" so). Below the range only a listener can hold a port, and the check
// below sees listeners. Ports already handed out by this process are not handed out again.
const FREE_PORT_RANGE = { min: 20000, max: 32767 };
const handedOut = new Set<number>();

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A port on 127.0.0.1 that nothing listens on, for a child process to bind. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = FREE_PORT_RANGE.min + Math.floor(Math.random() * (FREE_PORT_RANGE.max - FREE_PORT_RANGE.min + 1));
    if (handedOut.has(port) || !(await portIsFree(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free port on 127.0.0.1 between ${FREE_PORT_RANGE.min} and ${FREE_PORT_RANGE.max} after 200 tries`);
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
