// A rate-limited work queue with per-object deduplication, modelled on client-go's workqueue:
// a key is queued at most once, is never processed by two workers at the same time, and a key
// that fails is retried with per-key exponential backoff. Keys added while being processed are
// processed again once the current pass ends.
import { Clock, systemClock } from './clock';

export interface BackoffOptions {
  /** First retry delay. @default 200 */
  baseDelayMs?: number;
  /** Ceiling for the exponential delay. @default 300_000 */
  maxDelayMs?: number;
}

/** Exponential delay for the n-th consecutive failure (n starts at 1). */
export function backoffDelay(failures: number, opts: BackoffOptions = {}): number {
  const base = opts.baseDelayMs ?? 200;
  const max = opts.maxDelayMs ?? 300_000;
  const exp = Math.min(failures - 1, 30);
  return Math.min(max, base * 2 ** exp);
}

export interface WorkQueueOptions extends BackoffOptions {
  /** Called whenever depth changes (for the queue-depth gauge). */
  onDepth?: (depth: number) => void;
  /** Time for delayed keys. @default the system clock */
  clock?: Clock;
}

export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly queued = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Map<string, { at: number; cancel: () => void }>();
  private readonly waiters: Array<(key: string | undefined) => void> = [];
  private shuttingDown = false;
  private readonly clock: Clock;

  constructor(private readonly opts: WorkQueueOptions = {}) {
    this.clock = opts.clock ?? systemClock;
  }

  get depth(): number {
    return this.queue.length;
  }

  /** Queue a key now (a no-op if it is already waiting). */
  add(key: string): void {
    if (this.shuttingDown) return;
    if (this.processing.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    this.queued.add(key);
    const waiter = this.waiters.shift();
    if (waiter) {
      this.queued.delete(key);
      this.processing.add(key);
      waiter(key);
    } else {
      this.queue.push(key);
      this.opts.onDepth?.(this.queue.length);
    }
  }

  /** Queue a key after a delay; an earlier pending delay for the same key wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.shuttingDown) return;
    if (delayMs <= 0) return this.add(key);
    const at = this.clock.now() + delayMs;
    const existing = this.timers.get(key);
    if (existing && existing.at <= at) return;
    existing?.cancel();
    const cancel = this.clock.setTimer(() => {
      this.timers.delete(key);
      this.add(key);
    }, delayMs);
    this.timers.set(key, { at, cancel });
  }

  /** Queue a key after its next backoff delay; returns the delay. */
  addRateLimited(key: string): number {
    const n = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, n);
    const delay = backoffDelay(n, this.opts);
    this.addAfter(key, delay);
    return delay;
  }

  /** Reset a key's backoff after a successful pass. */
  forget(key: string): void {
    this.failures.delete(key);
  }

  failureCount(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** Wait for the next key; undefined once the queue shuts down. */
  get(): Promise<string | undefined> {
    if (this.shuttingDown) return Promise.resolve(undefined);
    const key = this.queue.shift();
    if (key !== undefined) {
      this.queued.delete(key);
      this.processing.add(key);
      this.opts.onDepth?.(this.queue.length);
      return Promise.resolve(key);
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Mark a key's pass finished; re-queues it if it was added meanwhile. */
  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.delete(key)) this.add(key);
  }

  /** Stop handing out keys; pending waiters get undefined. */
  shutDown(): void {
    this.shuttingDown = true;
    for (const { cancel } of this.timers.values()) cancel();
    this.timers.clear();
    for (const w of this.waiters.splice(0)) w(undefined);
  }

  get inFlight(): number {
    return this.processing.size;
  }
}
