// Plain-HTTP endpoints: Prometheus `/metrics` on one port, `/healthz` and `/readyz` on another
// (the ports the chart's probes and ServiceMonitor use).
import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface HealthChecks {
  /** The process is alive (event loop running, not shutting down badly). */
  healthy(): boolean;
  /** Ready to serve: informers synced (or standing by as a non-leader), webhook server up. */
  ready(): { ok: boolean; reason?: string };
}

function listen(server: http.Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}

export async function startMetricsServer(registry: Registry, port: number, host = '0.0.0.0'): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    if (req.url?.split('?')[0] === '/metrics') {
      registry.metrics().then(
        (text) => res.writeHead(200, { 'Content-Type': registry.contentType }).end(text),
        (err: unknown) => res.writeHead(500, { 'Content-Type': 'text/plain' }).end(`collecting metrics failed: ${String(err)}\n`),
      );
    } else {
      res.writeHead(404).end('not found\n');
    }
  });
  const bound = await listen(server, port, host);
  return { port: bound, close: () => new Promise((r) => server.close(() => r())) };
}

export async function startHealthServer(checks: HealthChecks, port: number, host = '0.0.0.0'): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const path = req.url?.split('?')[0];
    if (path === '/healthz' || path === '/livez') {
      const ok = checks.healthy();
      res.writeHead(ok ? 200 : 500, { 'Content-Type': 'text/plain' }).end(ok ? 'ok\n' : 'unhealthy\n');
    } else if (path === '/readyz') {
      const r = checks.ready();
      res.writeHead(r.ok ? 200 : 503, { 'Content-Type': 'text/plain' }).end(r.ok ? 'ok\n' : `not ready: ${r.reason ?? ''}\n`);
    } else {
      res.writeHead(404).end('not found\n');
    }
  });
  const bound = await listen(server, port, host);
  return { port: bound, close: () => new Promise((r) => server.close(() => r())) };
}
