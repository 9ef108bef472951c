// Spend from the price table (`pricing` values) as Prometheus recording rules, in their own
// PrometheusRule `<fullname>-spend`, rendered whenever `pricing.models` lists a price (with or
// without the alerts of `prometheusRule.enabled`; both carry `prometheusRule.labels`).
//
// Prices live in chart values, not on the kinds: the platform team sets them (model owners should
// not price their own models), and the only consumer is Prometheus, which the chart already feeds
// rules to. Two rule groups:
// - prices: one constant series per priced model and token type, rendered from the table;
// - spend: the extproc's token counters joined with the operator's `nls_api_key_info` (who owns a
//   client ID) and the prices, per key and proxy, then summed per key, owner, owner and model,
//   model and group. The group rules do not depend on the table, so they are written here once.
// docs/observability.md describes every series, its labels and its cardinality.
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { objectLabels } from './labels';
import { objectNames } from './names';
import { OPERATOR_COMPONENT } from './operator';
import { CHART_NAME } from './helpers';
import { helmValue, RenderContext } from './render-context';

/** One row of `pricing.models`: prices per million tokens of a model object. */
export interface ModelPrice {
  /** Namespace of the LLMModel or PassthroughModel; empty means the release namespace. */
  readonly namespace?: string;
  /** The model object's name (as `nls_api_key_info{model}` carries it). */
  readonly model: string;
  readonly input: number;
  readonly output: number;
  /** Price of a cached input token; absent: cached input is charged as input. */
  readonly cachedInput?: number;
}

export interface PricingValues {
  readonly currency: string;
  readonly models: readonly ModelPrice[];
}

/** The recorded series, by what they hold. */
export const SPEND_METRICS = {
  /** Price per million tokens {model_namespace, model, gen_ai_token_type, currency}. */
  price: 'nls:token_price_per_million',
  /** Spend per key on one proxy (`instance`): a counter of its own, safe for increase(). */
  keyByProxy: 'nls:api_key_spend_by_proxy',
  /** Spend per key {client_id, model_namespace, model, model_kind, owner, groups, tier, currency}. */
  key: 'nls:api_key_spend',
  owner: 'nls:owner_spend',
  ownerModel: 'nls:owner_model_spend',
  model: 'nls:model_spend',
  /** Spend per granting group {group, currency}: a key granted by two groups counts for both. */
  group: 'nls:group_spend',
} as const;

/** The extproc's token counter and the operator's key records (docs/observability.md). */
const TOKENS = 'gen_ai_client_token_usage_sum';
const KEY_INFO = 'nls_api_key_info';

/** Token types with a price, and the `pricing.models[]` field each is priced by. */
const PRICED_TOKEN_TYPES = [
  { type: 'input', field: 'input' },
  { type: 'output', field: 'output' },
  { type: 'cached_input', field: 'cachedInput' },
] as const;

/**
 * `groups` on a key record is a comma-separated, sorted list; PromQL cannot split a label, so the
 * group rule takes the group at each position up to this many. A key granted by more groups counts
 * for its first eight (documented).
 */
export const GROUP_POSITIONS = 8;

export const PRICE_GROUP = 'nebari-llm-serving-prices';
export const SPEND_GROUP = 'nebari-llm-serving-spend';

export interface RecordingRule {
  readonly record: string;
  readonly expr: string;
  readonly labels?: Record<string, string>;
}

/** Why a price table cannot be rendered, or undefined (the Helm helper fails with the same words). */
export function pricingProblem(pricing: PricingValues, releaseNamespace: string): string | undefined {
  const seen = new Map<string, number>();
  for (const [i, m] of pricing.models.entries()) {
    const key = `${m.namespace || releaseNamespace}/${m.model}`;
    const first = seen.get(key);
    if (first !== undefined) return `pricing.models[${i}]: model ${key} already has a price at pricing.models[${first}]; keep one entry per namespace and model`;
    seen.set(key, i);
  }
  return undefined;
}

/** The price group's rules: one constant per priced model and token type (Helm twin: spendHelpersTemplate). */
export function priceRecordingRules(pricing: PricingValues, releaseNamespace: string): RecordingRule[] {
  const problem = pricingProblem(pricing, releaseNamespace);
  if (problem) throw new Error(problem);
  return pricing.models.flatMap((m) =>
    PRICED_TOKEN_TYPES.filter((t) => m[t.field] !== undefined && m[t.field] !== null).map((t) => ({
      record: SPEND_METRICS.price,
      expr: `vector(${JSON.stringify(m[t.field])})`,
      labels: { currency: pricing.currency, gen_ai_token_type: t.type, model: m.model, model_namespace: m.namespace || releaseNamespace },
    })),
  );
}

