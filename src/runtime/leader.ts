// Lease-based leader election (coordination.k8s.io/v1) with client-go's semantics.
//
// Clocks of different nodes are never compared. A candidate keeps the Lease record it last read
// and the time, on its own clock, at which that record last changed; it may take the Lease over
// only after the record has stayed unchanged for `leaseDuration`. The holder's `renewTime` is a
// change marker (and for people reading the Lease), never compared with this node's clock.
//
// A leader leads only while a renewal that *started* less than `renewDeadline` ago has succeeded.
// That renewal's write reached the API server after it started, so no candidate can take over
// before start + `leaseDuration`, which is later. Every Lease request ends by that deadline, so a
// slow or hung API server cannot stretch a term, and a timer ends the term on time whatever the
// loop is waiting for. Updates carry the resourceVersion: of two candidates writing in the same
// round, only one succeeds.
import { performance } from 'perf_hooks';
import { KubeRest, isConflict, isNotFound } from '../kube/rest';
import { Logger } from './log';

/** This node's clock: only differences between two readings are used. Injected by tests to skew it. */
export interface Clock {
  /** Milliseconds. */
  now(): number;
  /** Calls `fn` after `ms`; returns a function that cancels the call. */
  after(ms: number, fn: () => void): () => void;
}

/** Monotonic, so a step of the wall clock cannot shorten or stretch a lease. */
export const realClock: Clock = {
  now: () => performance.timeOrigin + performance.now(),
  after: (ms, fn) => {
    const timer = setTimeout(fn, ms);
    return () => clearTimeout(timer);
  },
};

export interface LeaderElectionOptions {
  namespace: string;
  name: string;
  identity: string;
  /** @default 15_000 */
  leaseDurationMs?: number;
  /** @default 10_000 */
  renewDeadlineMs?: number;
  /** @default 2_000 */
  retryPeriodMs?: number;
  /** @default realClock */
  clock?: Clock;
}

/** The Lease fields that make up the leader record. */
export interface LeaderRecord {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

interface Lease {
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec: LeaderRecord;
}

/** What a candidate knows of the Lease: the record it last read, and when (its own clock) that record last changed. */
export interface Observation {
  record: LeaderRecord;
  changedAt: number;
}

/** Candidates poll with up to this much extra delay, so they do not hit the Lease in lock-step. */
const JITTER = 1.2;

/**
 * The timing must leave the leader time to step down before anyone may take over
 * (renewDeadline < leaseDuration) and room for more than one renewal attempt per term.
 */
export function leaderTimingProblem(t: { leaseDurationMs: number; renewDeadlineMs: number; retryPeriodMs: number }): string | undefined {
  if (!(t.renewDeadlineMs < t.leaseDurationMs)) return 'the renew deadline must be shorter than the lease duration';
  if (!(t.retryPeriodMs * JITTER < t.renewDeadlineMs)) return `the renew deadline must be longer than ${JITTER} × the retry period`;
  return undefined;
}

export function sameRecord(a: LeaderRecord, b: LeaderRecord): boolean {
  return (
    (a.holderIdentity ?? '') === (b.holderIdentity ?? '') &&
    a.leaseDurationSeconds === b.leaseDurationSeconds &&
    a.acquireTime === b.acquireTime &&
    a.renewTime === b.renewTime &&
    (a.leaseTransitions ?? 0) === (b.leaseTransitions ?? 0)
  );
}

/** The observation after reading `record` at `now`: the change time moves only when the record changed. */
export function observe(previous: Observation | undefined, record: LeaderRecord, now: number): Observation {
  return previous && sameRecord(previous.record, record) ? previous : { record, changedAt: now };
}

/**
 * Whether `identity` may write itself into the Lease at `now`: it is free (released or never
 * held), it is already ours, or the record has not changed for the lease duration it names.
 */
export function mayAcquire(identity: string, observed: Observation, now: number, defaultLeaseDurationMs: number): boolean {
  const holder = observed.record.holderIdentity;
  if (!holder || holder === identity) return true;
  const durationMs = observed.record.leaseDurationSeconds !== undefined ? observed.record.leaseDurationSeconds * 1000 : defaultLeaseDurationMs;
  return now > observed.changedAt + durationMs;
}

/**
 * When the term won by an attempt that started at `attemptStart` ends, or undefined when the
 * answer (at `now`) came too late to count. Measured from the start: the write may have landed
 * any time after it, and the answer may have been slow.
 */
export function termAfterSuccess(attemptStart: number, now: number, renewDeadlineMs: number): number | undefined {
  const end = attemptStart + renewDeadlineMs;
  return now < end ? end : undefined;
}

/** The record `identity` writes at `now` to acquire or renew the Lease. */
export function nextRecord(current: LeaderRecord | undefined, identity: string, leaseDurationSeconds: number, now: number): LeaderRecord {
  const time = microTime(now);
  if (current?.holderIdentity === identity) return { ...current, leaseDurationSeconds, renewTime: time };
  return {
    holderIdentity: identity,
    leaseDurationSeconds,
    acquireTime: time,
    renewTime: time,
    leaseTransitions: current ? (current.leaseTransitions ?? 0) + 1 : 0,
  };
}

/** MicroTime as the API server writes it. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '000Z');
}

export class LeaderElector {
  private readonly clock: Clock;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private observed?: Observation;
  private leading = false;
  private termEnd = 0;
  private cancelTermTimer?: () => void;
  private stopped = false;
  private loop?: Promise<void>;
  private wake?: () => void;

  constructor(
    private readonly client: KubeRest,
    private readonly opts: LeaderElectionOptions,
    private readonly log: Logger,
    private readonly callbacks: { onStartedLeading(): void; onStoppedLeading(): void },
  ) {
    this.clock = opts.clock ?? realClock;
    this.leaseDurationMs = opts.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = opts.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = opts.retryPeriodMs ?? 2_000;
    const problem = leaderTimingProblem({ leaseDurationMs: this.leaseDurationMs, renewDeadlineMs: this.renewDeadlineMs, retryPeriodMs: this.retryPeriodMs });
    if (problem) throw new Error(`leader election: ${problem}`);
  }

  /** True only within a term: never past its end, even before the step-down timer has run. */
  get isLeader(): boolean {
    return this.leading && this.clock.now() < this.termEnd;
  }

