// One controller per kind: an informer on the primary kind plus informers on related kinds
// (each mapping an event to the primary keys it affects; shared with the other controllers of the
// term where they watch the same thing, ./shared-informers), a work queue, and N workers that call
// the kind's reconcile function. Errors are retried with backoff; a reconcile may also ask to be
// called again after a delay (e.g. while waiting for pods or for a CRD to be installed).
import type { Informer, InformerEvent } from '../../kube/informer';
import { KubeRest, KubeObject } from '../../kube/rest';
import { WatchIdleError } from '../../kube/watch';
import { objectKey } from './object-key';
import { registerCachedKind, type CachedKind } from './cached-lookups';
import { forgetApplied, seenByWatch } from './apply';
import { Logger } from '../../runtime/log';
import { OperatorMetrics } from './metrics';
import { WorkQueue } from './queue';
import { SharedInformers } from './shared-informers';

export interface ReconcileResult {
  /** Reconcile again after this many milliseconds even without an event. */
  requeueAfterMs?: number;
}

export interface ReconcileRequest {
  namespace: string;
  name: string;
  /**
   * The primary informer's copy when the pass starts (without managedFields), so a reconcile
   * need not GET what the informer already holds; undefined when the cache has no such object.
   */
  cached?: KubeObject;
}

export type Reconciler = (req: ReconcileRequest, log: Logger) => Promise<ReconcileResult | void>;

export interface SecondaryWatch {
  apiVersion: string;
  kind: string;
  labelSelector?: string;
  /**
   * Watch only this namespace (e.g. Secrets, which the operator may read only in its own
   * namespace: a cluster-wide watch would be denied). @default the controller's namespace
   */
  namespace?: string;
  /** Reduce what the informer caches. */
  transform?: (obj: KubeObject) => KubeObject;
  /** Keep `managedFields` (as the transform leaves them) instead of dropping them. @default false */
  keepManagedFields?: boolean;
  /** Primary keys (`namespace/name`) affected by this change (`old` is the cached object on update). */
  map(obj: KubeObject, event: InformerEvent, old?: KubeObject): string[];
  /**
   * Answer the apply path's lookups of this kind from this cache (only without a label selector,
   * which would make a miss mean nothing). @default true
   */
  lookups?: boolean;
  /** Receives this watch's cache, for reconcilers that read it (a label-selected cache is not registered for lookups). */
  onCache?(cache: CachedKind & { list(): KubeObject[] }): void;
}

export interface ControllerOptions {
  apiVersion: string;
  kind: string;
  reconcile: Reconciler;
  secondary?: SecondaryWatch[];
  /** @default 4 */
  workers?: number;
  /** @default 300_000 */
  resyncMs?: number;
  namespace?: string;
  /** Already-converged objects seen at start-up or resync are spread over this window. @default 5_000 */
  startupSpreadMs?: number;
  /** Re-open a watch after this long without a byte (a half-open connection). @default 150_000 */
  watchIdleTimeoutMs?: number;
  /**
   * Workers wait for every watch's first list, at most this long (a watch the server keeps
   * refusing must not hold the kind back for good). @default 30_000
   */
  cacheSyncTimeoutMs?: number;
  /** The term's informers, shared with its other controllers. @default informers of this controller's own */
  informers?: SharedInformers;
}

/** The `reason` label of nls_watch_restarts_total. */
export function watchRestartReason(err: unknown): 'gone' | 'idle' | 'error' {
  if (err instanceof WatchIdleError) return 'idle';
  return (err as { code?: number })?.code === 410 ? 'gone' : 'error';
}

/** Converged: the last pass saw this generation, it is Ready/Running, and nothing is pending. */
export function isConverged(obj: KubeObject): boolean {
  const status = obj.status as { observedGeneration?: number; phase?: string } | undefined;
  return (
    !obj.metadata.deletionTimestamp &&
    (obj.metadata.finalizers ?? []).length > 0 &&
    status?.observedGeneration === obj.metadata.generation &&
    (status?.phase === 'Ready' || status?.phase === 'Running' || status?.phase === 'Completed')
  );
}

