// `nls usage`: tokens per owner and model object, read from Prometheus. The gateway's extproc
// counts the tokens of every answer by the client ID of the key that asked
// (`gen_ai_client_token_usage_sum{client_id}`); the operator's `nls_api_key_info` says whose key
// each client ID is and for which model (docs/observability.md). The command joins the two; it
// needs no access to the cluster, only to the Prometheus that scrapes both.
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
recorded when it was minted. Requests on the internal endpoint (OIDC tokens) carry no key and are
not in this report.`;

/** The extproc's token counter (the `_sum` of OpenTelemetry's gen_ai.client.token.usage histogram). */
export const TOKEN_METRIC = 'gen_ai_client_token_usage_sum';
export const KEY_INFO_METRIC = 'nls_api_key_info';
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

/** A PromQL label value in double quotes. */
function quoted(value: string): string {
  return JSON.stringify(value);
}

/**
 * The query: tokens counted in the period, per key, joined with the owner and model of the key.
 * A counter that already existed when the period began contributes its increase; one that started
 * inside the period (a new key, a proxy pod started since) contributes its whole value, which
 * `increase` alone would miss for the first answers. Keys revoked or expired during the period
 * still count: their records are taken over the period, not now.
 */
export function usageQuery(opts: Pick<UsageOptions, 'model' | 'user' | 'namespace' | 'since'>): string {
  const filters = [
    ...(opts.namespace ? [`namespace=${quoted(opts.namespace)}`] : []),
    ...(opts.model ? [`model=${quoted(opts.model)}`] : []),
    ...(opts.user ? [`owner=${quoted(opts.user)}`] : []),
  ].join(', ');
  const tokens = `((increase(${TOKEN_METRIC}[${opts.since}]) and ${TOKEN_METRIC} offset ${opts.since}) or ${TOKEN_METRIC})`;
  const keys = `max by (client_id, namespace, model, owner) (max_over_time(${KEY_INFO_METRIC}{${filters}}[${opts.since}]))`;
  return `sum by (namespace, model, owner, gen_ai_token_type) (${tokens} * on (client_id) group_left (namespace, model, owner) ${keys})`;
}

interface PromSample {
  metric: Record<string, string>;
  value: [number, string];
}

/** An instant query against Prometheus's HTTP API; errors carry Prometheus's own message. */
async function instantQuery(prometheus: string, promql: string): Promise<PromSample[]> {
  const url = `${prometheus}/api/v1/query?${new URLSearchParams({ query: promql })}`;
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  } catch (err) {
    throw new Error(`cannot reach Prometheus at ${prometheus}: ${(err as Error).message}; check --prometheus`);
  }
  const text = await response.text();
  let body: { status?: string; error?: string; data?: { resultType?: string; result?: PromSample[] } };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    throw new Error(`${prometheus} answered ${response.status} with something other than Prometheus's JSON; check --prometheus`);
  }
  if (body.status !== 'success') throw new Error(`Prometheus refused the query (${response.status}): ${body.error ?? text}`);
  return body.data?.result ?? [];
}

/** Rows of the report from the query's samples, sorted by namespace, model and owner. */
export function usageRows(samples: readonly PromSample[]): UsageRow[] {
  const rows = new Map<string, UsageRow>();
  for (const s of samples) {
    const { namespace = '', model = '', owner = '', gen_ai_token_type: type = 'unknown' } = s.metric;
    const key = JSON.stringify([namespace, model, owner]);
    const row = rows.get(key) ?? { namespace, model, owner, tokens: {} };
    row.tokens[type] = (row.tokens[type] ?? 0) + Math.round(Number(s.value[1]));
    rows.set(key, row);
  }
  return [...rows.values()].sort((a, b) => a.namespace.localeCompare(b.namespace) || a.model.localeCompare(b.model) || a.owner.localeCompare(b.owner));
}

/** The report as a table: one row per owner and model, input and output tokens and their sum. */
export function usageTable(rows: readonly UsageRow[]): string[] {
  const lines = [['NAMESPACE', 'MODEL', 'OWNER', 'INPUT', 'OUTPUT', 'TOTAL']];
  for (const r of rows) {
    const input = r.tokens.input ?? 0;
    const output = r.tokens.output ?? 0;
    lines.push([r.namespace, r.model, r.owner, String(input), String(output), String(input + output)]);
  }
  return lines.map((cells) => cells.map(terminalSafe).join('\t'));
}

/**
 * Why the report would be empty for a reason other than "nobody used a key": a source Prometheus
 * does not have. Said instead of printing zeros.
 */
async function missingSource(prometheus: string): Promise<string | undefined> {
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

/** Run `nls usage ...`; `print` receives stdout lines. Returns the exit code. */
export async function runUsage(args: string[], print: (line: string) => void = commandOutput): Promise<number> {
  const opts = parseUsageArgs(args);
  const rows = usageRows(await instantQuery(opts.prometheus, usageQuery(opts)));
  if (rows.length === 0) {
    const missing = await missingSource(opts.prometheus);
    if (missing) throw new Error(missing);
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