/** The spend group's rules, reading the key records of this release's operator (`job`: its metrics Service). */
export function spendRecordingRules(operatorJob: string): RecordingRule[] {
  const keyLabels = 'client_id, model_namespace, model, model_kind, owner, groups, tier';
  // The model's namespace: `namespace` as exported, which a scrape that does not honor labels (the
  // Prometheus Operator's default) renames to `exported_namespace` beside the target's namespace.
  const keyRecords = `max by (${keyLabels}) (label_replace(label_replace(${KEY_INFO}{job="${operatorJob}"}, "model_namespace", "$1", "namespace", "(.*)"), "model_namespace", "$1", "exported_namespace", "(.+)"))`;
  // The extproc's input count includes cached input (OpenAI's prompt_tokens; the AI Gateway adds
  // Anthropic's cache reads to it), so a cached token is charged its price instead of the input price:
  // its charge is cachedInput - input (group_left keeps the left side's token type).
  const price = SPEND_METRICS.price;
  const charge = `(${price}{gen_ai_token_type!="cached_input"} or (${price}{gen_ai_token_type="cached_input"} - on (model_namespace, model, currency) group_left ${price}{gen_ai_token_type="input"}))`;
  const tokens = `sum by (instance, client_id, gen_ai_token_type) (${TOKENS}{client_id!=""})`;
  const perKeyByProxy =
    `sum by (instance, ${keyLabels}, currency) (` +
    `${tokens} * on (client_id) group_left (model_namespace, model, model_kind, owner, groups, tier) ${keyRecords}` +
    ` * on (model_namespace, model, gen_ai_token_type) group_left (currency) ${charge}) / 1e6`;
  const groupAt = (i: number) => {
    const before = i === 0 ? '' : `(?:[^,]+,){${i}}`;
    return `label_replace(${SPEND_METRICS.key}{groups=~"${before}[^,]+(?:,.*)?"}, "group", "$1", "groups", "${before}([^,]+)(?:,.*)?")`;
  };
  return [
    { record: SPEND_METRICS.keyByProxy, expr: perKeyByProxy },
    { record: SPEND_METRICS.key, expr: `sum by (${keyLabels}, currency) (${SPEND_METRICS.keyByProxy})` },
    { record: SPEND_METRICS.owner, expr: `sum by (owner, currency) (${SPEND_METRICS.key})` },
    { record: SPEND_METRICS.ownerModel, expr: `sum by (model_namespace, model, owner, currency) (${SPEND_METRICS.key})` },
    { record: SPEND_METRICS.model, expr: `sum by (model_namespace, model, currency) (${SPEND_METRICS.key})` },
    { record: SPEND_METRICS.group, expr: `sum by (group, currency) (${Array.from({ length: GROUP_POSITIONS }, (_, i) => groupAt(i)).join(' or ')})` },
  ];
}

export interface SpendRulesProps {
  /** How values and names are rendered. */
  readonly context: RenderContext;
}

/** The PrometheusRule `<fullname>-spend` (rendered when `pricing.models` is not empty). */
export class SpendRules extends Construct {
  constructor(scope: Construct, id: string, props: SpendRulesProps) {
    super(scope, id);
    const ctx = props.context;
    const names = objectNames(ctx);
    const prices = ctx.expression(`include "${CHART_NAME}.priceRecordingRules" . | trim`, (v) => priceRecordingRules((v as { pricing: PricingValues }).pricing, ctx.namespace));
    new ApiObject(this, 'Resource', {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'PrometheusRule',
      metadata: {
        name: names.spendRule,
        namespace: ctx.namespace,
        labels: { ...objectLabels(ctx, OPERATOR_COMPONENT), ...ctx.merge('prometheusRule.labels') },
      },
      spec: {
        groups: [
          { name: PRICE_GROUP, rules: helmValue<RecordingRule[]>(prices) },
          { name: SPEND_GROUP, rules: spendRecordingRules(names.metricsService) },
        ],
      },
    });
  }
}

/** `_helpers.tpl` entry: the Helm twin of priceRecordingRules, as a JSON list (YAML reads it inline). */
export function spendHelpersTemplate(chart = CHART_NAME): string {
  const problem = `pricing.models[%d]: model %s already has a price at pricing.models[%d]; keep one entry per namespace and model`;
  return `{{/* The price table as recording rules (JSON): one constant per priced model and token type; fails on a model priced twice. */}}
{{- define "${chart}.priceRecordingRules" -}}
{{- $rules := list -}}
{{- $seen := dict -}}
{{- range $i, $m := .Values.pricing.models -}}
{{- $ns := default $.Release.Namespace $m.namespace -}}
{{- $key := printf "%s/%s" $ns $m.model -}}
{{- if hasKey $seen $key -}}
{{- fail (printf ${JSON.stringify(problem)} $i $key (get $seen $key)) -}}
{{- end -}}
{{- $_ := set $seen $key $i -}}
{{- range $t := list (list "input" "input") (list "output" "output") (list "cached_input" "cachedInput") -}}
{{- if hasKey $m (index $t 1) -}}
{{- $labels := dict "currency" $.Values.pricing.currency "gen_ai_token_type" (index $t 0) "model" $m.model "model_namespace" $ns -}}
{{- $rules = append $rules (dict "record" ${JSON.stringify(SPEND_METRICS.price)} "expr" (printf "vector(%s)" (get $m (index $t 1) | toJson)) "labels" $labels) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- toJson $rules -}}
{{- end -}}
`;
}
