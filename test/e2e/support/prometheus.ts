// A real Prometheus for the end-to-end suite (Debian's package, pinned in
// tools/prometheus-deb/deb.lock), listening on 127.0.0.1 of the run's network namespace, or on the
// node address there when pods must read it (the key portal's usage page).
//
// What it scrapes is derived here from the chart's ServiceMonitor and PodMonitor objects as the
// API server stores them: each monitor endpoint becomes one scrape job (its path, interval and
// scheme) whose targets are what the monitor selects (namespaces, selector labels, port name),
// with the target labels the Prometheus Operator gives (namespace, service, pod, container,
// endpoint, job). No Prometheus Operator runs. Debian builds Prometheus without Kubernetes service
// discovery, so the suite resolves the targets itself (Services' EndpointSlices, or pods) and
// hands them over as file-based discovery, written again by `refreshTargets()`. A monitor field
// this derivation does not understand fails the test instead of being ignored. Beside the
// monitors, the data plane's own metrics: the Envoy proxies' stats and the AI Gateway extproc
// sidecars.
import * as fs from 'fs';
import * as path from 'path';
import { stringify } from 'yaml';
import type { KubeObject, KubeRest } from '../../../src/kube/rest';
import { freePort, type ManagedProcess, startProcess, waitFor } from '../../support/processes';
import { toolPaths } from '../../support/tools';

/** What one scrape job selects, derived from a monitor endpoint (pure, so it is unit-tested). */
export interface ScrapeJob {
  readonly jobName: string;
  readonly interval?: string;
  readonly metricsPath: string;
  readonly scheme?: string;
  /** `endpoints`: the ready addresses of selected Services; `pod`: selected pods' container ports. */
  readonly role: 'endpoints' | 'pod';
  /** Namespaces to look in; undefined means every namespace. */
  readonly namespaces?: readonly string[];
  readonly matchLabels: Readonly<Record<string, string>>;
  /** The port name a target must have (Service port for `endpoints`, container port for `pod`). */
  readonly port: string;
  /** A fixed `job` label; without one, the Service's name (the Operator's default). */
  readonly jobLabel?: string;
}

interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: unknown[];
}
interface MonitorSpec {
  selector?: LabelSelector;
  namespaceSelector?: { any?: boolean; matchNames?: string[] };
  endpoints?: Record<string, unknown>[];
  podMetricsEndpoints?: Record<string, unknown>[];
}

const UNDERSTOOD_ENDPOINT_FIELDS = new Set(['port', 'path', 'interval', 'scheme']);

/** The scrape jobs the Prometheus Operator would make of one ServiceMonitor or PodMonitor. */
export function monitorScrapeJobs(monitor: KubeObject): ScrapeJob[] {
  const spec = (monitor as KubeObject & { spec: MonitorSpec }).spec;
  const { name, namespace } = monitor.metadata;
  const who = `${monitor.kind} ${namespace}/${name}`;
  const onPods = monitor.kind === 'PodMonitor';
  if (spec.selector?.matchExpressions?.length) throw new Error(`${who}: spec.selector.matchExpressions is not derived by test/e2e/support/prometheus.ts; extend it`);
  const endpoints = (onPods ? spec.podMetricsEndpoints : spec.endpoints) ?? [];
  return endpoints.map((endpoint, i) => {
    const unknown = Object.keys(endpoint).filter((f) => !UNDERSTOOD_ENDPOINT_FIELDS.has(f));
    if (unknown.length) throw new Error(`${who}: endpoint ${i} field(s) ${unknown.join(', ')} are not derived by test/e2e/support/prometheus.ts; extend it`);
    if (typeof endpoint.port !== 'string') throw new Error(`${who}: endpoint ${i} names no port; only named ports are derived`);
    return {
      jobName: `${onPods ? 'podMonitor' : 'serviceMonitor'}/${namespace}/${name}/${i}`,
      ...(typeof endpoint.interval === 'string' ? { interval: endpoint.interval } : {}),
      metricsPath: typeof endpoint.path === 'string' ? endpoint.path : '/metrics',
      ...(typeof endpoint.scheme === 'string' ? { scheme: endpoint.scheme } : {}),
      role: onPods ? 'pod' : 'endpoints',
      ...(spec.namespaceSelector?.any ? {} : { namespaces: spec.namespaceSelector?.matchNames ?? [namespace!] }),
      matchLabels: spec.selector?.matchLabels ?? {},
      port: endpoint.port,
      // The Operator's job label: the Service's name, or the PodMonitor's namespace/name.
      ...(onPods ? { jobLabel: `${namespace}/${name}` } : {}),
    };
  });
}

