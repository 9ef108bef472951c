// What the portal's usage page and `/api/usage` show: tokens (and cost, where the chart has a price
// table) today and this month (UTC), per key for its owner, and per user, group and model for
// admins. Read from the Prometheus of `portal.prometheusURL` with the query `nls usage` uses
// (src/usage/prometheus-usage.ts). A user's rows are chosen by the client IDs of the keys the
// portal knows are theirs (by subject), so no other user's key can appear in them. With quotas on,
// each key also shows its share of its tier in the tier's current window (src/usage/quota-window.ts).
import type { QuotaTier } from './config';
import { costOf, type KeyLabel, missingSource, priceCurrency, PrometheusError, readPrices, readUsage, type TokenRow } from '../usage/prometheus-usage';
import { quotaShare, type QuotaShare, quotaTokens, quotaWindowRange } from '../usage/quota-window';
import type { QuotaCostType, QuotaUnit } from '../translate/gateway/quota-settings';
import { tierOfKey } from '../translate/gateway/quotas';

export const USAGE_PERIODS = ['today', 'month'] as const;
export type UsagePeriod = (typeof USAGE_PERIODS)[number];

/** Where a period starts: midnight UTC today, or the first of this month (UTC). */
export function periodStart(period: UsagePeriod, now: Date): Date {
  return period === 'today' ? new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())) : new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

/** The period up to `now` as a PromQL range in whole seconds (at least one). */
export function periodRange(period: UsagePeriod, now: Date): string {
  return `${Math.max(1, Math.ceil((now.getTime() - periodStart(period, now).getTime()) / 1000))}s`;
}

export interface Amount {
  /** Tokens by the extproc's token type (input, output, cached_input, …). */
  readonly tokens: Record<string, number>;
  /** In the price table's currency; absent when the model has no price. */
  readonly cost?: number;
}

export interface KeyUsage {
  readonly clientId: string;
  readonly model: { readonly namespace: string; readonly name: string; readonly kind: string };
  readonly owner: string;
  readonly groups: readonly string[];
  readonly tier: string;
  readonly today: Amount;
  readonly month: Amount;
  /** Use of the key's tier in its current window; absent when quotas are off or the tier's limit is unknown. */
  readonly quota?: QuotaShare;
}

/** The quota tiers as the portal knows them (NLS_PORTAL_QUOTA_TIERS). */
export interface QuotaTiers {
  readonly default: string;
  readonly tiers: readonly QuotaTier[];
  readonly costType?: QuotaCostType;
}

/** A limited tier: one with its token limit and unit known. */
type LimitedTier = QuotaTier & { tokens: number; unit: QuotaUnit };

/**
 * The tier that limits a key, as the operator picks it: the record's tier, or the default for a
 * record without one or naming a tier no longer configured. Undefined when it has no known limit.
 */
export function limitingTier(quotas: QuotaTiers | undefined, keyTier: string): LimitedTier | undefined {
  if (!quotas?.costType) return undefined;
  const tier = tierOfKey(quotas.tiers, quotas.default, keyTier);
  return tier?.tokens !== undefined && tier.unit !== undefined ? (tier as LimitedTier) : undefined;
}

/**
 * Each key's share of its tier: tokens of the charged types since the start of the tier's current
 * window, one query per unit in use (at most five).
 */
async function readQuotaShares(prometheus: string, keys: readonly { clientId: string; tier: string; modelKind: string }[], quotas: QuotaTiers, now: Date): Promise<Map<string, QuotaShare>> {
  const shares = new Map<string, QuotaShare>();
  const costType = quotas.costType;
  if (!costType) return shares;
  const byUnit = new Map<QuotaUnit, { clientId: string; tier: LimitedTier; enforced: boolean }[]>();
  for (const k of keys) {
    const tier = limitingTier(quotas, k.tier);
    if (tier) byUnit.set(tier.unit, [...(byUnit.get(tier.unit) ?? []), { clientId: k.clientId, tier, enforced: k.modelKind !== 'PassthroughModel' }]);
  }
  await Promise.all(
    [...byUnit].map(async ([unit, inUnit]) => {
      const rows = await readUsage(prometheus, { clientIds: inUnit.map((k) => k.clientId) }, quotaWindowRange(unit, now), ['client_id']);
      const used = new Map(rows.map((r) => [r.labels.client_id, quotaTokens(r.tokens, costType)]));
      for (const k of inUnit) shares.set(k.clientId, quotaShare(k.tier, used.get(k.clientId) ?? 0, now, k.enforced));
    }),
  );
  return shares;
}

