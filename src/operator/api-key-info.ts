// Keeps `nls_api_key_info` equal to the live keys of the models this leader reconciles: each
// publication replaces the model's series with those of its keys after revocation, the finalizer
// drops them, and losing the Lease drops all (the new leader exports them after its first passes).
import type { Gauge } from 'prom-client';
import { type ModelRef, parseApiKeyRecord } from '../translate/keys/api-keys';
import { apiKeyInfoLabels, type ApiKeyInfoLabels } from '../translate/keys/key-info';

type InfoGauge = Gauge<keyof ApiKeyInfoLabels>;

export class ApiKeyInfo {
  /** The label sets exported per model, so a model's update removes exactly its old series. */
  private readonly byModel = new Map<string, ApiKeyInfoLabels[]>();

  constructor(private readonly gauge: InfoGauge) {}

  /** The model's keys now: the client IDs of its key Secret, less the ones just revoked, described by its metadata ConfigMap. */
  set(model: ModelRef, clientIds: readonly string[], metadata: Record<string, string> | undefined, revoked: ReadonlySet<string>): void {
    const records = clientIds.filter((id) => !revoked.has(id)).map((id) => parseApiKeyRecord(id, metadata?.[id]));
    this.replace(model, apiKeyInfoLabels(model, records));
  }

  delete(model: ModelRef): void {
    this.replace(model, []);
  }

  clear(): void {
    this.gauge.reset();
    this.byModel.clear();
  }

  private replace(model: ModelRef, next: ApiKeyInfoLabels[]): void {
    const key = `${model.kind}/${model.namespace}/${model.name}`;
    for (const labels of this.byModel.get(key) ?? []) this.gauge.remove(labels);
    for (const labels of next) this.gauge.set(labels, 1);
    if (next.length) this.byModel.set(key, next);
    else this.byModel.delete(key);
  }
}
