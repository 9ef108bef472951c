// Operator and webhooks: the `nls_*` metrics of the operator pods (src/operator/runtime/metrics.ts),
// scraped through the chart's ServiceMonitor (job = the metrics Service's name). The webhooks run
// in the same pods, so their metrics are on the same target.
import { type DashboardSpec, labelVariable, withLabel } from './builder';

const SELECT = 'namespace=~"$namespace", job=~"$job"';
const rate = (series: string) => `rate(${series}[$__rate_interval])`;
const p99 = (histogram: string, by: string) => `histogram_quantile(0.99, sum by (${by}, le) (${rate(`${histogram}_bucket{${SELECT}}`)}))`;
/** A counter that only appears once it counts, read as 0 beside a series that always exists. */
const orZero = (counter: string, always: string, by: string) => `sum by (${by}) (${rate(counter)}) or sum by (${by}) (${always}) * 0`;

export const OPERATOR: DashboardSpec = {
  uid: 'nls-operator',
  id: 'operator',
  title: 'LLM serving operator and webhooks',
  description: 'Reconciles, work queue, Kubernetes API use, leader election and the admission webhooks of the nebari-llm-serving operator.',
  variables: [
    labelVariable('namespace', 'namespace', 'nls_leader', 'Namespace'),
    labelVariable('job', 'job', 'nls_leader', 'Operator metrics Service'),
  ],
  panels: [
    { title: 'Reconciles by kind and result', description: 'Reconcile passes per second (success, error, requeue).', unit: 'ops', queries: [{ expr: `sum by (kind, result) (${rate(`nls_reconcile_total{${SELECT}}`)})` }] },
    {
      title: 'Reconcile errors by kind',
      description: 'Failed reconcile passes per second; the objects concerned carry the error in their status.',
      unit: 'ops',
      queries: [{ expr: orZero(`nls_reconcile_errors_total{${SELECT}}`, `${rate(`nls_reconcile_total{${SELECT}}`)}`, 'kind') }],
    },
    { title: 'Reconcile duration p99 by kind', description: '99th percentile of one reconcile pass.', unit: 's', queries: [{ expr: p99('nls_reconcile_duration_seconds', 'kind') }] },
    {
      title: 'Work queue',
      description: 'Keys waiting per kind, and keys re-queued per second after an error.',
      unit: 'short',
      queries: [
        { expr: withLabel(`max by (kind) (nls_workqueue_depth{${SELECT}})`, 'series', 'waiting') },
        { expr: withLabel(orZero(`nls_workqueue_retries_total{${SELECT}}`, `nls_workqueue_depth{${SELECT}}`, 'kind'), 'series', 'retries/s') },
      ],
    },
    { title: 'Kubernetes API requests', description: 'Requests per second by method and status code.', unit: 'reqps', queries: [{ expr: `sum by (method, code) (${rate(`nls_api_requests_total{${SELECT}}`)})` }] },
    { title: 'Kubernetes API latency p99', description: '99th percentile per method.', unit: 's', queries: [{ expr: p99('nls_api_request_duration_seconds', 'method') }] },
    { title: 'Leader', description: '1 for the replica holding the leader Lease; exactly one should.', unit: 'short', type: 'stat', queries: [{ expr: `max by (pod) (nls_leader{${SELECT}})` }] },
    {
      title: 'Models not Ready by kind',
      description: 'Models whose status.phase is not Ready (from the leader).',
      unit: 'short',
      type: 'stat',
      queries: [{ expr: `sum by (kind) (max by (kind, model_namespace, model) (nls_model_ready{${SELECT}}) == bool 0)` }],
    },
    {
      title: 'Admission reviews by kind and outcome',
      description: 'Reviews answered per second: allowed, denied, or error (the handler failed or timed out).',
      unit: 'reqps',
      queries: [{ expr: `sum by (kind, outcome) (${rate(`nls_webhook_admission_requests_total{${SELECT}}`)})` }],
    },
    {
      title: 'Admission denials by kind',
      description: 'Changes the webhooks refused per second (a denial is a user error, with its message in the client\'s answer).',
      unit: 'reqps',
      queries: [{ expr: orZero(`nls_webhook_admission_requests_total{${SELECT}, outcome="denied"}`, `${rate(`nls_webhook_admission_requests_total{${SELECT}}`)}`, 'kind') }],
    },
    { title: 'Admission latency p99 by kind', description: '99th percentile of answering one review; the API server gives up at the webhook timeout.', unit: 's', queries: [{ expr: p99('nls_webhook_admission_duration_seconds', 'kind') }] },
    {
      title: 'Webhook certificate expires in',
      description: 'Time left on the serving certificate each replica serves.',
      unit: 's',
      type: 'stat',
      queries: [{ expr: `min by (pod) (nls_webhook_certificate_expiry_timestamp_seconds{${SELECT}}) - time()` }],
    },
  ],
};
