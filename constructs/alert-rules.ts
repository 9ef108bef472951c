// The alert rules of the chart's PrometheusRule (constructs/prometheus-rule.ts), one entry per
// alert: its PromQL, severity, default `for` and threshold (both overridable under
// `prometheusRule.alerts.<key>`), and the text of its summary and description. The values schema
// reads the defaults from here, so the table is the one source of both. Each alert's runbook is
// docs/runbooks/<alert>.md. Only metrics that exist are used: the operator's and the portal's
// `nls_*` (src/operator/runtime/metrics.ts, src/portal/metrics.ts), the AI Gateway extproc's
// GenAI metrics and Envoy's cluster statistics (docs/observability.md).

/** What an alert's PromQL is built from: label matchers, the rate window and its threshold, as rendered. */
export interface AlertScope {
  /** Matchers selecting this release's operator metrics (`job` is the metrics Service, as the ServiceMonitor scrapes it). */
  readonly operator: string;
  /** Matchers selecting this release's portal metrics. */
  readonly portal: string;
  /** `prometheusRule.rateWindow`: the range of every rate(). */
  readonly window: string;
  /** The alert's `threshold` value. */
  readonly threshold: string;
}

export type Severity = 'critical' | 'warning' | 'info';

export interface AlertRule {
  /** The alert's name in Prometheus and the runbook's file name (docs/runbooks/<alert>.md). */
  readonly alert: string;
  /** Its key under `prometheusRule.alerts`. */
  readonly key: string;
  readonly severity: Severity;
  /** Default `for`: how long the condition must hold before the alert fires. */
  readonly for: string;
  /** Default threshold and what its number means (values docs); absent when the rule has none. */
  readonly threshold?: { readonly default: number; readonly meaning: string };
  readonly expr: (s: AlertScope) => string;
  /** Prometheus template text (`{{ $labels.x }}`, `{{ $value }}`) naming the object. */
  readonly summary: string;
  readonly description: string;
}

const ratio = (errors: string, total: string, by: string, s: AlertScope) =>
  `sum by (${by}) (rate(${errors}[${s.window}])) / sum by (${by}) (rate(${total}[${s.window}])) > ${s.threshold}`;

