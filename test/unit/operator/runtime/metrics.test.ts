import { Counter, Gauge, Histogram, Registry, operatorMetrics } from '../../../../src/operator/runtime/metrics';

describe('Prometheus text format', () => {
  it('renders counters, gauges and histograms with escaped labels', () => {
    const r = new Registry();
    const c = r.register(new Counter('x_total', 'Things.'));
    c.inc({ kind: 'A"b' });
    c.inc({ kind: 'A"b' }, 2);
    r.register(new Gauge('depth', 'Depth.')).set(5);
    const h = r.register(new Histogram('dur_seconds', 'Durations.', [0.1, 1]));
    h.observe(0.05);
    h.observe(0.5);
    h.observe(2);
    expect(r.render()).toBe(
      [
        '# HELP x_total Things.',
        '# TYPE x_total counter',
        'x_total{kind="A\\"b"} 3',
        '# HELP depth Depth.',
        '# TYPE depth gauge',
        'depth 5',
        '# HELP dur_seconds Durations.',
        '# TYPE dur_seconds histogram',
        'dur_seconds_bucket{le="0.1"} 1',
        'dur_seconds_bucket{le="1"} 2',
        'dur_seconds_bucket{le="+Inf"} 3',
        'dur_seconds_sum 2.55',
        'dur_seconds_count 3',
        '',
      ].join('\n'),
    );
  });

  it('defines the operator metrics the issue asks for', () => {
    const m = operatorMetrics();
    const text = m.registry.render();
    for (const name of ['nls_reconcile_total', 'nls_reconcile_errors_total', 'nls_reconcile_duration_seconds', 'nls_workqueue_depth', 'process_resident_memory_bytes']) {
      expect(text).toContain(`# TYPE ${name}`);
    }
  });
});
