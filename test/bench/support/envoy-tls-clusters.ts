// Envoy alone (the proxies' binary, a static bootstrap) with upstream TLS clusters verified
// against a CA bundle, by file name or inline, each cluster with its own validation secret (what
// Envoy Gateway renders per BackendTLSPolicy) or all sharing one. Nothing connects: the clusters point at loopback and no
// request is sent. Used by dataplane-scale.ts (the heap per cluster) and envoy-upstream-tls.ts
// (the file watches per secret).
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { waitFor } from '../../support/processes';
import { toolPaths } from '../../support/tools';

export interface TlsClusters {
  /** The CA bundle file the secrets name. */
  readonly bundle: string;
  readonly clusters: number;
  /** One secret for every cluster, instead of one each. */
  readonly shared: boolean;
  /**
   * Deliver the secrets by SDS (from files: a path config source each), as Envoy Gateway's xDS
   * delivers them, so Envoy watches the bundle file; else they are static (no watch). Each file
   * source adds one watch of its own.
   */
  readonly sds?: boolean;
  /** The bundle's certificates in the secret itself (as Envoy Gateway sends a ConfigMap's), not its file name: nothing to watch. */
  readonly inline?: boolean;
}

/** Envoy's heap (allocated, MiB) and the inotify instances it holds once it is live. */
export async function envoyWithTlsClusters(o: TlsClusters): Promise<{ allocatedMiB: number; inotify: number }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-bench-tls-clusters-'));
  let envoy: ChildProcess | undefined;
  try {
    const secretName = (i: number) => (o.shared ? 'system-ca' : `system-ca-${i}`);
    const secrets = Array.from({ length: o.shared ? 1 : o.clusters }, (_, i) => ({ name: secretName(i), validation_context: { trusted_ca: o.inline ? { inline_bytes: fs.readFileSync(o.bundle).toString('base64') } : { filename: o.bundle } } }));
    const sdsFile = (name: string) => path.join(dir, `${name}.json`);
    for (const s of o.sds ? secrets : []) {
      fs.writeFileSync(sdsFile(s.name), JSON.stringify({ resources: [{ '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret', ...s }] }));
    }
    const secretConfig = (i: number) =>
      o.sds ? { name: secretName(i), sds_config: { resource_api_version: 'V3', path_config_source: { path: sdsFile(secretName(i)) } } } : { name: secretName(i) };
    const config = {
      // SDS needs a node identity.
      node: { id: 'bench', cluster: 'bench' },
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: {
        ...(o.sds ? {} : { secrets }),
        clusters: Array.from({ length: o.clusters }, (_, i) => ({
          name: `provider-${i}`, type: 'STATIC', connect_timeout: '5s',
          load_assignment: { cluster_name: `provider-${i}`, endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: 9 } } } }] }] },
          transport_socket: { name: 'tls', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext', sni: 'provider.example', common_tls_context: { validation_context_sds_secret_config: secretConfig(i) } } },
        })),
      },
    };
    fs.writeFileSync(path.join(dir, 'envoy.json'), JSON.stringify(config));
    const addressFile = path.join(dir, 'admin-address');
    let log = '';
    const child = spawn(toolPaths().envoy, ['-c', path.join(dir, 'envoy.json'), '--concurrency', '1', '--log-level', 'error', '--disable-hot-restart', '--admin-address-path', addressFile], { stdio: ['ignore', 'pipe', 'pipe'] });
    envoy = child;
    child.stdout?.on('data', (d: Buffer) => (log += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (log += d.toString()));
    const admin = async (p: string) => {
      if (child.exitCode !== null) throw new Error(`Envoy with ${o.clusters} TLS clusters exited (${child.exitCode}): ${log.slice(-600)}`);
      const address = fs.existsSync(addressFile) ? fs.readFileSync(addressFile, 'utf8').trim() : '';
      const response = address ? await fetch(`http://${address}${p}`).catch(() => undefined) : undefined;
      return response?.ok ? response.text() : undefined;
    };
    await waitFor(`Envoy alone with ${o.clusters} TLS clusters live`, async () => (await admin('/ready'))?.trim() === 'LIVE', { timeoutMs: 120_000, intervalMs: 200 });
    const memory = JSON.parse((await admin('/memory'))!) as { allocated: string };
    return { allocatedMiB: Number(memory.allocated) / 2 ** 20, inotify: inotifyInstances(child.pid!) };
  } finally {
    if (envoy && envoy.exitCode === null) {
      const exited = new Promise((r) => envoy!.once('exit', r));
      envoy.kill('SIGTERM');
      await exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** inotify instances a process holds. */
function inotifyInstances(pid: number): number {
  return fs.readdirSync(`/proc/${pid}/fd`).filter((fd) => {
    try {
      return fs.readlinkSync(`/proc/${pid}/fd/${fd}`) === 'anon_inode:inotify';
    } catch {
      return false; // closed meanwhile
    }
  }).length;
}
