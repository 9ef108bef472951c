// Usage per API key from Prometheus, shared by `nls usage` (src/cli/usage/usage.ts) and the key
// portal's usage page and `/api/usage` (src/portal/usage.ts): the one PromQL join of the gateway's
// token counts with the operator's key records, the HTTP call, and the prices the chart's spend
// rules record (docs/observability.md). The extproc counts the tokens of every answer by the client
// ID of the key that asked (`gen_ai_client_token_usage_sum{client_id}`); `nls_api_key_info` says
// whose key each client ID is and for which model.

/** The extproc's token counter (the `_sum` of OpenTelemetry's gen_ai.client.token.usage histogram). */
export const TOKEN_METRIC = 'gen_ai_client_token_usage_sum';
export const KEY_INFO_METRIC = 'nls_api_key_info';
/** The price series of the chart's spend rules (constructs/spend-rules.ts). */
export const PRICE_METRIC = 'nls:token_price_per_million';

/** Labels of `nls_api_key_info` a usage query may group by. */
export type KeyLabel = 'client_id' | 'namespace' | 'model' | 'model_kind' | 'owner' | 'groups' | 'tier';

export interface UsageFilter {
  readonly namespace?: string;
  readonly model?: string;
  /** Keys owned by this user name (the key record's `createdBy`). */
  readonly user?: string;
  /** Only these client IDs. */
  readonly clientIds?: readonly string[];
}

/** A PromQL label value in double quotes. */
function quoted(value: string): string {
  return JSON.stringify(value);
}

/** `a|b` matching exactly these values in a PromQL regex matcher. */
function exactAlternatives(values: readonly string[]): string {
  return values.map((v) => v.replace(/[\\.^$|?*+()[\]{}]/g, '\\$&')).join('|');
}

/**
 * Tokens counted in the period (a PromQL duration such as `30d` or `3600s`), per `by` labels of the
 * key records and token type. A counter that already existed when the period began contributes its
 * increase; one that started inside the period (a new key, a proxy pod started since) contributes
 * its whole value, which `increase` alone would miss for the first answers. Keys revoked or expired
 * during the period still count: their records are taken over the period, not now.
 */
export function usageQuery(filter: UsageFilter, since: string, by: readonly KeyLabel[]): string {
  const filters = [
    ...(filter.model ? [`model=${quoted(filter.model)}`] : []),
    ...(filter.user ? [`owner=${quoted(filter.user)}`] : []),
    ...(filter.clientIds ? [`client_id=~${quoted(exactAlternatives(filter.clientIds))}`] : []),
  ];
  const records = (matchers: string[]) => `max_over_time(${KEY_INFO_METRIC}{${[...filters, ...matchers].join(', ')}}[${since}])`;
  // The model's namespace is the record's own `namespace` label, which a scrape that does not honor
  // labels (the Prometheus Operator's default) renames `exported_namespace`, setting `namespace` to
  // the operator's: take the exported one where it exists.
  const inNamespace = filter.namespace
    ? `(${records([`exported_namespace=""`, `namespace=${quoted(filter.namespace)}`])} or ${records([`exported_namespace=${quoted(filter.namespace)}`])})`
    : records([]);
  const joined = by.filter((l) => l !== 'client_id');
  const tokens = `((increase(${TOKEN_METRIC}[${since}]) and ${TOKEN_METRIC} offset ${since}) or ${TOKEN_METRIC})`;
  const keys = `max by (${['client_id', ...joined].join(', ')}) (label_replace(${inNamespace}, "namespace", "$1", "exported_namespace", "(.+)"))`;
  return `sum by (${[...by, 'gen_ai_token_type'].join(', ')}) (${tokens} * on (client_id) group_left (${joined.join(', ')}) ${keys})`;
}

export interface PromSample {
  metric: Record<string, string>;
  value: [number, string];
}

/** An instant query against Prometheus's HTTP API; errors carry Prometheus's own message. */
export async function instantQuery(prometheus: string, promql: string): Promise<PromSample[]> {
  const url = `${prometheus}/api/v1/query?${new URLSearchParams({ query: promql })}`;
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  } catch (err) {
    throw new PrometheusError(`cannot reach Prometheus at ${prometheus}: ${(err as Error).message}`);
  }
  const text = await response.text();
  let body: { status?: string; error?: string; data?: { resultType?: string; result?: PromSample[] } };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    throw new PrometheusError(`${prometheus} answered ${response.status} with something other than Prometheus's JSON`);
  }
  if (body.status !== 'success') throw new PrometheusError(`Prometheus refused the query (${response.status}): ${body.error ?? text}`);
  return body.data?.result ?? [];
}

/** Prometheus could not be read, or lacks a source of the usage figures. */
export class PrometheusError extends Error {}

export interface TokenRow {
  /** The `by` labels of the query. */
  labels: Record<string, string>;
  /** Tokens by the extproc's `gen_ai_token_type` (input, output, cached_input, …). */
  tokens: Record<string, number>;
}

