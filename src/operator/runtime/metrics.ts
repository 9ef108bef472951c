// The operator's Prometheus metrics (prom-client). Each operator process gets its own Registry,
// not prom-client's global one, so tests that start several operators in one process do not
// collide on metric names.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { API_KEY_INFO_LABELS } from '../../translate/keys/key-info';

// One reconcile pass is a few sequential API round trips (read, discovery, server-side apply of
// the generated objects, status): tens of milliseconds on a healthy cluster, seconds when the API
// server is slow, up to a minute when a request runs into its timeout.
const reconcileBuckets = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
// One API request (watches are not counted): a few ms for a read, more for writes that go
// through admission webhooks; 60 s is KubeRest's request timeout. client-go's buckets.
const apiRequestBuckets = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

/** The operator's metrics plus the default process and Node.js metrics, in one registry. */
export function operatorMetrics(registry = new Registry()) {
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  return {
    registry,
    reconcileTotal: new Counter({
      name: 'nls_reconcile_total',
      help: 'Reconcile passes by kind and result (success, error, requeue).',
      labelNames: ['kind', 'result'] as const,
      registers,
    }),
    reconcileErrors: new Counter({ name: 'nls_reconcile_errors_total', help: 'Reconcile passes that ended in an error, by kind.', labelNames: ['kind'] as const, registers }),
    reconcileDuration: new Histogram({
      name: 'nls_reconcile_duration_seconds',
      help: 'Time spent in one reconcile pass, by kind.',
      labelNames: ['kind'] as const,
      buckets: reconcileBuckets,
      registers,
    }),
    queueDepth: new Gauge({ name: 'nls_workqueue_depth', help: 'Keys waiting in the work queue, by kind.', labelNames: ['kind'] as const, registers }),
    queueRetries: new Counter({ name: 'nls_workqueue_retries_total', help: 'Keys re-queued with backoff after an error, by kind.', labelNames: ['kind'] as const, registers }),
    apiRequests: new Counter({
      name: 'nls_api_requests_total',
      help: 'Requests to the Kubernetes API by method and status code.',
      labelNames: ['code', 'method'] as const,
      registers,
    }),
    apiRequestDuration: new Histogram({
      name: 'nls_api_request_duration_seconds',
      help: 'Kubernetes API request latency by method.',
      labelNames: ['method'] as const,
      buckets: apiRequestBuckets,
      registers,
    }),
    apiRetries: new Counter({
      name: 'nls_api_retries_total',
      help: 'Kubernetes API requests sent again after a transient failure, by method and reason.',
      labelNames: ['method', 'reason'] as const,
      registers,
    }),
    watchRestarts: new Counter({
      name: 'nls_watch_restarts_total',
      help: 'Watch streams re-opened after an error, by kind and reason (gone, idle, error).',
      labelNames: ['kind', 'reason'] as const,
      registers,
    }),
    isLeader: new Gauge({ name: 'nls_leader', help: '1 while this replica holds the leader Lease.', registers }),
    // Set by the leader from the models' key records (src/operator/api-key-info.ts); standbys export none.
    apiKeyInfo: new Gauge({
      name: 'nls_api_key_info',
      help: 'One series (value 1) per live API key: its client ID with the owner, granting groups, tier, source and model from its key record, to join the gateway usage metrics with.',
      labelNames: API_KEY_INFO_LABELS,
      registers,
    }),
  };
}

export type OperatorMetrics = ReturnType<typeof operatorMetrics>;

/** Counts and times one Kubernetes API request (KubeRest's observer). */
export function observeApiRequest(metrics: OperatorMetrics, method: string, code: number, seconds: number): void {
  // prom-client writes labels in this object's order; code before method, sorted like the rest.
  metrics.apiRequests.inc({ code: String(code), method });
  metrics.apiRequestDuration.observe({ method }, seconds);
}
