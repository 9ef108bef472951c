// The labels of the operator's `nls_api_key_info` metric: one series per live API key, value 1.
// The gateway labels its token metrics with the caller's client ID only (the header our
// SecurityPolicy forwards after the key check); this series carries what the key records say
// about that client ID, so PromQL can join usage to owners, groups, tiers and models
// (docs/observability.md). Cardinality: one series per live key, nothing per request.
import type { ApiKeyRecord, ModelRef } from './api-keys';

export const API_KEY_INFO_LABELS = ['client_id', 'namespace', 'model', 'model_kind', 'owner', 'groups', 'tier', 'source'] as const;
export type ApiKeyInfoLabels = Record<(typeof API_KEY_INFO_LABELS)[number], string>;
/** The labels of `nls_api_key_expiry_timestamp_seconds`: enough to name the key and whom to tell. */
export const API_KEY_EXPIRY_LABELS = ['client_id', 'namespace', 'model', 'model_kind', 'owner'] as const;
export type ApiKeyExpiryLabels = Record<(typeof API_KEY_EXPIRY_LABELS)[number], string>;

/**
 * One label set per key of the model. `groups` are the groups that granted the key at mint,
 * sorted and comma-joined (Prometheus labels are strings); absent fields are empty labels, which
 * Prometheus drops.
 */
export function apiKeyInfoLabels(model: ModelRef, records: readonly ApiKeyRecord[]): ApiKeyInfoLabels[] {
  return records.map((r) => ({
    client_id: r.clientId,
    namespace: model.namespace,
    model: model.name,
    model_kind: model.kind,
    owner: r.createdBy,
    groups: [...(r.groups ?? [])].sort().join(','),
    tier: r.tier ?? '',
    source: r.source ?? '',
  }));
}

/** Label set and expiry (Unix seconds) of each key whose record has a readable expiry. */
export function apiKeyExpiries(model: ModelRef, records: readonly ApiKeyRecord[]): { labels: ApiKeyExpiryLabels; expiresAt: number }[] {
  return records.flatMap((r) => {
    const ms = r.expiresAt === undefined ? NaN : Date.parse(r.expiresAt);
    if (Number.isNaN(ms)) return [];
    return [{ labels: { client_id: r.clientId, namespace: model.namespace, model: model.name, model_kind: model.kind, owner: r.createdBy }, expiresAt: Math.floor(ms / 1000) }];
  });
}