/** One row per distinct `by` labels, with its tokens per type, sorted by the labels in `by` order. */
export function tokenRows(samples: readonly PromSample[], by: readonly KeyLabel[]): TokenRow[] {
  const rows = new Map<string, TokenRow>();
  for (const s of samples) {
    const labels = Object.fromEntries(by.map((l) => [l, s.metric[l] ?? '']));
    const key = JSON.stringify(by.map((l) => labels[l]));
    const row = rows.get(key) ?? { labels, tokens: {} };
    const type = s.metric.gen_ai_token_type ?? 'unknown';
    row.tokens[type] = (row.tokens[type] ?? 0) + Math.round(Number(s.value[1]));
    rows.set(key, row);
  }
  const order = (a: TokenRow, b: TokenRow) => by.reduce((c, l) => c || a.labels[l].localeCompare(b.labels[l]), 0);
  return [...rows.values()].sort(order);
}

/** Tokens per row of `by` labels counted in the period. */
export async function readUsage(prometheus: string, filter: UsageFilter, since: string, by: readonly KeyLabel[]): Promise<TokenRow[]> {
  return tokenRows(await instantQuery(prometheus, usageQuery(filter, since, by)), by);
}

/**
 * Why usage would be empty for a reason other than "nobody used a key": a source Prometheus does
 * not have. Said instead of showing zeros.
 */
export async function missingSource(prometheus: string): Promise<string | undefined> {
  if ((await instantQuery(prometheus, `count(${KEY_INFO_METRIC})`)).length === 0) {
    return `Prometheus has no ${KEY_INFO_METRIC} series: it does not scrape the operator (set the chart value serviceMonitor.enabled, or scrape the operator's metrics Service)`;
  }
  if ((await instantQuery(prometheus, `count(${TOKEN_METRIC})`)).length === 0) {
    return `Prometheus has no ${TOKEN_METRIC} series: it does not scrape the AI Gateway extproc of the proxies (port aigw-admin, path /metrics), or no answer has passed the gateway yet`;
  }
  if ((await instantQuery(prometheus, `count(${TOKEN_METRIC}{client_id!=""})`)).length === 0) {
    return `the gateway's token counts carry no client_id: install the AI Gateway with controller.metricsRequestHeaderAttributes "x-llm-client-id:client_id" (docs/observability.md)`;
  }
  return undefined;
}

/** Prices of one model object per million tokens, as the chart's `pricing.models` set them. */
export interface ModelPrice {
  readonly currency: string;
  readonly input?: number;
  readonly output?: number;
  readonly cachedInput?: number;
}

/** `namespace/model` → its prices, from the price series (none when the chart has no price table). */
export async function readPrices(prometheus: string): Promise<Map<string, ModelPrice>> {
  const prices = new Map<string, { currency: string; input?: number; output?: number; cachedInput?: number }>();
  const field: Record<string, 'input' | 'output' | 'cachedInput'> = { input: 'input', output: 'output', cached_input: 'cachedInput' };
  for (const s of await instantQuery(prometheus, `max by (model_namespace, model, gen_ai_token_type, currency) (${PRICE_METRIC})`)) {
    const { model_namespace: ns = '', model = '', gen_ai_token_type: type = '', currency = '' } = s.metric;
    const f = field[type];
    if (!f) continue;
    const key = `${ns}/${model}`;
    const p = prices.get(key) ?? { currency };
    p[f] = Number(s.value[1]);
    prices.set(key, p);
  }
  return prices;
}

/** The one currency of the price table; undefined without prices, or when models disagree (then no total is meaningful). */
export function priceCurrency(prices: ReadonlyMap<string, ModelPrice>): string | undefined {
  const currencies = new Set([...prices.values()].map((p) => p.currency));
  return currencies.size === 1 ? [...currencies][0] : undefined;
}

/**
 * A cost as people read it: cents from 1 up, three significant digits below 1, so a few requests'
 * 0.00007 does not show as 0.0001 (or 0.0000) the way a fixed number of decimals would.
 */
export function formatCost(cost: number): string {
  if (cost >= 1) return cost.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  return cost.toLocaleString('en-US', { maximumSignificantDigits: 3 });
}

/**
 * What the tokens cost at these prices, the way the chart's spend rules charge them: the input
 * count includes cached input, which is charged its own price when one is set. Undefined when
 * the model has no input or output price.
 */
export function costOf(tokens: Readonly<Record<string, number>>, price: ModelPrice | undefined): number | undefined {
  if (!price || price.input === undefined || price.output === undefined) return undefined;
  const input = tokens.input ?? 0;
  const cached = tokens.cached_input ?? 0;
  const cachedPrice = price.cachedInput ?? price.input;
  return ((input - cached) * price.input + cached * cachedPrice + (tokens.output ?? 0) * price.output) / 1e6;
}