/**
 * The data plane's pods, by container port name: Envoy's stats listener in the proxy pods Envoy
 * Gateway creates (`metrics`, Prometheus text at /stats/prometheus) and the extproc sidecar's
 * admin port (`aigw-admin`, /metrics), where the GenAI token and latency metrics are.
 */
export function dataPlaneScrapeJobs(namespace: string, interval: string): ScrapeJob[] {
  const job = (name: string, port: string, metricsPath: string): ScrapeJob => ({
    jobName: name, interval, metricsPath, role: 'pod', namespaces: [namespace], matchLabels: { 'app.kubernetes.io/component': 'proxy' }, port, jobLabel: name,
  });
  return [job('envoy', 'metrics', '/stats/prometheus'), job('aigw-extproc', 'aigw-admin', '/metrics')];
}

interface TargetGroup {
  targets: string[];
  labels: Record<string, string>;
}
interface EndpointSlice extends KubeObject {
  ports?: { name?: string; port?: number }[];
  endpoints?: { addresses: string[]; conditions?: { ready?: boolean }; targetRef?: { kind?: string; name?: string } }[];
}
interface PodContainer {
  name: string;
  ports?: { name?: string; containerPort: number }[];
}
interface PodObject extends KubeObject {
  spec: { containers: PodContainer[]; initContainers?: PodContainer[] };
  status?: { podIP?: string; phase?: string };
}

const selectorOf = (labels: Readonly<Record<string, string>>) => Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(',');

/** The targets a job selects now, read from the API server. */
export async function resolveTargets(client: KubeRest, job: ScrapeJob): Promise<TargetGroup[]> {
  const namespaces = job.namespaces ?? [undefined];
  const groups: TargetGroup[] = [];
  for (const namespace of namespaces) {
    if (job.role === 'pod') {
      const pods = (await client.list<PodObject>('v1', 'Pod', { namespace, labelSelector: selectorOf(job.matchLabels) })).items;
      for (const pod of pods) {
        if (!pod.status?.podIP || pod.status.phase !== 'Running') continue;
        // Init containers too: the AI Gateway injects extproc as a native sidecar (an init container that keeps running).
        for (const container of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) {
          for (const port of container.ports ?? []) {
            if (port.name !== job.port) continue;
            groups.push({
              targets: [`${pod.status.podIP}:${port.containerPort}`],
              labels: { namespace: pod.metadata.namespace!, pod: pod.metadata.name, container: container.name, endpoint: job.port, job: job.jobLabel ?? '' },
            });
          }
        }
      }
      continue;
    }
    const services = (await client.list('v1', 'Service', { namespace, labelSelector: selectorOf(job.matchLabels) })).items;
    for (const service of services) {
      const slices = (await client.list<EndpointSlice>('discovery.k8s.io/v1', 'EndpointSlice', { namespace: service.metadata.namespace, labelSelector: `kubernetes.io/service-name=${service.metadata.name}` })).items;
      for (const slice of slices) {
        const port = slice.ports?.find((p) => p.name === job.port)?.port;
        if (!port) continue;
        for (const endpoint of slice.endpoints ?? []) {
          if (endpoint.conditions?.ready === false) continue;
          groups.push({
            targets: endpoint.addresses.map((a) => `${a}:${port}`),
            labels: {
              namespace: service.metadata.namespace!, service: service.metadata.name, endpoint: job.port, job: job.jobLabel ?? service.metadata.name,
              ...(endpoint.targetRef?.kind === 'Pod' && endpoint.targetRef.name ? { pod: endpoint.targetRef.name } : {}),
            },
          });
        }
      }
    }
  }
  return groups;
}

