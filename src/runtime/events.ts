// Kubernetes Events (core/v1) about our objects. Repeats of the same reason and message are
// folded into one Event with a count, as kubectl users expect. Messages pass through the log
// redactor first, so a secret can never end up in an Event.
import { randomBytes } from 'node:crypto';
import { KubeRest, KubeObject } from '../kube/rest';
import { Logger, redactString } from './log';

export type EventType = 'Normal' | 'Warning';

export class EventRecorder {
  private readonly recent = new Map<string, { name: string; count: number; at: number }>();

  constructor(
    private readonly client: KubeRest,
    private readonly component: string,
    private readonly instance: string,
    private readonly log: Logger,
  ) {}

  /** Record an Event; failures are logged, never thrown (events are best effort). */
  async record(obj: KubeObject, type: EventType, reason: string, message: string): Promise<void> {
    const namespace = obj.metadata.namespace ?? 'default';
    const safe = redactString(message).slice(0, 1024);
    const key = `${obj.metadata.uid}|${type}|${reason}|${safe}`;
    const now = new Date();
    const prior = this.recent.get(key);
    try {
      if (prior && now.getTime() - prior.at < 600_000) {
        prior.count++;
        prior.at = now.getTime();
        await this.client.request('PATCH', `/api/v1/namespaces/${namespace}/events/${prior.name}`, {
          body: { count: prior.count, lastTimestamp: now.toISOString() },
          contentType: 'application/merge-patch+json',
        });
        return;
      }
      const name = `${obj.metadata.name}.${randomBytes(8).toString('hex')}`;
      await this.client.request('POST', `/api/v1/namespaces/${namespace}/events`, {
        body: {
          apiVersion: 'v1',
          kind: 'Event',
          metadata: { name, namespace },
          involvedObject: { apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name, namespace, uid: obj.metadata.uid, resourceVersion: obj.metadata.resourceVersion },
          type,
          reason,
          message: safe,
          count: 1,
          firstTimestamp: now.toISOString(),
          lastTimestamp: now.toISOString(),
          source: { component: this.component, host: this.instance },
          reportingComponent: this.component,
          reportingInstance: this.instance,
        },
      });
      this.recent.set(key, { name, count: 1, at: now.getTime() });
      if (this.recent.size > 5000) this.recent.delete(this.recent.keys().next().value as string);
    } catch (err) {
      this.recent.delete(key);
      this.log.debug('could not record event', { reason, err });
    }
  }
}
