// What the portal's usage page and `/api/usage` show: tokens (and cost, where the chart has a price
// table) today and this month (UTC), per key for its owner, and per user, group and model for
// admins. Read from the Prometheus of `portal.prometheusURL` with the query `nls usage` uses
// (src/usage/prometheus-usage.ts). A user's rows are chosen by the client IDs of the keys the
// portal knows are theirs (by subject), so no other user's key can appear in them.
import { costOf, type KeyLabel, missingSource, PrometheusError, readPrices, readUsage, type TokenRow } from '../usage/prometheus-usage';

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
  readonly model: { readonly namespace: string; readonly name: string };
  readonly owner: string;
  readonly groups: readonly string[];
  readonly tier: string;
  readonly today: Amount;
  readonly month: Amount;
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

const BY: readonly KeyLabel[] = ['client_id', 'namespace', 'model', 'owner', 'groups', 'tier'];

/** Usage of the keys with these client IDs (all keys when undefined) today and this month. */
export async function readKeyUsage(prometheus: string, clientIds: readonly string[] | undefined, now: Date): Promise<UsageReport> {
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
  const keys = month.map((r) => ({
    clientId: r.labels.client_id,
    model: { namespace: r.labels.namespace, name: r.labels.model },
    owner: r.labels.owner,
    groups: r.labels.groups ? r.labels.groups.split(',') : [],
    tier: r.labels.tier,
    today: amount(todayById.get(r.labels.client_id)),
    month: amount(r),
  }));
  const currencies = [...new Set([...prices.values()].map((p) => p.currency))];
  return { ...(currencies.length === 1 ? { currency: currencies[0] } : {}), periods, keys };
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
