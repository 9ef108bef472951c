// Benchmark (`npm run bench -- envoy-upstream-tls`): what each upstream TLS validation secret
// costs the proxy, for the data plane's layout at scale (docs/performance.md, eleventh and twelfth
// rounds). Envoy Gateway renders each BackendTLSPolicy as one secret named after the policy,
// delivered by xDS: with `wellKnownCACertificates: System` its trusted CA is the system trust
// bundle by file name, which Envoy watches with one inotify instance per secret (a node allows 128
// per user by default); with `caCertificateRefs` to a ConfigMap (chart value
// platform.providerTLS.caConfigMap) the ConfigMap's certificates inline, watched by nobody. Envoy
// alone runs N TLS clusters three ways, side by side: the system bundle with a secret per cluster
// (one policy per model, as shipped by default) and with one secret for all (one policy for many
// Backends), and a small bundle inline with a secret per cluster (the ConfigMap). Figures: the
// inotify instances it holds and its heap per cluster. The secrets come from files here, and each
// file source is watched too: one instance more per secret than under Envoy Gateway, so the
// bundle's own watches per cluster are the figure less one for a secret each.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { envoyWithTlsClusters } from './support/envoy-tls-clusters';

const TRUST_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';
/** Roots in the ConfigMap layout's bundle: about what a handful of providers' chains need. */
const CONFIGMAP_ROOTS = 6;

/** The first `n` certificates of the system bundle, in a file of their own. */
function smallBundle(dir: string, n: number): string {
  const pems = fs.readFileSync(TRUST_BUNDLE, 'utf8').match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g) ?? [];
  if (pems.length < n) throw new Error(`${TRUST_BUNDLE} holds ${pems.length} certificates, fewer than ${n}`);
  const file = path.join(dir, 'provider-ca.crt');
  fs.writeFileSync(file, pems.slice(0, n).join(''));
  return file;
}

/**
 * `sizes`: cluster counts. The largest must keep the layout with a secret per cluster (two
 * instances each here) under the node's inotify limit, which the user's other processes share:
 * 40 clusters take 80 of 128.
 */
export async function run(sizes: number[] = [1, 40]): Promise<Record<string, number | string>> {
  if (!fs.existsSync(TRUST_BUNDLE)) throw new Error(`${TRUST_BUNDLE} is missing: install the ca-certificates package`);
  const [small, large] = [Math.min(...sizes), Math.max(...sizes)];
  const figures: Record<string, number | string> = {
    'trust bundle, KiB': fs.statSync(TRUST_BUNDLE).size / 1024,
    'node limit fs.inotify.max_user_instances': fs.readFileSync('/proc/sys/fs/inotify/max_user_instances', 'utf8').trim(),
  };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-bench-upstream-tls-'));
  try {
    const configMapBundle = smallBundle(dir, CONFIGMAP_ROOTS);
    figures['ConfigMap bundle: roots, KiB'] = `${CONFIGMAP_ROOTS}, ${(fs.statSync(configMapBundle).size / 1024).toFixed(1)}`;
    const layouts = [
      ['distinct', { bundle: TRUST_BUNDLE, shared: false }],
      ['shared', { bundle: TRUST_BUNDLE, shared: true }],
      ['ConfigMap', { bundle: configMapBundle, shared: false, inline: true }],
    ] as const;
    for (const [layout, o] of layouts) {
      const a = await envoyWithTlsClusters({ ...o, clusters: small, sds: true });
      const b = await envoyWithTlsClusters({ ...o, clusters: large, sds: true });
      figures[`${layout}: inotify instances at ${small} / ${large} clusters`] = `${a.inotify} / ${b.inotify}`;
      figures[`${layout}: inotify instances per cluster`] = (b.inotify - a.inotify) / (large - small);
      figures[`${layout}: heap allocated at ${small} / ${large} clusters, MiB`] = `${a.allocatedMiB.toFixed(1)} / ${b.allocatedMiB.toFixed(1)}`;
      figures[`${layout}: heap per cluster, MiB`] = (b.allocatedMiB - a.allocatedMiB) / (large - small);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const perCluster = (layout: string) => figures[`${layout}: heap per cluster, MiB`] as number;
  figures['ratio heap per cluster, shared / distinct'] = perCluster('shared') / perCluster('distinct');
  figures['ratio heap per cluster, ConfigMap / distinct'] = perCluster('ConfigMap') / perCluster('distinct');
  return figures;
}