export interface UsageTotal {
  /** The user, group or `namespace/model`. */
  readonly name: string;
  readonly today: Amount;
  readonly month: Amount;
}

export interface UsageReport {
  /** Currency of every cost; absent when Prometheus has no price series. */
  readonly currency?: string;
  /** Start of each period (ISO 8601, UTC). */
  readonly periods: Record<UsagePeriod, string>;
  readonly keys: readonly KeyUsage[];
}

const BY: readonly KeyLabel[] = ['client_id', 'namespace', 'model', 'model_kind', 'owner', 'groups', 'tier'];

/**
 * Usage of the keys with these client IDs (all keys when undefined) today and this month, and with
 * `quotas`, each key's share of its tier.
 */
export async function readKeyUsage(prometheus: string, clientIds: readonly string[] | undefined, now: Date, quotas?: QuotaTiers): Promise<UsageReport> {
  const periods = Object.fromEntries(USAGE_PERIODS.map((p) => [p, periodStart(p, now).toISOString()])) as Record<UsagePeriod, string>;
  const filter = clientIds ? { clientIds } : {};
  // Nothing to ask for a user without keys (an empty client ID list would match every key).
  const noKeys = clientIds !== undefined && clientIds.length === 0;
  const [today, month, prices] = await Promise.all([
    noKeys ? [] : readUsage(prometheus, filter, periodRange('today', now), BY),
    noKeys ? [] : readUsage(prometheus, filter, periodRange('month', now), BY),
    readPrices(prometheus),
  ]);
  if (month.length === 0 && !noKeys) {
    const missing = await missingSource(prometheus);
    if (missing) throw new PrometheusError(missing);
  }
  const amount = (row: TokenRow | undefined): Amount => {
    if (!row) return { tokens: {} };
    const cost = costOf(row.tokens, prices.get(`${row.labels.namespace}/${row.labels.model}`));
    return { tokens: row.tokens, ...(cost === undefined ? {} : { cost }) };
  };
  const todayById = new Map(today.map((r) => [r.labels.client_id, r]));
  const shares = quotas ? await readQuotaShares(prometheus, month.map((r) => ({ clientId: r.labels.client_id, tier: r.labels.tier, modelKind: r.labels.model_kind })), quotas, now) : new Map<string, QuotaShare>();
  const keys = month.map((r) => ({
    clientId: r.labels.client_id,
    model: { namespace: r.labels.namespace, name: r.labels.model, kind: r.labels.model_kind },
    owner: r.labels.owner,
    groups: r.labels.groups ? r.labels.groups.split(',') : [],
    tier: r.labels.tier,
    today: amount(todayById.get(r.labels.client_id)),
    month: amount(r),
    ...(shares.has(r.labels.client_id) ? { quota: shares.get(r.labels.client_id) } : {}),
  }));
  const currency = priceCurrency(prices);
  return { ...(currency ? { currency } : {}), periods, keys };
}

function add(a: Amount, b: Amount): Amount {
  const tokens = { ...a.tokens };
  for (const [t, n] of Object.entries(b.tokens)) tokens[t] = (tokens[t] ?? 0) + n;
  const cost = a.cost === undefined && b.cost === undefined ? undefined : (a.cost ?? 0) + (b.cost ?? 0);
  return { tokens, ...(cost === undefined ? {} : { cost }) };
}

/**
 * Keys summed per name (`nameOf` may give several: a key granted by two groups counts for both),
 * sorted by name.
 */
export function totalsBy(keys: readonly KeyUsage[], nameOf: (k: KeyUsage) => readonly string[]): UsageTotal[] {
  const totals = new Map<string, UsageTotal>();
  for (const k of keys) {
    for (const name of nameOf(k)) {
      const t = totals.get(name) ?? { name, today: { tokens: {} }, month: { tokens: {} } };
      totals.set(name, { name, today: add(t.today, k.today), month: add(t.month, k.month) });
    }
  }
  return [...totals.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** The admin view: per user, per granting group (keys without one under "(no group)") and per model. */
export function adminTotals(keys: readonly KeyUsage[]) {
  return {
    byUser: totalsBy(keys, (k) => [k.owner]),
    byGroup: totalsBy(keys, (k) => (k.groups.length > 0 ? k.groups : ['(no group)'])),
    byModel: totalsBy(keys, (k) => [`${k.model.namespace}/${k.model.name}`]),
  };
}

/** What the page and the JSON say when the chart value is not set. */
export const NO_PROMETHEUS = 'usage is not available: the portal has no Prometheus to read; set the chart value portal.prometheusURL to the Prometheus that scrapes the gateway proxies and the operator';
