// The Role naming the Secrets the key portal may get and patch (issue 29, Medium 6): each model's
// key Secret and each portal user's Secret in the release namespace, by name. The chart binds the
// portal's ServiceAccount to it but does not render it (a rendered Role would be reset at every
// `helm upgrade`); the leader keeps it from two watches (key Secrets, user Secrets; names only,
// never data) and writes it only when the set of names changed, so a restart or a resync sends no
// write. It is owned by the chart's RoleBinding, so an uninstall removes it with the binding.
// The API server lets the operator write it because the operator holds get and patch on Secrets
// in this namespace itself (no escalate right is needed).
import { isDeepStrictEqual } from 'node:util';
import { Informer } from '../kube/informer';
import { KubeObject, KubeRest, objectRef } from '../kube/rest';
import { Logger } from '../runtime/log';
import { portalSecretNames, portalSecretsRoleRules, secretNamesOfRole } from '../translate/keys/portal-secrets';
import { LABEL_PORTAL_USER } from '../translate/keys/portal-users';
import { apiKeyObjectsSelector } from './api-key-objects';
import { fieldManager } from './runtime/apply';

const RBAC = 'rbac.authorization.k8s.io/v1';
/** How long a model's pass waits for its key Secret to reach the Role before going on without it. */
const READABLE_WAIT_MS = 10_000;
/** A failed write (or a missing binding) is tried again after this long. */
const RETRY_MS = 5_000;

/** What a model's pass needs: its key Secret in the Role before the model is reported Ready. */
export interface PortalSecretsAccess {
  /** Settles once `secretName` is in the Role (or after a bounded wait, logged). */
  readable(secretName: string): Promise<void>;
}

/** Name, labels and annotations only: what the Role is computed from. */
function metadataOnly(obj: KubeObject): KubeObject {
  const { name, namespace, uid, resourceVersion, labels, annotations } = obj.metadata;
  return { apiVersion: obj.apiVersion, kind: obj.kind, metadata: { name, namespace, uid, resourceVersion, labels, annotations } } as KubeObject;
}

/** The Role as the operator writes it: labelled as the chart's, owned by the chart's binding. */
export function desiredPortalSecretsRole(name: string, namespace: string, secretNames: readonly string[], binding: KubeObject) {
  return {
    apiVersion: RBAC,
    kind: 'Role',
    metadata: {
      name,
      namespace,
      labels: { 'app.kubernetes.io/part-of': 'nebari-llm-serving', 'app.kubernetes.io/component': 'portal', 'app.kubernetes.io/managed-by': 'nebari-llm-serving-operator' },
      ownerReferences: [{ apiVersion: RBAC, kind: 'RoleBinding', name: binding.metadata.name, uid: binding.metadata.uid! }],
    },
    rules: portalSecretsRoleRules(secretNames),
  };
}

export class PortalSecretsRole implements PortalSecretsAccess {
  private readonly informers: Informer[];
  /** The names the stored Role grants, as last read or written; undefined before the first read. */
  private granted?: string[];
  private ownerUid?: string;
  private syncing: Promise<void> = Promise.resolve();
  private pending = false;
  private retryTimer?: NodeJS.Timeout;
  private stopped = false;
  private waiters: Array<{ name: string; done: () => void }> = [];
  private rereadTimer?: NodeJS.Timeout;

  constructor(
    private readonly client: KubeRest,
    private readonly opts: { namespace: string; roleName: string; resyncMs?: number; watchIdleTimeoutMs?: number },
    private readonly log: Logger,
  ) {
    const watch = (labelSelector: string) =>
      new Informer(
        client,
        { apiVersion: 'v1', kind: 'Secret', namespace: opts.namespace, labelSelector, transform: metadataOnly, resyncMs: opts.resyncMs, watchIdleTimeoutMs: opts.watchIdleTimeoutMs },
        log,
      ).on(() => this.schedule());
    this.informers = [watch(apiKeyObjectsSelector), watch(LABEL_PORTAL_USER)];
  }

