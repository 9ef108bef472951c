// Lease-based leader election (coordination.k8s.io/v1), the protocol client-go uses: the holder
// renews `renewTime` every `retryPeriod`; another candidate takes over only after
// `leaseDuration` has passed without a renewal. Updates carry the resourceVersion, so two
// candidates can never both win the same round. A leader that cannot renew within
// `renewDeadline` steps down before anyone else may take over.
import { KubeRest, isConflict, isNotFound } from '../../kube/rest';
import { Logger } from './log';

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
}

interface Lease {
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

const microTime = (d: Date) => d.toISOString().replace('Z', '000Z');

export class LeaderElector {
  private leading = false;
  private stopped = false;
  private lastRenew = 0;
  private timer?: NodeJS.Timeout;
  private loop?: Promise<void>;
  private wake?: () => void;

  constructor(
    private readonly client: KubeRest,
    private readonly opts: LeaderElectionOptions,
    private readonly log: Logger,
    private readonly callbacks: { onStartedLeading(): void; onStoppedLeading(): void },
  ) {}

  get isLeader(): boolean {
    return this.leading;
  }

  private get path(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${this.opts.namespace}/leases`;
  }

  start(): void {
    this.loop = this.run();
  }

  /** Stop; a leader releases the Lease so a standby takes over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    if (this.timer) clearTimeout(this.timer);
    await this.loop;
    if (this.leading) {
      await this.release().catch((err) => this.log.warn('could not release the leader lease', { err }));
      this.setLeading(false);
    }
  }

  private setLeading(leading: boolean): void {
    if (leading === this.leading) return;
    this.leading = leading;
    this.log.info(leading ? 'became leader' : 'stopped leading', { lease: `${this.opts.namespace}/${this.opts.name}`, identity: this.opts.identity });
    if (leading) this.callbacks.onStartedLeading();
    else this.callbacks.onStoppedLeading();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.timer = setTimeout(resolve, ms);
      this.wake = () => {
        if (this.timer) clearTimeout(this.timer);
        resolve();
      };
    });
  }

  private async run(): Promise<void> {
    const retry = this.opts.retryPeriodMs ?? 2_000;
    const renewDeadline = this.opts.renewDeadlineMs ?? 10_000;
    while (!this.stopped) {
      try {
        const ok = await this.tryAcquireOrRenew();
        if (ok) {
          this.lastRenew = Date.now();
          this.setLeading(true);
        } else if (this.leading) {
          this.setLeading(false);
        }
      } catch (err) {
        this.log.warn('leader election round failed', { err });
      }
      if (this.leading && Date.now() - this.lastRenew > renewDeadline) this.setLeading(false);
      if (this.stopped) break;
      // Jitter keeps candidates from hitting the Lease in lock-step.
      await this.sleep(this.leading ? retry : retry * (1 + Math.random() * 0.2));
    }
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = new Date();
    const leaseSeconds = Math.ceil((this.opts.leaseDurationMs ?? 15_000) / 1000);
    let lease: Lease | undefined;
    try {
      lease = await this.client.request<Lease>('GET', `${this.path}/${this.opts.name}`, { timeoutMs: 5000 });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    if (!lease) {
      try {
        await this.client.request('POST', this.path, {
          timeoutMs: 5000,
          body: {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name: this.opts.name, namespace: this.opts.namespace },
            spec: { holderIdentity: this.opts.identity, leaseDurationSeconds: leaseSeconds, acquireTime: microTime(now), renewTime: microTime(now), leaseTransitions: 0 },
          },
        });
        return true;
      } catch (err) {
        if (isConflict(err)) return false;
        throw err;
      }
    }
    const holder = lease.spec.holderIdentity;
    const renewed = lease.spec.renewTime ? Date.parse(lease.spec.renewTime) : 0;
    const duration = (lease.spec.leaseDurationSeconds ?? leaseSeconds) * 1000;
    const mine = holder === this.opts.identity;
    // Expiry is judged by our own clock against the recorded renew time, as client-go does
    // (it uses observation time; renewTime is close enough with loopback clocks and is restart-safe).
    if (!mine && holder && now.getTime() < renewed + duration) return false;
    const spec = {
      ...lease.spec,
      holderIdentity: this.opts.identity,
      leaseDurationSeconds: leaseSeconds,
      renewTime: microTime(now),
      ...(mine ? {} : { acquireTime: microTime(now), leaseTransitions: (lease.spec.leaseTransitions ?? 0) + 1 }),
    };
    try {
      await this.client.request('PUT', `${this.path}/${this.opts.name}`, {
        timeoutMs: 5000,
        body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: lease.metadata, spec },
      });
      return true;
    } catch (err) {
      if (isConflict(err)) return false;
      throw err;
    }
  }

  private async release(): Promise<void> {
    const lease = await this.client.request<Lease>('GET', `${this.path}/${this.opts.name}`, { timeoutMs: 3000 });
    if (lease.spec.holderIdentity !== this.opts.identity) return;
    await this.client.request('PUT', `${this.path}/${this.opts.name}`, {
      timeoutMs: 3000,
      body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: lease.metadata, spec: { ...lease.spec, holderIdentity: '', renewTime: microTime(new Date(0)), leaseDurationSeconds: 1 } },
    });
  }
}
