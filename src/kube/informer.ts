// List + watch one kind, keep a local cache, and tell handlers what changed. The watch resumes
// from the last resourceVersion (bookmarks keep it fresh); `410 Gone` means that version was
// compacted, so the informer lists again and reports the difference. A watch silent for longer
// than `watchIdleTimeoutMs` is taken for a half-open connection and re-opened at once from the
// last resourceVersion; other failures are retried with jittered exponential backoff. Every
// `resyncMs` all cached objects are reported again so a lost event can never leave an object
// unreconciled for long.
import { KindNotServedError, KubeRest, KubeObject, isGone } from './rest';
import { BackoffPolicy, jitteredBackoff } from './backoff';
import { WatchIdleError, watch } from './watch';
import { CacheChange, InformerCache, cacheable } from './informer-cache';

export type InformerEvent = 'add' | 'update' | 'delete' | 'resync';

export interface InformerOptions {
  apiVersion: string;
  kind: string;
  /** Limit to one namespace. @default all namespaces */
  namespace?: string;
  labelSelector?: string;
  /** Full re-report interval. @default 300_000 */
  resyncMs?: number;
  /** Server-side watch timeout before the informer re-opens the watch. @default 240 */
  watchTimeoutSeconds?: number;
  /**
   * A watch that receives nothing for this long is closed and re-opened. The API server offers a
   * bookmark every 60 s (and one 2 s before timeoutSeconds) but skips it while its watch cache has
   * nothing newer than the client: on kube-apiserver 1.35 a quiet kind saw gaps of 120 s. So 150 s
   * (two intervals and some slack) rarely cuts a healthy watch, and a half-open one is replaced
   * within 2.5 minutes instead of never. @default 150_000
   */
  watchIdleTimeoutMs?: number;
  /** Delays between failed attempts. @default 800 ms doubling to 30 s, jittered */
  backoff?: BackoffPolicy;
  /** Drop `managedFields` from cached objects to save memory. @default true */
  stripManagedFields?: boolean;
  /** Reduce what is cached (e.g. drop Secret data, which the cache never needs). */
  transform?: (obj: KubeObject) => KubeObject;
  onRelist?: () => void;
  onWatchError?: (err: unknown) => void;
}

export type InformerHandler = (event: InformerEvent, obj: KubeObject, old?: KubeObject) => void;

/** What the informer logs through: the operator's logger, or the webhook's. */
export interface InformerLog {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export class Informer {
  private readonly cache = new InformerCache();
  private readonly handlers: InformerHandler[] = [];
  private stopped = false;
  private current?: { abort(): void };
  private resyncTimer?: NodeJS.Timeout;
  private wakeSleep?: () => void;
  private synced = false;
  private loop?: Promise<void>;
  private markWatching!: () => void;
  private markListed!: () => void;
  /** Settles once the first list is done and a watch has been accepted by the server. */
  readonly watching = new Promise<void>((resolve) => (this.markWatching = resolve));
  /** Settles once the first list is done, or once the kind is found not served (nothing to list). */
  readonly listed = new Promise<void>((resolve) => (this.markListed = resolve));

  constructor(
    private readonly client: KubeRest,
    private readonly opts: InformerOptions,
    private readonly log: InformerLog,
  ) {}

  on(handler: InformerHandler): this {
    this.handlers.push(handler);
    return this;
  }

  /** True after the first full list. */
  get hasSynced(): boolean {
    return this.synced;
  }

  get(namespace: string | undefined, name: string): KubeObject | undefined {
    return this.cache.get(namespace, name);
  }

  list(): KubeObject[] {
    return this.cache.list();
  }

  start(): void {
    if (this.loop) return;
    this.loop = this.run();
    const resync = this.opts.resyncMs ?? 300_000;
    this.resyncTimer = setInterval(() => {
      for (const obj of this.cache.list()) this.emit({ event: 'resync', obj });
    }, resync);
    this.resyncTimer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.resyncTimer) clearInterval(this.resyncTimer);
    this.current?.abort();
    this.wakeSleep?.();
    await this.loop;
  }