function sameStrings(a: string[] | undefined, b: string[] | undefined): boolean {
  return JSON.stringify(a ?? []) === JSON.stringify(b ?? []);
}

/**
 * When to reconcile after a primary event: 0 = now, a delay, or undefined = not at all.
 * Objects that need work go first; converged ones seen at start-up (or on resync) are spread out,
 * so a restart after a crash spends its first seconds on what actually changed. Updates that
 * touch only status (our own writes) are ignored.
 */
export function primaryEventDelay(event: InformerEvent, obj: KubeObject, old: KubeObject | undefined, spreadMs: number): number | undefined {
  if (event === 'delete') return 0;
  if (event === 'update' && old) {
    const m = obj.metadata;
    const o = old.metadata;
    const changed =
      m.generation !== o.generation ||
      m.deletionTimestamp !== o.deletionTimestamp ||
      // Our own finalizer edits are not news; a deleted object is caught by deletionTimestamp.
      (m.deletionTimestamp !== undefined && !sameStrings(m.finalizers, o.finalizers)) ||
      JSON.stringify(m.labels ?? {}) !== JSON.stringify(o.labels ?? {}) ||
      JSON.stringify(m.annotations ?? {}) !== JSON.stringify(o.annotations ?? {});
    return changed ? 0 : undefined;
  }
  return isConverged(obj) ? Math.floor(Math.random() * spreadMs) + 1 : 0;
}

export class Controller {
  readonly queue: WorkQueue;
  private readonly informers: Informer[] = [];
  private readonly primary: Informer;
  private readonly shared: SharedInformers;
  private workers: Promise<void>[] = [];
  private running = false;
  private resyncTimer?: NodeJS.Timeout;
  private stopWaitingForCaches?: () => void;

  constructor(
    client: KubeRest,
    private readonly opts: ControllerOptions,
    private readonly metrics: OperatorMetrics,
    private readonly log: Logger,
  ) {
    const kindLabel = { kind: opts.kind };
    this.queue = new WorkQueue({ onDepth: (d) => metrics.queueDepth.set(kindLabel, d) });
    metrics.queueDepth.set(kindLabel, 0);
    this.shared =
      opts.informers ?? new SharedInformers(client, log, { watchIdleTimeoutMs: opts.watchIdleTimeoutMs, onWatchError: (kind, err) => metrics.watchRestarts.inc({ kind, reason: watchRestartReason(err) }) });
    this.primary = this.shared.informer({ apiVersion: opts.apiVersion, kind: opts.kind, namespace: opts.namespace, stripManagedFields: true });
    this.primary.on((event: InformerEvent, obj, old) => this.onPrimary(event, obj, old));
    this.informers.push(this.primary);
    for (const s of opts.secondary ?? []) {
      const inf = this.shared.informer({
        apiVersion: s.apiVersion,
        kind: s.kind,
        namespace: s.namespace ?? opts.namespace,
        labelSelector: s.labelSelector,
        transform: s.transform,
        stripManagedFields: !s.keepManagedFields,
      });
      inf.on((event, obj, old) => {
        // The apply skip trusts a cache's resourceVersion, and a watch with another cache shape
        // may not have heard of the deletion yet: the repair must reach the server.
        if (event === 'delete') forgetApplied(client, { apiVersion: s.apiVersion, kind: s.kind, namespace: obj.metadata.namespace, name: obj.metadata.name });
        else seenByWatch(client, s, obj);
        for (const key of s.map(obj, event, old)) this.queue.add(key);
      });
      // A whole kind in a namespace: its cache answers lookups (a miss means absent).
      if (!s.labelSelector && s.lookups !== false) registerCachedKind(client, s.apiVersion, s.kind, s.namespace ?? opts.namespace, inf);
      s.onCache?.(inf);
      this.informers.push(inf);
    }
  }

