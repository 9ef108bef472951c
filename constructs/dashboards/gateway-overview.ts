// Gateway overview: what the gateway relays, per model, from the AI Gateway extproc's GenAI
// metrics (labels gen_ai_request_model, gen_ai_token_type, error_type; docs/observability.md) and
// Envoy's cluster statistics (label envoy_cluster_name). Neither carries the Gateway's name: the
// proxy pod (one Gateway each) stands for the endpoint.
import { type DashboardSpec, labelVariable, withLabel } from './builder';

const EXTPROC = 'namespace=~"$namespace", gen_ai_request_model=~"$model"';
const ENVOY = 'namespace=~"$namespace"';
const REQUESTS = `gen_ai_server_request_duration_seconds_count{${EXTPROC}}`;
const rate = (series: string) => `rate(${series}[$__rate_interval])`;
const quantile = (q: number, histogram: string) =>
  `histogram_quantile(${q}, sum by (gen_ai_request_model, le) (${rate(`${histogram}_bucket{${EXTPROC}}`)}))`;
/** A failing share that reads 0, not "no data", while every request succeeds: `or` the total times 0. */
const ratio = (failed: string, total: string, by: string) =>
  `(sum by (${by}) (${rate(failed)}) or sum by (${by}) (${rate(total)}) * 0) / sum by (${by}) (${rate(total)})`;

export const GATEWAY_OVERVIEW: DashboardSpec = {
  uid: 'nls-gateway-overview',
  id: 'gateway-overview',
  title: 'LLM gateway overview',
  description: 'Requests, failures, tokens and latency of the models served through the Envoy AI Gateway.',
  variables: [
    labelVariable('namespace', 'namespace', 'gen_ai_server_request_duration_seconds_count', 'Gateway namespace'),
    labelVariable('model', 'gen_ai_request_model', 'gen_ai_server_request_duration_seconds_count', 'Model'),
  ],
  panels: [
    {
      title: 'Requests by model',
      description: 'Requests the extproc handled per second, by the model the request named.',
      unit: 'reqps',
      queries: [{ expr: `sum by (gen_ai_request_model) (${rate(REQUESTS)})` }],
    },
    {
      title: 'Failed requests by model',
      description: 'Share of requests that ended in an error (any non-2xx answer of the provider, or a gateway failure; the extproc records no status code).',
      unit: 'percentunit',
      queries: [{ expr: ratio(`gen_ai_server_request_duration_seconds_count{${EXTPROC}, error_type!=""}`, REQUESTS, 'gen_ai_request_model') }],
    },
    {
      title: 'Tokens per second by model and type',
      description: 'Tokens the providers reported in their answers (input, output, cached input...).',
      unit: 'short',
      queries: [{ expr: `sum by (gen_ai_request_model, gen_ai_token_type) (${rate(`gen_ai_client_token_usage_sum{${EXTPROC}}`)})` }],
    },
    {
      title: 'Time to first token by model',
      description: 'Median and 99th percentile of the time from request to the first streamed token (streamed requests only).',
      unit: 's',
      queries: [
        { expr: withLabel(quantile(0.5, 'gen_ai_server_time_to_first_token_seconds'), 'quantile', 'p50') },
        { expr: withLabel(quantile(0.99, 'gen_ai_server_time_to_first_token_seconds'), 'quantile', 'p99') },
      ],
    },
    {
      title: 'Request duration by model',
      description: 'Median and 99th percentile of the whole request, as the extproc measured it.',
      unit: 's',
      queries: [
        { expr: withLabel(quantile(0.5, 'gen_ai_server_request_duration_seconds'), 'quantile', 'p50') },
        { expr: withLabel(quantile(0.99, 'gen_ai_server_request_duration_seconds'), 'quantile', 'p99') },
      ],
    },
    {
      title: 'Requests by proxy pod',
      description: 'Requests per second per Envoy proxy pod; each pod belongs to one Gateway (external or internal endpoint).',
      unit: 'reqps',
      queries: [{ expr: `sum by (namespace, pod) (${rate(REQUESTS)})` }],
    },
    {
      title: 'Upstream requests by Envoy cluster',
      description: 'Requests Envoy sent per upstream cluster (one per route rule and backend).',
      unit: 'reqps',
      queries: [{ expr: `sum by (envoy_cluster_name) (${rate(`envoy_cluster_upstream_rq_total{${ENVOY}}`)})` }],
    },
    {
      title: '5xx answers by Envoy cluster',
      description: 'Share of upstream answers with a 5xx status, per upstream cluster.',
      unit: 'percentunit',
      queries: [{ expr: ratio(`envoy_cluster_upstream_rq_xx{${ENVOY}, envoy_response_code_class="5"}`, `envoy_cluster_upstream_rq_total{${ENVOY}}`, 'envoy_cluster_name') }],
    },
    {
      title: 'Quota refusals by Envoy cluster',
      description: 'Requests the rate-limit service refused (429) because a key used up its tier, per upstream cluster; Envoy does not count them per key.',
      unit: 'reqps',
      queries: [{ expr: `sum by (envoy_cluster_name) (${rate(`envoy_cluster_ratelimit_over_limit{${ENVOY}}`)})` }],
    },
  ],
};
