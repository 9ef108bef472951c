// `nls usage`: tokens per owner and model object, read from Prometheus. The gateway's extproc
// counts the tokens of every answer by the client ID of the key that asked
// (`gen_ai_client_token_usage_sum{client_id}`); the operator's `nls_api_key_info` says whose key
// each client ID is and for which model (docs/observability.md). The command joins the two; it
// needs no access to the cluster, only to the Prometheus that scrapes both.
import { costOf, formatCost, instantQuery, type KeyLabel, missingSource, type ModelPrice, PrometheusError, type PromSample, readPrices, tokenRows, usageQuery as sharedUsageQuery } from '../../usage/prometheus-usage';
import { durationMs, parseFlags } from '../flags';
import { commandOutput, terminalSafe, terminalSafeJson } from '../output';
import { UsageError } from '../phases';

export const usageUsage = `Usage:
  nls usage [--prometheus URL] [--model NAME] [--user NAME] [--namespace NS] [--since DURATION] [--output text|json]
Options:
  --prometheus URL       the Prometheus that scrapes the gateway's extproc and the operator (default: $NLS_PROMETHEUS_URL)
  --model NAME           only this model object (LLMModel or PassthroughModel)
  --user NAME            only keys owned by this user
  -n, --namespace NS     only models of this namespace (default: all)
  --since DURATION       the period to count, ending now (default 30d; e.g. 24h, 7d)
  -o, --output text|json
Tokens are counted per answer by the gateway; a key's usage is attributed to its owner and model as
recorded when it was minted. The cost is at the prices of the chart's price table (pricing.models),
in its currency; a model without a price has no cost. Requests on the internal endpoint (OIDC
tokens) carry no key and are not in this report.`;

const DEFAULT_SINCE = '30d';

export interface UsageOptions {
  prometheus: string;
  model?: string;
  user?: string;
  namespace?: string;
  /** The period as written (`30d`), for PromQL and the report. */
  since: string;
  output: 'text' | 'json';
}

export interface UsageRow {
  namespace: string;
  model: string;
  owner: string;
  /** Tokens by the extproc's `gen_ai_token_type` (input, output, cached_input, …). */
  tokens: Record<string, number>;
  /** What the tokens cost in `currency`; both absent when the model has no price. */
  cost?: number;
  currency?: string;
}

/** Parse `usage` arguments; errors name the flag and the fix. */
export function parseUsageArgs(args: string[], env: NodeJS.ProcessEnv = process.env): UsageOptions {
  const { values: flags, positionals } = parseFlags('usage', args, {
    prometheus: { type: 'string' },
    model: { type: 'string' },
    user: { type: 'string' },
    namespace: { type: 'string' },
    since: { type: 'string' },
    output: { type: 'string' },
  });
  if (positionals.length > 0) throw new UsageError(`usage: unexpected argument "${positionals[0]}"\n${usageUsage}`);
  const prometheus = flags.prometheus ?? env.NLS_PROMETHEUS_URL;
  if (!prometheus) {
    throw new UsageError('usage: no Prometheus to read: pass --prometheus URL or set NLS_PROMETHEUS_URL (the Prometheus that scrapes the gateway proxies and the operator)');
  }
  if (!/^https?:\/\/[^/\s]+/.test(prometheus)) throw new UsageError(`usage: --prometheus "${prometheus}" is not an http(s) URL; write e.g. http://prometheus.monitoring:9090`);
  const since = flags.since ?? DEFAULT_SINCE;
  // A PromQL duration: whole numbers of one unit.
  if (!/^\d+(s|m|h|d|w)$/.test(since) || durationMs('since', since) <= 0) throw new UsageError(`usage: --since "${since}" is not a period; write e.g. 24h, 7d or 30d`);
  const output = flags.output ?? 'text';
  if (output !== 'text' && output !== 'json') throw new UsageError(`usage: --output "${output}" is not supported; use text or json`);
  return { prometheus: prometheus.replace(/\/+$/, ''), model: flags.model, user: flags.user, namespace: flags.namespace, since, output };
}

/** The report's rows: one per namespace, model object and owner. */
const BY: readonly KeyLabel[] = ['namespace', 'model', 'owner'];

/** The query of the report (src/usage/prometheus-usage.ts, shared with the key portal). */
export function usageQuery(opts: Pick<UsageOptions, 'model' | 'user' | 'namespace' | 'since'>): string {
  return sharedUsageQuery({ namespace: opts.namespace, model: opts.model, user: opts.user }, opts.since, BY);
}

/**
 * Rows of the report from the query's samples, sorted by namespace, model and owner, each with its
 * cost at its model's price (`namespace/model` → price, as `readPrices` gives them).
 */
export function usageRows(samples: readonly PromSample[], prices: ReadonlyMap<string, ModelPrice> = new Map()): UsageRow[] {
  return tokenRows(samples, BY).map((r) => {
    const price = prices.get(`${r.labels.namespace}/${r.labels.model}`);
    const cost = costOf(r.tokens, price);
    return { namespace: r.labels.namespace, model: r.labels.model, owner: r.labels.owner, tokens: r.tokens, ...(cost === undefined ? {} : { cost, currency: price!.currency }) };
  });
}

/** The report as a table: one row per owner and model, input and output tokens, their sum and the cost ("-" without a price). */
export function usageTable(rows: readonly UsageRow[]): string[] {
  const lines = [['NAMESPACE', 'MODEL', 'OWNER', 'INPUT', 'OUTPUT', 'TOTAL', 'COST']];
  for (const r of rows) {
    const input = r.tokens.input ?? 0;
    const output = r.tokens.output ?? 0;
    const cost = r.cost === undefined ? '-' : `${formatCost(r.cost)}${r.currency ? ` ${r.currency}` : ''}`;
    lines.push([r.namespace, r.model, r.owner, String(input), String(output), String(input + output), cost]);
  }
  return lines.map((cells) => cells.map(terminalSafe).join('\t'));
}

/** Run `nls usage ...`; `print` receives stdout lines. Returns the exit code. */
export async function runUsage(args: string[], print: (line: string) => void = commandOutput): Promise<number> {
  const opts = parseUsageArgs(args);
  let rows: UsageRow[];
  try {
    const [samples, prices] = await Promise.all([instantQuery(opts.prometheus, usageQuery(opts)), readPrices(opts.prometheus)]);
    rows = usageRows(samples, prices);
    if (rows.length === 0) {
      const missing = await missingSource(opts.prometheus);
      if (missing) throw new Error(missing);
    }
  } catch (err) {
    if (err instanceof PrometheusError) throw new Error(`${err.message}; check --prometheus`);
    throw err;
  }
  if (opts.output === 'json') {
    print(terminalSafeJson({ since: opts.since, ...(opts.namespace ? { namespace: opts.namespace } : {}), ...(opts.model ? { model: opts.model } : {}), ...(opts.user ? { user: opts.user } : {}), rows }));
  } else if (rows.length === 0) {
    print(`no tokens counted for API keys in the last ${opts.since}${opts.model ? ` for model ${terminalSafe(opts.model)}` : ''}${opts.user ? ` for user ${terminalSafe(opts.user)}` : ''}`);
  } else {
    print(`tokens in the last ${opts.since}, by the gateway's count:`);
    for (const line of usageTable(rows)) print(line);
  }
  return 0;
}
