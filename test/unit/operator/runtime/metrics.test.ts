import { X509Certificate } from 'crypto';
import { observeAdmission, observeApiRequest, operatorMetrics } from '../../../../src/operator/runtime/metrics';
import { issueCertificateAuthority, issueServingCertificate } from '../../../../src/webhook/certificates';
import type { KubeObject } from '../../../../src/kube/rest';
import { startMetricsServer } from '../../../../src/operator/runtime/http-servers';

describe('operator metrics', () => {
  it('registers every nls_ metric and the default process and Node.js metrics', async () => {
    const text = await operatorMetrics().registry.metrics();
    for (const [name, type] of [
      ['nls_reconcile_total', 'counter'],
      ['nls_reconcile_errors_total', 'counter'],
      ['nls_reconcile_duration_seconds', 'histogram'],
      ['nls_workqueue_depth', 'gauge'],
      ['nls_workqueue_retries_total', 'counter'],
      ['nls_api_requests_total', 'counter'],
      ['nls_api_request_duration_seconds', 'histogram'],
      ['nls_watch_restarts_total', 'counter'],
      ['nls_leader', 'gauge'],
      ['nls_api_key_info', 'gauge'],
      ['nls_api_key_expiry_timestamp_seconds', 'gauge'],
      ['nls_webhook_admission_requests_total', 'counter'],
      ['nls_webhook_admission_duration_seconds', 'histogram'],
      ['nls_webhook_certificate_expiry_timestamp_seconds', 'gauge'],
      ['nls_model_ready', 'gauge'],
      ['process_resident_memory_bytes', 'gauge'],
      ['process_cpu_seconds_total', 'counter'],
      ['nodejs_eventloop_lag_seconds', 'gauge'],
      ['nodejs_heap_size_used_bytes', 'gauge'],
    ]) {
      expect(text).toContain(`# TYPE ${name} ${type}\n`);
    }
  });

  it('writes the label sets the integration tests and dashboards read', async () => {
    const m = operatorMetrics();
    m.isLeader.set(0);
    observeApiRequest(m, 'PATCH', 200, 0.03);
    observeApiRequest(m, 'PATCH', 200, 0.2);
    m.reconcileTotal.inc({ kind: 'PassthroughModel', result: 'success' });
    m.queueDepth.set({ kind: 'PassthroughModel' }, 3);
    m.reconcileDuration.observe({ kind: 'PassthroughModel' }, 0.04);
    const text = await m.registry.metrics();
    expect(text).toContain('\nnls_leader 0\n');
    expect(text).toContain('\nnls_api_requests_total{code="200",method="PATCH"} 2\n');
    expect(text).toContain('\nnls_api_request_duration_seconds_bucket{le="0.025",method="PATCH"} 0\n');
    expect(text).toContain('\nnls_api_request_duration_seconds_bucket{le="0.1",method="PATCH"} 1\n');
    expect(text).toContain('\nnls_api_request_duration_seconds_bucket{le="60",method="PATCH"} 2\n');
    expect(text).toContain('\nnls_api_request_duration_seconds_count{method="PATCH"} 2\n');
    expect(text).toContain('\nnls_reconcile_total{kind="PassthroughModel",result="success"} 1\n');
    expect(text).toContain('\nnls_workqueue_depth{kind="PassthroughModel"} 3\n');
    expect(text).toContain('\nnls_reconcile_duration_seconds_bucket{le="0.05",kind="PassthroughModel"} 1\n');
  });

  it('counts admission reviews by kind, operation and outcome, and times them by kind', async () => {
    const m = operatorMetrics();
    observeAdmission(m, 'LLMModel', 'CREATE', 'allowed', 0.004);
    observeAdmission(m, 'LLMModel', 'CREATE', 'error', 8);
    const text = await m.registry.metrics();
    expect(text).toContain('\nnls_webhook_admission_requests_total{kind="LLMModel",operation="CREATE",outcome="allowed"} 1\n');
    expect(text).toContain('\nnls_webhook_admission_requests_total{kind="LLMModel",operation="CREATE",outcome="error"} 1\n');
    expect(text).toContain('\nnls_webhook_admission_duration_seconds_bucket{le="0.005",kind="LLMModel"} 1\n');
    expect(text).toContain('\nnls_webhook_admission_duration_seconds_bucket{le="5",kind="LLMModel"} 1\n');
    expect(text).toContain('\nnls_webhook_admission_duration_seconds_bucket{le="10",kind="LLMModel"} 2\n');
  });

  it('reads the served certificate\'s expiry when scraped (0 before there is one)', async () => {
    const sources: { servedCertificate?: () => string | undefined } = {};
    const m = operatorMetrics(undefined, sources);
    expect(await m.registry.metrics()).toContain('\nnls_webhook_certificate_expiry_timestamp_seconds 0\n');
    const ca = issueCertificateAuthority({ commonName: 'metrics-test-ca' });
    const cert = issueServingCertificate({ ca, dnsNames: ['webhook.nls.svc'], validityMs: 3 * 86_400_000 });
    sources.servedCertificate = () => cert.certPem;
    const notAfter = Math.floor(new Date(new X509Certificate(cert.certPem).validTo).getTime() / 1000);
    expect(Math.abs(notAfter - (Date.now() / 1000 + 3 * 86_400))).toBeLessThan(600);
    expect(await m.registry.metrics()).toContain(`\nnls_webhook_certificate_expiry_timestamp_seconds ${notAfter}\n`);
  });

  it('describes the models in the leader\'s caches when scraped: 1 when Ready, 0 otherwise, none once they are gone or being deleted', async () => {
    let models: KubeObject[] = [
      { apiVersion: 'llm.nebari.dev/v1beta1', kind: 'PassthroughModel', metadata: { name: 'gpt', namespace: 'llm' }, status: { phase: 'Ready' } },
      { apiVersion: 'llm.nebari.dev/v1beta1', kind: 'LLMModel', metadata: { name: 'tiny', namespace: 'llm' }, status: { phase: 'Degraded' } },
      { apiVersion: 'llm.nebari.dev/v1beta1', kind: 'LLMModel', metadata: { name: 'new', namespace: 'llm' } },
      { apiVersion: 'llm.nebari.dev/v1beta1', kind: 'LLMModel', metadata: { name: 'leaving', namespace: 'llm', deletionTimestamp: '2026-01-01T00:00:00Z' }, status: { phase: 'Ready' } },
    ] as KubeObject[];
    const m = operatorMetrics(undefined, { models: () => models });
    const lines = async () => (await m.registry.metrics()).split('\n').filter((l) => l.startsWith('nls_model_ready{'));
    expect(await lines()).toEqual([
      'nls_model_ready{kind="PassthroughModel",model_namespace="llm",model="gpt"} 1',
      'nls_model_ready{kind="LLMModel",model_namespace="llm",model="tiny"} 0',
      'nls_model_ready{kind="LLMModel",model_namespace="llm",model="new"} 0',
    ]);
    models = [];
    expect(await lines()).toEqual([]);
  });

  it('gives each operator its own registry, so two in one process do not collide', async () => {
    const a = operatorMetrics();
    const b = operatorMetrics();
    a.isLeader.set(1);
    b.isLeader.set(0);
    expect(await a.registry.metrics()).toContain('\nnls_leader 1\n');
    expect(await b.registry.metrics()).toContain('\nnls_leader 0\n');
  });
});

describe('the /metrics endpoint', () => {
  it('serves the registry in the Prometheus text format, 404 elsewhere', async () => {
    const m = operatorMetrics();
    m.isLeader.set(1);
    const server = await startMetricsServer(m.registry, 0, '127.0.0.1');
    try {
      const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect(await res.text()).toContain('\nnls_leader 1\n');
      expect((await fetch(`http://127.0.0.1:${server.port}/other`)).status).toBe(404);
    } finally {
      await server.close();
    }
  });
});
