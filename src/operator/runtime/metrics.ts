// The operator's Prometheus metrics (prom-client). Each operator process gets its own Registry,
// not prom-client's global one, so tests that start several operators in one process do not
// collide on metric names.
import { X509Certificate } from 'crypto';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { KubeObject } from '../../kube/rest';
import { API_KEY_EXPIRY_LABELS, API_KEY_INFO_LABELS } from '../../translate/keys/key-info';

// One reconcile pass is a few sequential API round trips (read, discovery, server-side apply of
// the generated objects, status): tens of milliseconds on a healthy cluster, seconds when the API
// server is slow, up to a minute when a request runs into its timeout.
const reconcileBuckets = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
// One API request (watches are not counted): a few ms for a read, more for writes that go
// through admission webhooks; 60 s is KubeRest's request timeout. client-go's buckets.
const apiRequestBuckets = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

// One admission review: a few ms for rules that only read the object, up to the handler's 8 s
// limit when cluster lookups are slow (the API server's webhook timeout is 10 s).
const admissionBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * What some gauges read when Prometheus scrapes, filled in once the parts exist: the models the
 * leader's informers hold (none on a standby) and the certificate the webhook server serves.
 */
export interface ScrapeSources {
  models?: () => readonly KubeObject[];
  servedCertificate?: () => string | undefined;
}

/** The operator's metrics plus the default process and Node.js metrics, in one registry. */
export function operatorMetrics(registry = new Registry(), sources: ScrapeSources = {}) {
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  return {
    sources,
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
    // Beside nls_api_key_info, for keys whose record has an expiry (the alert on keys expiring soon).
    apiKeyExpiry: new Gauge({
      name: 'nls_api_key_expiry_timestamp_seconds',
      help: 'When each live API key with an expiry expires (Unix seconds); keys that never expire have no series.',
      labelNames: API_KEY_EXPIRY_LABELS,
      registers,
    }),
    webhookAdmissions: new Counter({
      name: 'nls_webhook_admission_requests_total',
      help: 'Admission reviews answered, by kind, operation and outcome (allowed, denied, error: the handler failed or timed out).',
      labelNames: ['kind', 'operation', 'outcome'] as const,
      registers,
    }),
    webhookAdmissionDuration: new Histogram({
      name: 'nls_webhook_admission_duration_seconds',
      help: 'Time to answer one admission review, by kind.',
      labelNames: ['kind'] as const,
      buckets: admissionBuckets,
      registers,
    }),
    webhookCertificateExpiry: new Gauge({
      name: 'nls_webhook_certificate_expiry_timestamp_seconds',
      help: 'When the webhook serving certificate this replica serves expires (Unix seconds); 0 before it serves one.',
      registers,
      collect() {
        const pem = sources.servedCertificate?.();
        this.set(pem ? Math.floor(new Date(new X509Certificate(pem).validTo).getTime() / 1000) : 0);
      },
    }),
    // Read from the leader's informer caches at scrape time, so no reconcile path changes; a
    // standby exports no series (aggregate with max, as nls_api_key_info).
    modelReady: new Gauge({
      name: 'nls_model_ready',
      help: 'One series per model the leader reconciles: 1 while its status.phase is Ready, else 0.',
      labelNames: ['kind', 'model_namespace', 'model'] as const,
      registers,
      collect() {
        this.reset();
        for (const m of sources.models?.() ?? []) {
          if (m.metadata.deletionTimestamp) continue;
          const phase = (m.status as { phase?: string } | undefined)?.phase;
          this.set({ kind: m.kind, model_namespace: m.metadata.namespace ?? '', model: m.metadata.name }, phase === 'Ready' ? 1 : 0);
        }
      },
    }),
  };
}

export type OperatorMetrics = ReturnType<typeof operatorMetrics>;

/** Counts and times one admission review (the webhook server's observer). */
export function observeAdmission(metrics: OperatorMetrics, kind: string, operation: string, outcome: 'allowed' | 'denied' | 'error', seconds: number): void {
  metrics.webhookAdmissions.inc({ kind, operation, outcome });
  metrics.webhookAdmissionDuration.observe({ kind }, seconds);
}

/** Counts and times one Kubernetes API request (KubeRest's observer). */
export function observeApiRequest(metrics: OperatorMetrics, method: string, code: number, seconds: number): void {
  // prom-client writes labels in this object's order; code before method, sorted like the rest.
  metrics.apiRequests.inc({ code: String(code), method });
  metrics.apiRequestDuration.observe({ method }, seconds);
}
