// Keeps `nls_api_key_info` (and `nls_api_key_expiry_timestamp_seconds` for keys that expire) equal to the live keys of the models this leader reconciles: each
// publication replaces the model's series with those of its keys after revocation, the finalizer
// drops them, and losing the Lease drops all (the new leader exports them after its first passes).
import type { Gauge } from 'prom-client';
import { type ModelRef, parseApiKeyRecord } from '../translate/keys/api-keys';
import { apiKeyExpiries, type ApiKeyExpiryLabels, apiKeyInfoLabels, type ApiKeyInfoLabels } from '../translate/keys/key-info';

type InfoGauge = Gauge<keyof ApiKeyInfoLabels>;
type ExpiryGauge = Gauge<keyof ApiKeyExpiryLabels>;

interface ModelSeries {
  readonly info: ApiKeyInfoLabels[];
  readonly expiries: { labels: ApiKeyExpiryLabels; expiresAt: number }[];
}

export class ApiKeyInfo {
  /** The label sets exported per model, so a model's update removes exactly its old series. */
  private readonly byModel = new Map<string, ModelSeries>();

  constructor(
    private readonly gauge: InfoGauge,
    private readonly expiryGauge?: ExpiryGauge,
  ) {}

  /** The model's keys now: the client IDs of its key Secret, less the ones just revoked, described by its metadata ConfigMap. */
  set(model: ModelRef, clientIds: readonly string[], metadata: Record<string, string> | undefined, revoked: ReadonlySet<string>): void {
    const records = clientIds.filter((id) => !revoked.has(id)).map((id) => parseApiKeyRecord(id, metadata?.[id]));
    this.replace(model, { info: apiKeyInfoLabels(model, records), expiries: apiKeyExpiries(model, records) });
  }

  delete(model: ModelRef): void {
    this.replace(model, { info: [], expiries: [] });
  }

  clear(): void {
    this.gauge.reset();
    this.expiryGauge?.reset();
    this.byModel.clear();
  }

  private replace(model: ModelRef, next: ModelSeries): void {
    const key = `${model.kind}/${model.namespace}/${model.name}`;
    const old = this.byModel.get(key);
    for (const labels of old?.info ?? []) this.gauge.remove(labels);
    for (const e of old?.expiries ?? []) this.expiryGauge?.remove(e.labels);
    for (const labels of next.info) this.gauge.set(labels, 1);
    for (const e of next.expiries) this.expiryGauge?.set(e.labels, e.expiresAt);
    if (next.info.length) this.byModel.set(key, next);
    else this.byModel.delete(key);
  }
}