export interface PrometheusAlert {
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
  readonly state: 'pending' | 'firing';
  readonly value: string;
}

export interface Prometheus {
  readonly url: string;
  readonly process: ManagedProcess;
  /** An instant query's samples: labels and value. */
  query(promql: string): Promise<{ metric: Record<string, string>; value: number }[]>;
  /** Every metric name Prometheus holds. */
  metricNames(): Promise<string[]>;
  /** The alerts of its rule files now, pending or firing (`/api/v1/alerts`). */
  alerts(): Promise<PrometheusAlert[]>;
  /** Resolves every job's targets again (pods may have been replaced) and hands them to Prometheus. */
  refreshTargets(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts Prometheus scraping `jobs` (targets resolved through `client`) and waits until it is ready.
 * It listens on `listen` (host:port) when given, e.g. the node address for pods to read it (the key
 * portal's usage page); otherwise on a free port of 127.0.0.1.
 */
export async function startPrometheus(dir: string, client: KubeRest, jobs: ScrapeJob[], ruleFiles: string[] = [], listen?: string): Promise<Prometheus> {
  fs.mkdirSync(dir, { recursive: true });
  const targetsFile = (job: ScrapeJob) => path.join(dir, `targets-${job.jobName.replace(/[^a-zA-Z0-9-]/g, '_')}.json`);
  const refreshTargets = async () => {
    for (const job of jobs) {
      const file = targetsFile(job);
      // Written whole and renamed, so Prometheus never reads half a file.
      fs.writeFileSync(`${file}.tmp`, JSON.stringify(await resolveTargets(client, job)));
      fs.renameSync(`${file}.tmp`, file);
    }
  };
  await refreshTargets();
  const configFile = path.join(dir, 'prometheus.yml');
  fs.writeFileSync(configFile, stringify({
    // A monitor without an interval (an LLMModel's PodMonitor) is scraped at the global interval,
    // as the Prometheus Operator gives it its Prometheus's scrapeInterval: short here, like the rest.
    global: { scrape_interval: '2s', evaluation_interval: '2s' },
    rule_files: ruleFiles,
    scrape_configs: jobs.map((job) => ({
      job_name: job.jobName,
      ...(job.interval ? { scrape_interval: job.interval } : {}),
      metrics_path: job.metricsPath,
      ...(job.scheme ? { scheme: job.scheme } : {}),
      file_sd_configs: [{ files: [targetsFile(job)], refresh_interval: '5s' }],
    })),
  }));
  const address = listen ?? `127.0.0.1:${await freePort()}`;
  const proc = startProcess('prometheus', toolPaths().prometheus, [
    `--config.file=${configFile}`, `--storage.tsdb.path=${path.join(dir, 'data')}`, `--web.listen-address=${address}`,
  ], { logDir: dir });
  const url = `http://${address}`;
  await waitFor('prometheus ready', async () => (await fetch(`${url}/-/ready`)).ok, { timeoutMs: 30000, process: proc });
  const api = async <T>(p: string): Promise<T> => {
    const res = await fetch(`${url}${p}`);
    const body = (await res.json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new Error(`prometheus ${p}: ${body.error ?? res.status}`);
    return body.data;
  };
  return {
    url,
    process: proc,
    query: async (promql) => {
      const data = await api<{ result: { metric: Record<string, string>; value: [number, string] }[] }>(`/api/v1/query?query=${encodeURIComponent(promql)}`);
      return data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
    },
    metricNames: () => api<string[]>('/api/v1/label/__name__/values'),
    alerts: async () => (await api<{ alerts: PrometheusAlert[] }>('/api/v1/alerts')).alerts,
    refreshTargets,
    stop: () => proc.stop(),
  };
}