  private onPrimary(event: InformerEvent, obj: KubeObject, old?: KubeObject): void {
    const key = objectKey(obj.metadata.namespace, obj.metadata.name);
    const delay = primaryEventDelay(event, obj, old, this.opts.startupSpreadMs ?? 5_000);
    if (delay === undefined) return;
    if (delay === 0) this.queue.add(key);
    else this.queue.addAfter(key, delay);
  }

  get kind(): string {
    return this.opts.kind;
  }

  /** The primary informer's cache (read-only use). */
  cached(namespace: string, name: string): KubeObject | undefined {
    return this.primary.get(namespace, name);
  }

  /** Every object of the primary kind in the cache (read-only use: nls_model_ready reads it at scrape time). */
  cachedObjects(): KubeObject[] {
    return this.primary.list();
  }

  get hasSynced(): boolean {
    return this.primary.hasSynced;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    for (const inf of this.informers) this.shared.start(inf);
    // Every primary object again, now and then, so a lost event never leaves one unreconciled for long.
    this.resyncTimer = setInterval(() => {
      for (const obj of this.primary.list()) this.onPrimary('resync', obj);
    }, this.opts.resyncMs ?? 300_000);
    this.resyncTimer.unref();
    void Promise.all(this.informers.map((i) => i.watching)).then(() => {
      if (this.running) this.log.info('informers listed and watching', { kind: this.opts.kind, informers: this.informers.length });
    });
    const synced = this.cachesSynced();
    const n = this.opts.workers ?? 4;
    for (let i = 0; i < n; i++) this.workers.push(synced.then(() => this.work()));
  }

  // Workers start once every watch has listed: a generated object deleted before its watch listed
  // would otherwise cause no event, and its repair would wait for the resync.
  private cachesSynced(): Promise<void> {
    const timeoutMs = this.opts.cacheSyncTimeoutMs ?? 30_000;
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        const waiting = this.informers.filter((i) => !i.hasSynced).length;
        this.log.warn('starting workers before every watch has listed', { kind: this.opts.kind, waiting, timeoutMs });
        resolve();
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      this.stopWaitingForCaches = done;
      void Promise.all(this.informers.map((i) => i.listed)).then(done);
    });
  }

  /** Stop taking new work and wait for in-flight reconciles to finish. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.resyncTimer) clearInterval(this.resyncTimer);
    this.queue.shutDown();
    this.stopWaitingForCaches?.();
    await Promise.all(this.informers.map((i) => this.shared.stop(i)));
    await Promise.all(this.workers);
    this.workers = [];
  }

  private async work(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      const i = key.indexOf('/');
      const req: ReconcileRequest = { namespace: key.slice(0, i), name: key.slice(i + 1) };
      req.cached = this.primary.get(req.namespace, req.name);
      const started = process.hrtime.bigint();
      const log = this.log.child({ kind: this.opts.kind, object: key });
      try {
        const result = await this.opts.reconcile(req, log);
        this.queue.forget(key);
        this.metrics.reconcileTotal.inc({ kind: this.opts.kind, result: result?.requeueAfterMs ? 'requeue' : 'success' });
        if (result?.requeueAfterMs) this.queue.addAfter(key, result.requeueAfterMs);
      } catch (err) {
        this.metrics.reconcileTotal.inc({ kind: this.opts.kind, result: 'error' });
        this.metrics.reconcileErrors.inc({ kind: this.opts.kind });
        this.metrics.queueRetries.inc({ kind: this.opts.kind });
        const delay = this.queue.addRateLimited(key);
        const conflict = (err as { code?: number }).code === 409;
        (conflict ? log.debug : log.warn)('reconcile failed; retrying', { err, retryInMs: delay });
      } finally {
        this.metrics.reconcileDuration.observe({ kind: this.opts.kind }, Number(process.hrtime.bigint() - started) / 1e9);
        this.queue.done(key);
      }
    }
  }
}