  private get path(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${this.opts.namespace}/leases`;
  }

  start(): void {
    this.loop = this.run();
  }

  /** Stop; a leader steps down first, then releases the Lease so a standby takes over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
    this.stepDown('stopping');
    if (this.observed?.record.holderIdentity === this.opts.identity) {
      await this.release().catch((err) => this.log.warn('could not release the leader lease', { err }));
    }
  }

  private startTerm(end: number): void {
    this.termEnd = end;
    this.cancelTermTimer?.();
    this.cancelTermTimer = this.clock.after(end - this.clock.now(), () => this.stepDown('no renewal succeeded within the renew deadline'));
    if (this.leading) return;
    this.leading = true;
    this.log.info('became leader', { lease: `${this.opts.namespace}/${this.opts.name}`, identity: this.opts.identity });
    this.callbacks.onStartedLeading();
  }

  private stepDown(why: string): void {
    this.cancelTermTimer?.();
    this.cancelTermTimer = undefined;
    this.termEnd = 0;
    if (!this.leading) return;
    this.leading = false;
    this.log.info('stopped leading', { lease: `${this.opts.namespace}/${this.opts.name}`, identity: this.opts.identity, why });
    this.callbacks.onStoppedLeading();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const cancel = this.clock.after(ms, resolve);
      this.wake = () => {
        cancel();
        resolve();
      };
    });
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const attemptStart = this.clock.now();
      try {
        if (await this.tryAcquireOrRenew(attemptStart + this.renewDeadlineMs)) {
          const end = termAfterSuccess(attemptStart, this.clock.now(), this.renewDeadlineMs);
          if (end !== undefined && !this.stopped) this.startTerm(end);
        }
      } catch (err) {
        // A failed renewal is retried; the term timer ends leadership if none succeeds in time.
        this.log.warn('leader election attempt failed', { err });
      }
      if (this.stopped) break;
      await this.sleep(this.leading ? this.retryPeriodMs : this.retryPeriodMs * (1 + Math.random() * (JITTER - 1)));
    }
  }

  /** One read and, when allowed, one guarded write; true when the Lease is ours. */
  private async tryAcquireOrRenew(deadline: number): Promise<boolean> {
    const leaseSeconds = Math.ceil(this.leaseDurationMs / 1000);
    let lease: Lease | undefined;
    try {
      lease = await this.leaseRequest<Lease>('GET', `${this.path}/${this.opts.name}`, deadline);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    if (!lease) {
      const spec = nextRecord(undefined, this.opts.identity, leaseSeconds, this.clock.now());
      const body = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: this.opts.name, namespace: this.opts.namespace }, spec };
      return this.write('POST', this.path, body, deadline);
    }
    const now = this.clock.now();
    this.observed = observe(this.observed, lease.spec, now);
    if (!mayAcquire(this.opts.identity, this.observed, now, this.leaseDurationMs)) {
      this.stepDown(`the Lease is held by ${this.observed.record.holderIdentity}`);
      return false;
    }
    const spec = nextRecord(lease.spec, this.opts.identity, leaseSeconds, now);
    // metadata carries the resourceVersion we read: a write by anyone since then is a conflict.
    const body = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: lease.metadata, spec };
    return this.write('PUT', `${this.path}/${this.opts.name}`, body, deadline);
  }

  private async write(method: 'POST' | 'PUT', path: string, body: unknown, deadline: number): Promise<boolean> {
    try {
      const stored = await this.leaseRequest<Lease>(method, path, deadline, body);
      this.observed = observe(this.observed, stored.spec, this.clock.now());
      return true;
    } catch (err) {
      // Someone else wrote first; the next read shows who.
      if (isConflict(err)) return false;
      throw err;
    }
  }

  /**
   * A Lease request that settles by `deadline` on this node's clock, whatever the API server
   * does: the socket times out then, and the race also covers the client's own retries.
   */
  private leaseRequest<T>(method: string, path: string, deadline: number, body?: unknown): Promise<T> {
    const ms = Math.floor(deadline - this.clock.now());
    if (ms <= 0) return Promise.reject(new Error(`${method} ${path}: not sent, the renew deadline has passed`));
    return new Promise<T>((resolve, reject) => {
      const cancel = this.clock.after(ms, () => reject(new Error(`${method} ${path}: no answer within the renew deadline`)));
      this.client.request<T>(method, path, { timeoutMs: ms, body }).then(
        (value) => {
          cancel();
          resolve(value);
        },
        (err: unknown) => {
          cancel();
          reject(err);
        },
      );
    });
  }

  private async release(): Promise<void> {
    const deadline = this.clock.now() + this.renewDeadlineMs;
    const lease = await this.leaseRequest<Lease>('GET', `${this.path}/${this.opts.name}`, deadline);
    if (lease.spec.holderIdentity !== this.opts.identity) return;
    // An empty holder may be taken at once; the resourceVersion keeps a newer holder's record safe.
    const now = microTime(this.clock.now());
    const spec = { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, acquireTime: now, renewTime: now };
    await this.leaseRequest('PUT', `${this.path}/${this.opts.name}`, deadline, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: lease.metadata, spec });
  }
}