  private emit(change: CacheChange | { event: 'resync'; obj: KubeObject; old?: undefined }): void {
    for (const h of this.handlers) {
      try {
        h(change.event, change.obj, change.old);
      } catch (err) {
        this.log.error('informer handler failed', { kind: this.opts.kind, err });
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      t.unref();
      this.wakeSleep = () => {
        clearTimeout(t);
        resolve();
      };
    });
  }

  private async relist(): Promise<void> {
    const { items, metadata } = await this.client.list(this.opts.apiVersion, this.opts.kind, {
      namespace: this.opts.namespace,
      labelSelector: this.opts.labelSelector,
    });
    for (const change of this.cache.replace(items.map((raw) => cacheable(raw, this.opts)), metadata.resourceVersion)) this.emit(change);
    this.synced = true;
    this.markListed();
    this.opts.onRelist?.();
  }

  private async run(): Promise<void> {
    const backoff = this.opts.backoff ?? { baseDelayMs: 800, maxDelayMs: 30_000 };
    const idleTimeoutMs = this.opts.watchIdleTimeoutMs ?? 150_000;
    // Failures since the last sign of a healthy server (a list, or an event on a watch).
    let failures = 0;
    let needList = true;
    while (!this.stopped) {
      try {
        if (needList) {
          await this.relist();
          needList = false;
          failures = 0;
        }
        const path = await this.client.collectionPath(this.opts.apiVersion, this.opts.kind, this.opts.namespace);
        const timeout = this.opts.watchTimeoutSeconds ?? 240;
        const handle = await watch(
          this.client,
          path,
          {
            resourceVersion: this.cache.resourceVersion,
            allowWatchBookmarks: true,
            labelSelector: this.opts.labelSelector,
            // Spread re-opens so many informers do not reconnect together.
            timeoutSeconds: Math.floor(timeout * (0.8 + Math.random() * 0.4)),
          },
          (event) => {
            failures = 0;
            const change = this.cache.apply(event.type, event.type === 'BOOKMARK' ? event.object : cacheable(event.object, this.opts));
            if (change) this.emit(change);
          },
          {
            idleTimeoutMs,
            onOpen: () => {
              this.log.debug('watch opened', { kind: this.opts.kind, namespace: this.opts.namespace, resourceVersion: this.cache.resourceVersion });
              this.markWatching();
            },
          },
        );
        this.current = handle;
        const opened = Date.now();
        await handle.done;
        // A stream the server closes at once (e.g. while shutting down) must not become a hot loop.
        if (Date.now() - opened < 1000 && !this.stopped) await this.sleep(1000);
      } catch (err) {
        if (this.stopped) break;
        this.opts.onWatchError?.(err);
        if (isGone(err)) {
          this.log.info('watch expired (410 Gone); listing again', { kind: this.opts.kind });
          needList = true;
          continue;
        }
        if (err instanceof WatchIdleError) {
          // Not a failure of the server: re-open at once on a fresh connection. Should the new one
          // be dead too, it fails (backoff) or goes silent (another idle bound) in turn.
          this.log.warn('watch silent for too long; reconnecting from the last resourceVersion', {
            kind: this.opts.kind,
            idleMs: err.idleMs,
            resourceVersion: this.cache.resourceVersion,
          });
          this.client.closeIdleConnections();
          continue;
        }
        failures++;
        const delay = jitteredBackoff(failures, backoff);
        if (err instanceof KindNotServedError) {
          this.markListed();
          this.log.debug('kind not served yet; will retry', { kind: this.opts.kind, delayMs: delay });
          this.client.forgetDiscovery(this.opts.apiVersion);
        } else {
          this.log.warn('watch failed; reconnecting', { kind: this.opts.kind, err, attempt: failures, delayMs: delay });
        }
        // After a connection error the server may have compacted past our version; a relist is
        // cheap compared with missing events.
        if (failures > 3) needList = true;
        await this.sleep(delay);
      }
    }
  }
}