export const ALERT_RULES: readonly AlertRule[] = [
  {
    alert: 'NebariLLMOperatorDown',
    key: 'operatorDown',
    // Critical: with no replica the admission webhooks (failurePolicy Fail) refuse every model change.
    severity: 'critical',
    // Five minutes covers a rolling update or a rescheduled pod.
    for: '5m',
    expr: (s) => `sum by (namespace, job) (up{${s.operator}}) == 0 or absent(up{${s.operator}})`,
    summary: 'No operator replica of {{ $labels.job }} in namespace {{ $labels.namespace }} answers its metrics scrape',
    description: 'Every target of the operator metrics Service is down or gone. The admission webhooks run in the same pods, so creating or changing models and agents fails until a replica is back.',
  },
  {
    alert: 'NebariLLMOperatorNoLeader',
    key: 'operatorNoLeader',
    // Critical: without a Lease holder nothing reconciles; keys are neither authorized nor revoked.
    severity: 'critical',
    // A Lease changes hands within its duration (seconds); five minutes without one is not a handover.
    for: '5m',
    expr: (s) => `sum by (namespace, job) (nls_leader{${s.operator}}) < 1`,
    summary: 'No replica of the operator {{ $labels.job }} in namespace {{ $labels.namespace }} holds the leader Lease',
    description: 'The operator pods answer, but none of them reconciles: model changes, new keys and key revocations wait.',
  },
  {
    alert: 'NebariLLMReconcileErrors',
    key: 'reconcileErrors',
    severity: 'warning',
    // A failed pass is retried with backoff and usually succeeds next time; a tenth of all passes
    // failing for a quarter hour means some objects are not converging.
    for: '15m',
    threshold: { default: 0.1, meaning: 'ratio of failed reconcile passes to all passes' },
    expr: (s) => ratio(`nls_reconcile_errors_total{${s.operator}}`, `nls_reconcile_total{${s.operator}}`, 'namespace, job, kind', s),
    summary: '{{ $value | humanizePercentage }} of {{ $labels.kind }} reconcile passes of the operator {{ $labels.job }} in namespace {{ $labels.namespace }} fail',
    description: 'Reconciles of this kind keep ending in an error; the objects concerned carry the error in their status conditions.',
  },
  {
    alert: 'NebariLLMWebhookErrors',
    key: 'webhookErrors',
    // Critical: the webhooks fail closed, so an erring review is a refused create or update.
    severity: 'critical',
    // Ten minutes: a single slow lookup burst is retried by clients; a steady share is not.
    for: '10m',
    threshold: { default: 0.05, meaning: 'ratio of admission reviews that failed or timed out in the handler to all reviews' },
    expr: (s) =>
      ratio(`nls_webhook_admission_requests_total{${s.operator}, outcome="error"}`, `nls_webhook_admission_requests_total{${s.operator}}`, 'namespace, job, kind', s),
    summary: '{{ $value | humanizePercentage }} of {{ $labels.kind }} admission reviews of the operator {{ $labels.job }} in namespace {{ $labels.namespace }} fail',
    description: 'The admission handler throws or runs past its time limit (cluster lookups too slow); the API server refuses those writes, since the webhooks fail closed.',
  },
  {
    alert: 'NebariLLMWebhookSlow',
    key: 'webhookSlow',
    severity: 'warning',
    // A review that only checks the object takes milliseconds; two seconds at p99 means slow
    // cluster lookups, and at webhook.timeoutSeconds (default 10) the API server gives up.
    for: '10m',
    threshold: { default: 2, meaning: 'seconds, the 99th percentile of the time to answer an admission review' },
    expr: (s) =>
      `histogram_quantile(0.99, sum by (namespace, job, kind, le) (rate(nls_webhook_admission_duration_seconds_bucket{${s.operator}}[${s.window}]))) > ${s.threshold}`,
    summary: '99th percentile {{ $labels.kind }} admission time of the operator {{ $labels.job }} in namespace {{ $labels.namespace }} is {{ $value | humanizeDuration }}',
    description: 'Admission reviews are slow; every create and update of this kind waits for them, and past webhook.timeoutSeconds they fail.',
  },
  {
    alert: 'NebariLLMWebhookCertificateExpiring',
    key: 'webhookCertificateExpiring',
    severity: 'warning',
    // cert-manager (renewBefore 720h) and the self-managed rotation both renew 30 days before
    // expiry: a served certificate with under 14 days left means renewal has been failing for
    // over two weeks. An hour of `for` rides out a replica that has not reloaded the new one yet.
    for: '1h',
    threshold: { default: 14, meaning: 'days left on the served webhook certificate' },
    expr: (s) => `(min by (namespace, job) (nls_webhook_certificate_expiry_timestamp_seconds{${s.operator}} > 0) - time()) / 86400 < ${s.threshold}`,
    summary: 'The webhook certificate served by the operator {{ $labels.job }} in namespace {{ $labels.namespace }} expires in {{ $value | humanize }} days',
    description: 'The serving certificate was not renewed. When it expires the API server can no longer call the webhooks, and every model and agent write is refused.',
  },
  {
    alert: 'NebariLLMModelNotReady',
    key: 'modelNotReady',
    severity: 'warning',
    // An LLMModel downloads its weights and starts its engine before it is Ready, which takes
    // several minutes for large models; a quarter hour covers that. Raise it for very large models.
    for: '15m',
    expr: (s) => `max by (namespace, job, kind, model_namespace, model) (nls_model_ready{${s.operator}}) == 0`,
    summary: '{{ $labels.kind }} {{ $labels.model_namespace }}/{{ $labels.model }} is not Ready',
    description: 'The model is not serving through the gateway; its status conditions say why.',
  },
  {
    alert: 'NebariLLMModelRequestErrors',
    key: 'modelRequestErrors',
    severity: 'critical',
    // 5 % of a model's answers failing is well past a provider's normal error rate and is what
    // callers notice; five minutes keeps a single burst from paging.
    for: '5m',
    threshold: { default: 0.05, meaning: 'ratio of failed requests (an error answer from the provider or a gateway failure) to all requests of a model' },
    expr: (s) =>
      ratio('gen_ai_server_request_duration_seconds_count{error_type!=""}', 'gen_ai_server_request_duration_seconds_count', 'namespace, gen_ai_request_model', s),
    summary: 'Model {{ $labels.gen_ai_request_model }}: {{ $value | humanizePercentage }} of requests through the gateway in namespace {{ $labels.namespace }} fail',
    description: 'The AI Gateway counts these requests as failed: the provider answered with an error status (5xx, or 4xx such as its own rate limit) or the gateway could not translate the request or answer.',
  },
  {
    alert: 'NebariLLMTimeToFirstTokenSlow',
    key: 'timeToFirstTokenSlow',
    severity: 'warning',
    // Two seconds before the first token is where a chat user sees the model as stuck; p99 over it
    // for a quarter hour means queueing in the engine or a slow provider, not one long prompt.
    for: '15m',
    threshold: { default: 2, meaning: 'seconds, the 99th percentile of the time to the first token' },
    expr: (s) =>
      `histogram_quantile(0.99, sum by (namespace, gen_ai_request_model, le) (rate(gen_ai_server_time_to_first_token_seconds_bucket[${s.window}]))) > ${s.threshold}`,
    summary: 'Model {{ $labels.gen_ai_request_model }}: 99th percentile time to first token is {{ $value | humanizeDuration }} in namespace {{ $labels.namespace }}',
    description: 'Streaming answers of this model start later than the time-to-first-token objective.',
  },
  {
    alert: 'NebariLLMUpstreamErrors',
    key: 'upstreamErrors',
    severity: 'warning',
    // Envoy's view per upstream cluster (a route rule's backends): 5xx answers plus connections that
    // failed to open. 5 % for ten minutes is a provider or serving engine in trouble, not a blip.
    for: '10m',
    threshold: { default: 0.05, meaning: 'ratio of 5xx answers and failed connections to requests, per Envoy upstream cluster' },
    expr: (s) => {
      const by = 'namespace, envoy_cluster_name';
      return `(sum by (${by}) (rate(envoy_cluster_upstream_rq_xx{envoy_response_code_class="5"}[${s.window}])) + sum by (${by}) (rate(envoy_cluster_upstream_cx_connect_fail[${s.window}]))) / sum by (${by}) (rate(envoy_cluster_upstream_rq_total[${s.window}])) > ${s.threshold}`;
    },
    summary: 'Upstream cluster {{ $labels.envoy_cluster_name }} of the gateway in namespace {{ $labels.namespace }}: {{ $value | humanizePercentage }} of requests fail',
    description: 'The provider or serving engine behind this Envoy cluster answers with 5xx or refuses connections.',
  },
  {
    alert: 'NebariLLMQuotaExhausted',
    key: 'quotaExhausted',
    // Info: a caller at its tier's limit is the quota working; it is worth knowing, not waking for.
    severity: 'info',
    // Refusals for a quarter hour are a caller steadily over its tier, not one burst at a window's edge.
    for: '15m',
    threshold: { default: 0, meaning: 'requests per second refused by the rate-limit service, per Envoy upstream cluster' },
    expr: (s) => `sum by (namespace, envoy_cluster_name) (rate(envoy_cluster_ratelimit_over_limit[${s.window}])) > ${s.threshold}`,
    summary: 'Callers of upstream cluster {{ $labels.envoy_cluster_name }} in namespace {{ $labels.namespace }} are over their token quota ({{ $value | humanize }} refusals/s)',
    description: 'The rate-limit service refuses requests of keys that used up their tier. Envoy counts refusals per upstream cluster, not per key; the runbook shows how to find the key.',
  },
  {
    alert: 'NebariLLMKeyRevocationStalled',
    key: 'keyRevocationStalled',
    // Critical: keys of users who lost their groups stay usable while no refresh round finishes.
    severity: 'critical',
    for: '5m',
    // Half an hour is six rounds at the default portal.groupRefreshSeconds (300); raise it with that value.
    threshold: { default: 1800, meaning: 'seconds since the latest finished group refresh round' },
    expr: (s) => `time() - max by (namespace, job) (nls_portal_group_refresh_last_round_timestamp_seconds{${s.portal}}) > ${s.threshold}`,
    summary: 'The key portal {{ $labels.job }} in namespace {{ $labels.namespace }} has finished no group refresh round for {{ $value | humanizeDuration }}',
    description: 'Keys are revoked when a refresh round finds their owner lost the granting groups; with no rounds, such keys stay valid.',
  },
  {
    alert: 'NebariLLMPortalGroupRefreshFailing',
    key: 'portalGroupRefreshFailing',
    severity: 'warning',
    // Any user failing for half an hour: the issuer is unreachable or refusing the portal's client,
    // and those users' keys are revoked once portal.groupRefreshFailClosedSeconds passes.
    for: '30m',
    threshold: { default: 0, meaning: 'users whose group refresh failed in the latest round' },
    expr: (s) => `max by (namespace, job) (nls_portal_users_refresh_failing{${s.portal}}) > ${s.threshold}`,
    summary: 'The key portal {{ $labels.job }} in namespace {{ $labels.namespace }} cannot refresh the groups of {{ $value }} users',
    description: 'The group refresh of these users fails for a reason other than a refusal (issuer unreachable or erring, refresh token unreadable). After portal.groupRefreshFailClosedSeconds they are refused and their keys revoked.',
  },
  {
    alert: 'NebariLLMAPIKeyExpiringSoon',
    key: 'apiKeyExpiringSoon',
    // Info: expiry is intended; this gives the owner a week to mint a replacement.
    severity: 'info',
    for: '10m',
    threshold: { default: 7, meaning: 'days left before an API key expires' },
    expr: (s) => `(min by (client_id, model, model_kind, owner) (nls_api_key_expiry_timestamp_seconds{${s.operator}}) - time()) / 86400 < ${s.threshold}`,
    summary: 'API key {{ $labels.client_id }} of {{ $labels.owner }} for {{ $labels.model_kind }} {{ $labels.model }} expires in {{ $value | humanize }} days',
    description: 'The key stops working when it expires (the operator revokes it then). Its owner can mint a replacement in the key portal or with nls keys mint.',
  },
];
