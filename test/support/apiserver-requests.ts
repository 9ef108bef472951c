// Counting the requests the API server served, from its own Prometheus metrics
// (`apiserver_request_total`, read from /metrics with the admin identity): a snapshot before and
// after a phase, diffed, gives how many requests of each verb and resource the phase cost. The
// counter has no user label, so a phase must run alone (the benchmark's own polls are counted
// too and subtracted by the caller, who knows how many it made).
import type { KubeRest } from '../../src/kube/rest';

/** `VERB resource[/subresource]` → requests served (every status code). */
export type RequestCounts = Map<string, number>;

const sampleLine = /^apiserver_request_total\{([^}]*)\} (\S+)$/;
const label = (labels: string, name: string) => new RegExp(`(?:^|,)${name}="([^"]*)"`).exec(labels)?.[1] ?? '';

/** Parses the Prometheus text exposition into counts by verb and resource. */
export function parseRequestCounts(metrics: string): RequestCounts {
  const counts: RequestCounts = new Map();
  for (const line of metrics.split('\n')) {
    const m = sampleLine.exec(line);
    if (!m) continue;
    const sub = label(m[1], 'subresource');
    const key = `${label(m[1], 'verb')} ${label(m[1], 'resource')}${sub ? `/${sub}` : ''}`;
    counts.set(key, (counts.get(key) ?? 0) + Number(m[2]));
  }
  return counts;
}

/** The API server's counters now. */
export async function requestCounts(client: KubeRest): Promise<RequestCounts> {
  return parseRequestCounts(await metricsText(client));
}

/** The API server's /metrics (text, so read raw, not through request()). */
function metricsText(client: KubeRest): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    client
      .open('GET', '/metrics', { headers: { accept: 'text/plain' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => (res.statusCode === 200 ? resolve(Buffer.concat(chunks).toString('utf8')) : reject(new Error(`GET /metrics: HTTP ${res.statusCode}`))));
        res.on('error', reject);
      })
      .then((req) => req.on('error', reject), reject);
  });
}

/** after − before, without the keys that did not move. */
export function diffCounts(before: RequestCounts, after: RequestCounts): RequestCounts {
  const out: RequestCounts = new Map();
  for (const [key, n] of after) {
    const d = n - (before.get(key) ?? 0);
    if (d > 0) out.set(key, d);
  }
  return out;
}

export const totalOf = (counts: RequestCounts) => [...counts.values()].reduce((a, b) => a + b, 0);

/** `VERB resource n/model, …` sorted by count, for the benchmark's printout. */
export function perModel(counts: RequestCounts, models: number): string {
  return [...counts].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${(n / models).toFixed(2)}`).join(', ');
}

/** Watches the API server holds open now, by resource (`apiserver_longrunning_requests`, verb WATCH). */
export async function openWatches(client: KubeRest): Promise<Map<string, number>> {
  const text = await metricsText(client);
  const watches = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^apiserver_longrunning_requests\{([^}]*)\} (\S+)$/.exec(line);
    if (!m || label(m[1], 'verb') !== 'WATCH') continue;
    const resource = label(m[1], 'resource');
    watches.set(resource, (watches.get(resource) ?? 0) + Number(m[2]));
  }
  return watches;
}
