// One informer per watched kind, namespace, label selector and cache shape for all the controllers
// of one leadership term. The two model controllers watch the same generated gateway kinds, the
// same HTTPRoutes and proxies, and each other's models; one list and one watch each halves what
// the API server sends for them (every write to a watched kind is one event per watch) and leaves
// a single cache to answer the apply path's lookups, so no controller reads a copy older than
// another's. Informers of the same kind share only when they cache the same thing: the same
// transform function (not an equal one) and the same managedFields choice.
import { Informer } from '../../kube/informer';
import type { InformerLog } from '../../kube/informer';
import type { KubeObject, KubeRest } from '../../kube/rest';

/** No periodic re-report: the controllers resync their own primary objects (controller.ts). */
const NEVER_MS = 0x7fffffff;

export interface SharedWatch {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly transform?: (obj: KubeObject) => KubeObject;
  readonly stripManagedFields: boolean;
}

export interface SharedInformerOptions {
  /** @see InformerOptions.watchIdleTimeoutMs */
  readonly watchIdleTimeoutMs?: number;
  /** Told of each failed watch, with the kind watched. */
  readonly onWatchError?: (kind: string, err: unknown) => void;
}

export class SharedInformers {
  private readonly informers = new Map<string, Informer>();
  private readonly users = new Map<Informer, number>();
  private readonly transformIds = new Map<(obj: KubeObject) => KubeObject, number>();

  constructor(
    private readonly client: KubeRest,
    private readonly log: InformerLog,
    private readonly opts: SharedInformerOptions = {},
  ) {}

  /** The informer for `watch`: the one already made for the same watch, or a new one. */
  informer(watch: SharedWatch): Informer {
    const key = JSON.stringify([watch.apiVersion, watch.kind, watch.namespace ?? '', watch.labelSelector ?? '', watch.stripManagedFields, this.transformId(watch.transform)]);
    let informer = this.informers.get(key);
    if (!informer) {
      const onWatchError = this.opts.onWatchError;
      informer = new Informer(
        this.client,
        {
          apiVersion: watch.apiVersion,
          kind: watch.kind,
          namespace: watch.namespace,
          labelSelector: watch.labelSelector,
          transform: watch.transform,
          stripManagedFields: watch.stripManagedFields,
          resyncMs: NEVER_MS,
          watchIdleTimeoutMs: this.opts.watchIdleTimeoutMs,
          onWatchError: onWatchError && ((err) => onWatchError(watch.kind, err)),
        },
        this.log,
      );
      this.informers.set(key, informer);
    }
    return informer;
  }

  /** How many distinct watches the controllers asked for. */
  get size(): number {
    return this.informers.size;
  }

  /** Starts the informer for one more user (the first start lists and watches). */
  start(informer: Informer): void {
    this.users.set(informer, (this.users.get(informer) ?? 0) + 1);
    informer.start();
  }

  /** One user is done with the informer; the last one stops it. */
  async stop(informer: Informer): Promise<void> {
    const left = (this.users.get(informer) ?? 1) - 1;
    this.users.set(informer, left);
    if (left <= 0) await informer.stop();
  }

  private transformId(transform: SharedWatch['transform']): number {
    if (!transform) return 0;
    let id = this.transformIds.get(transform);
    if (id === undefined) this.transformIds.set(transform, (id = this.transformIds.size + 1));
    return id;
  }
}
