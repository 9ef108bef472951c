// List + watch one kind, keep a local cache, and tell handlers what changed. The watch resumes
// from the last resourceVersion (bookmarks keep it fresh); `410 Gone` means that version was
// compacted, so the informer lists again and reports the difference. Every `resyncMs` all cached
// objects are reported again so a lost event can never leave an object unreconciled for long.
import { KindNotServedError, KubeRest, KubeObject, isGone } from '../../kube/rest';
import { watch } from '../../kube/watch';
import { objectKey } from './object-key';
import { Logger } from './log';

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
  /** Drop `managedFields` from cached objects to save memory. @default true */
  stripManagedFields?: boolean;
  /** Reduce what is cached (e.g. drop Secret data, which the cache never needs). */
  transform?: (obj: KubeObject) => KubeObject;
  onRelist?: () => void;
  onWatchError?: (err: unknown) => void;
}

export type InformerHandler = (event: InformerEvent, obj: KubeObject, old?: KubeObject) => void;

export class Informer {
  private readonly cache = new Map<string, KubeObject>();
  private readonly handlers: InformerHandler[] = [];
  private resourceVersion = '';
  private stopped = false;
  private current?: { abort(): void };
  private resyncTimer?: NodeJS.Timeout;
  private wakeSleep?: () => void;
  private synced = false;
  private loop?: Promise<void>;

  constructor(
    private readonly client: KubeRest,
    private readonly opts: InformerOptions,
    private readonly log: Logger,
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
    return this.cache.get(objectKey(namespace, name));
  }

  list(): KubeObject[] {
    return [...this.cache.values()];
  }

  start(): void {
    if (this.loop) return;
    this.loop = this.run();
    const resync = this.opts.resyncMs ?? 300_000;
    this.resyncTimer = setInterval(() => {
      for (const obj of this.cache.values()) this.emit('resync', obj);
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

  private emit(event: InformerEvent, obj: KubeObject, old?: KubeObject): void {
    for (const h of this.handlers) {
      try {
        h(event, obj, old);
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

  private prepare(obj: KubeObject): KubeObject {
    const out = { ...(this.opts.transform ? this.opts.transform(obj) : obj), apiVersion: this.opts.apiVersion, kind: this.opts.kind };
    if (this.opts.stripManagedFields !== false && out.metadata?.managedFields) {
      out.metadata = { ...out.metadata };
      delete out.metadata.managedFields;
    }
    return out;
  }

  private async relist(): Promise<void> {
    const { items, metadata } = await this.client.list(this.opts.apiVersion, this.opts.kind, {
      namespace: this.opts.namespace,
      labelSelector: this.opts.labelSelector,
    });
    const seen = new Set<string>();
    for (const raw of items) {
      const obj = this.prepare(raw);
      const key = objectKey(obj.metadata.namespace, obj.metadata.name);
      seen.add(key);
      const old = this.cache.get(key);
      this.cache.set(key, obj);
      if (!old) this.emit('add', obj);
      else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion) this.emit('update', obj, old);
    }
    for (const [key, old] of [...this.cache]) {
      if (!seen.has(key)) {
        this.cache.delete(key);
        this.emit('delete', old);
      }
    }
    this.resourceVersion = metadata.resourceVersion ?? '';
    this.synced = true;
    this.opts.onRelist?.();
  }

  private async run(): Promise<void> {
    let failures = 0;
    let needList = true;
    while (!this.stopped) {
      try {
        if (needList) {
          await this.relist();
          needList = false;
        }
        const path = await this.client.collectionPath(this.opts.apiVersion, this.opts.kind, this.opts.namespace);
        const timeout = this.opts.watchTimeoutSeconds ?? 240;
        const handle = await watch(
          this.client,
          path,
          {
            resourceVersion: this.resourceVersion,
            allowWatchBookmarks: true,
            labelSelector: this.opts.labelSelector,
            // Spread re-opens so many informers do not reconnect together.
            timeoutSeconds: Math.floor(timeout * (0.8 + Math.random() * 0.4)),
          },
          (event) => {
            failures = 0;
            const obj = this.prepare(event.object);
            if (obj.metadata?.resourceVersion) this.resourceVersion = obj.metadata.resourceVersion;
            if (event.type === 'BOOKMARK') return;
            const key = objectKey(obj.metadata.namespace, obj.metadata.name);
            const old = this.cache.get(key);
            if (event.type === 'DELETED') {
              this.cache.delete(key);
              this.emit('delete', obj);
            } else {
              this.cache.set(key, obj);
              this.emit(old ? 'update' : 'add', obj, old);
            }
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
        failures++;
        const delay = Math.min(30_000, 250 * 2 ** Math.min(failures, 7));
        if (err instanceof KindNotServedError) {
          this.log.debug('kind not served yet; will retry', { kind: this.opts.kind, delayMs: delay });
          this.client.forgetDiscovery(this.opts.apiVersion);
        } else {
          this.log.warn('watch failed; reconnecting', { kind: this.opts.kind, err, delayMs: delay });
        }
        // After a connection error the server may have compacted past our version; a relist is
        // cheap compared with missing events.
        if (failures > 3) needList = true;
        await this.sleep(delay);
      }
    }
  }
}
