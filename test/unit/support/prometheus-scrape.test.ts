// The e2e suite's derivation of scrape jobs from ServiceMonitor and PodMonitor objects
// (test/e2e/support/prometheus.ts): what a monitor selects (namespaces, labels, port name), its
// path and interval, and the Operator's job label; fields it does not derive fail loudly instead
// of being ignored. (The targets it resolves are proven in test/e2e/observability.test.ts.)
import type { KubeObject } from '../../../src/kube/rest';
import { monitorScrapeJobs } from '../../e2e/support/prometheus';

const serviceMonitor = (spec: object): KubeObject => ({ apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor', metadata: { name: 'op', namespace: 'nls' }, spec } as KubeObject);

describe('monitorScrapeJobs', () => {
  it('turns each ServiceMonitor endpoint into a job selecting Services by labels, namespaces and port name', () => {
    expect(monitorScrapeJobs(serviceMonitor({
      selector: { matchLabels: { 'app.kubernetes.io/component': 'operator' } },
      namespaceSelector: { matchNames: ['nls', 'other'] },
      endpoints: [{ port: 'metrics', path: '/metrics', interval: '2s' }, { port: 'web', scheme: 'https' }],
    }))).toEqual([
      { jobName: 'serviceMonitor/nls/op/0', interval: '2s', metricsPath: '/metrics', role: 'endpoints', namespaces: ['nls', 'other'], matchLabels: { 'app.kubernetes.io/component': 'operator' }, port: 'metrics' },
      { jobName: 'serviceMonitor/nls/op/1', metricsPath: '/metrics', scheme: 'https', role: 'endpoints', namespaces: ['nls', 'other'], matchLabels: { 'app.kubernetes.io/component': 'operator' }, port: 'web' },
    ]);
  });

  it('looks in the monitor\'s own namespace by default and in every namespace with any: true', () => {
    expect(monitorScrapeJobs(serviceMonitor({ endpoints: [{ port: 'm' }] }))[0].namespaces).toEqual(['nls']);
    expect(monitorScrapeJobs(serviceMonitor({ namespaceSelector: { any: true }, endpoints: [{ port: 'm' }] }))[0].namespaces).toBeUndefined();
  });

  it('turns a PodMonitor into a job on pods\' container port name, its job label the monitor\'s namespace/name', () => {
    const [job] = monitorScrapeJobs({ ...serviceMonitor({ selector: { matchLabels: { app: 'x' } }, podMetricsEndpoints: [{ port: 'admin' }] }), kind: 'PodMonitor' });
    expect(job).toEqual({ jobName: 'podMonitor/nls/op/0', metricsPath: '/metrics', role: 'pod', namespaces: ['nls'], matchLabels: { app: 'x' }, port: 'admin', jobLabel: 'nls/op' });
  });

  it('refuses what it does not derive, naming the monitor and the field', () => {
    expect(() => monitorScrapeJobs(serviceMonitor({ selector: { matchExpressions: [{ key: 'a', operator: 'Exists' }] }, endpoints: [{ port: 'm' }] })))
      .toThrow('ServiceMonitor nls/op: spec.selector.matchExpressions is not derived');
    expect(() => monitorScrapeJobs(serviceMonitor({ endpoints: [{ port: 'm', tlsConfig: {} }] }))).toThrow('ServiceMonitor nls/op: endpoint 0 field(s) tlsConfig');
    expect(() => monitorScrapeJobs(serviceMonitor({ endpoints: [{ targetPort: 8080 }] }))).toThrow('endpoint 0 field(s) targetPort');
  });
});