  start(): void {
    for (const i of this.informers) i.start();
    void Promise.all(this.informers.map((i) => i.listed)).then(() => this.schedule());
    // Reads the stored Role again now and then (two GETs), so one deleted or edited by hand is
    // restored within a resync, not only at the next leader term.
    this.rereadTimer = setInterval(() => {
      this.granted = undefined;
      this.schedule();
    }, this.opts.resyncMs ?? 300_000);
    this.rereadTimer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.rereadTimer);
    await Promise.all(this.informers.map((i) => i.stop()));
    await this.syncing;
    for (const w of this.waiters.splice(0)) w.done();
  }

  /** The names the Role should grant now, from the watches. */
  private desiredNames(): string[] {
    return portalSecretNames(this.informers.flatMap((i) => i.list()));
  }

  readable(secretName: string): Promise<void> {
    if (this.granted?.includes(secretName)) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w.done !== done);
        this.log.warn('the portal\'s Role does not name the key Secret yet; going on without it (the portal cannot mint for this model until it does)', { secret: secretName, role: this.opts.roleName });
        resolve();
      }, READABLE_WAIT_MS);
      timer.unref();
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      this.waiters.push({ name: secretName, done });
      this.schedule();
    });
  }

  /** Coalesces bursts of events into one pass; passes never overlap. */
  private schedule(): void {
    if (this.pending || this.stopped) return;
    this.pending = true;
    this.syncing = this.syncing.then(async () => {
      this.pending = false;
      if (this.stopped || !this.informers.every((i) => i.hasSynced)) return;
      try {
        await this.sync();
      } catch (err) {
        this.log.warn('could not write the key portal\'s Secret Role; retrying', { role: this.opts.roleName, err });
        clearTimeout(this.retryTimer);
        this.retryTimer = setTimeout(() => this.schedule(), RETRY_MS);
        this.retryTimer.unref();
      }
      this.wakeWaiters();
    });
  }

  private async sync(): Promise<void> {
    const { namespace, roleName } = this.opts;
    const names = this.desiredNames();
    if (this.granted === undefined || this.ownerUid === undefined) {
      // First pass of this term: what the server holds decides whether anything must be written.
      const binding = await this.client.get(objectRef(RBAC, 'RoleBinding', roleName, namespace));
      if (!binding) throw new Error(`RoleBinding ${namespace}/${roleName} (rendered by the chart with portal.enabled) is missing; the Role is owned by it`);
      const stored = await this.client.get<KubeObject & { rules?: [] }>(objectRef(RBAC, 'Role', roleName, namespace));
      this.ownerUid = binding.metadata.uid;
      const owned = stored?.metadata.ownerReferences?.some((o) => o.uid === binding.metadata.uid);
      this.granted = stored && owned && isDeepStrictEqual(stored.rules ?? [], portalSecretsRoleRules(secretNamesOfRole(stored))) ? secretNamesOfRole(stored) : undefined;
      if (this.granted && isDeepStrictEqual(this.granted, names)) return;
      await this.write(names, binding);
      return;
    }
    if (isDeepStrictEqual(this.granted, names)) return;
    await this.write(names, { metadata: { name: roleName, uid: this.ownerUid } } as KubeObject);
  }

  private async write(names: string[], binding: KubeObject): Promise<void> {
    await this.client.apply(desiredPortalSecretsRole(this.opts.roleName, this.opts.namespace, names, binding) as unknown as KubeObject, { fieldManager });
    this.granted = names;
    this.log.info('wrote the key portal\'s Secret Role', { role: this.opts.roleName, secrets: names.length });
  }

  private wakeWaiters(): void {
    const granted = new Set(this.granted ?? []);
    const [ready, waiting] = [this.waiters.filter((w) => granted.has(w.name)), this.waiters.filter((w) => !granted.has(w.name))];
    this.waiters = waiting;
    for (const w of ready) w.done();
  }
}
