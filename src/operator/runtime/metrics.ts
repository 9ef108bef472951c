// Prometheus metrics in the text exposition format (version 0.0.4), written here because the
// operator needs only counters, gauges and histograms with labels.

type Labels = Record<string, string>;

function labelKey(labels: Labels): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}="${String(labels[k]).replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')}"`)
    .join(',');
}

function fmt(n: number): string {
  if (n === Infinity) return '+Inf';
  if (n === -Infinity) return '-Inf';
  return Number.isNaN(n) ? 'NaN' : String(n);
}

interface Metric {
  readonly name: string;
  readonly help: string;
  render(): string;
}

export class Counter implements Metric {
  private readonly values = new Map<string, number>();
  constructor(readonly name: string, readonly help: string) {}
  inc(labels: Labels = {}, by = 1): void {
    const k = labelKey(labels);
    this.values.set(k, (this.values.get(k) ?? 0) + by);
  }
  get(labels: Labels = {}): number {
    return this.values.get(labelKey(labels)) ?? 0;
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const [k, v] of this.values) lines.push(`${this.name}${k ? `{${k}}` : ''} ${fmt(v)}`);
    return lines.join('\n');
  }
}

export class Gauge implements Metric {
  private readonly values = new Map<string, number>();
  constructor(readonly name: string, readonly help: string, private readonly collect?: () => number) {}
  set(value: number, labels: Labels = {}): void {
    this.values.set(labelKey(labels), value);
  }
  get(labels: Labels = {}): number {
    return this.values.get(labelKey(labels)) ?? 0;
  }
  render(): string {
    if (this.collect) this.set(this.collect());
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} gauge`];
    for (const [k, v] of this.values) lines.push(`${this.name}${k ? `{${k}}` : ''} ${fmt(v)}`);
    return lines.join('\n');
  }
}

export const defaultBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export class Histogram implements Metric {
  private readonly series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
  constructor(readonly name: string, readonly help: string, private readonly buckets: number[] = defaultBuckets) {}
  observe(value: number, labels: Labels = {}): void {
    const k = labelKey(labels);
    let s = this.series.get(k);
    if (!s) {
      s = { labels, counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.series.set(k, s);
    }
    this.buckets.forEach((b, i) => {
      if (value <= b) s!.counts[i]++;
    });
    s.sum += value;
    s.count++;
  }
  count(labels: Labels = {}): number {
    return this.series.get(labelKey(labels))?.count ?? 0;
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const s of this.series.values()) {
      this.buckets.forEach((b, i) => lines.push(`${this.name}_bucket{${labelKey({ ...s.labels, le: fmt(b) })}} ${s.counts[i]}`));
      lines.push(`${this.name}_bucket{${labelKey({ ...s.labels, le: '+Inf' })}} ${s.count}`);
      const k = labelKey(s.labels);
      lines.push(`${this.name}_sum${k ? `{${k}}` : ''} ${fmt(s.sum)}`);
      lines.push(`${this.name}_count${k ? `{${k}}` : ''} ${s.count}`);
    }
    return lines.join('\n');
  }
}

export class Registry {
  private readonly metrics: Metric[] = [];
  register<M extends Metric>(m: M): M {
    this.metrics.push(m);
    return m;
  }
  /** The whole registry in the Prometheus text format. */
  render(): string {
    return this.metrics.map((m) => m.render()).join('\n') + '\n';
  }
}

/** The operator's metrics, one registry per process. */
export function operatorMetrics(registry = new Registry()) {
  return {
    registry,
    reconcileTotal: registry.register(new Counter('nls_reconcile_total', 'Reconcile passes by kind and result (success, error, requeue).')),
    reconcileErrors: registry.register(new Counter('nls_reconcile_errors_total', 'Reconcile passes that ended in an error, by kind.')),
    reconcileDuration: registry.register(new Histogram('nls_reconcile_duration_seconds', 'Time spent in one reconcile pass, by kind.')),
    queueDepth: registry.register(new Gauge('nls_workqueue_depth', 'Keys waiting in the work queue, by kind.')),
    queueRetries: registry.register(new Counter('nls_workqueue_retries_total', 'Keys re-queued with backoff after an error, by kind.')),
    apiRequests: registry.register(new Counter('nls_api_requests_total', 'Requests to the Kubernetes API by method and status code.')),
    apiRequestDuration: registry.register(new Histogram('nls_api_request_duration_seconds', 'Kubernetes API request latency by method.')),
    apiRetries: registry.register(new Counter('nls_api_retries_total', 'Kubernetes API requests sent again after a transient failure, by method and reason.')),
    watchRestarts: registry.register(new Counter('nls_watch_restarts_total', 'Watch streams re-opened after an error, by kind and reason (gone, idle, error).')),
    isLeader: registry.register(new Gauge('nls_leader', '1 while this replica holds the leader Lease.')),
    residentMemory: registry.register(new Gauge('process_resident_memory_bytes', 'Resident memory size in bytes.', () => process.memoryUsage().rss)),
  };
}

export type OperatorMetrics = ReturnType<typeof operatorMetrics>;
