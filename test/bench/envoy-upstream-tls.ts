// Benchmark (`npm run bench -- envoy-upstream-tls`): the file watches each upstream TLS validation
// secret costs the proxy, for the data plane's layout at scale (docs/performance.md, eleventh
// round). Envoy Gateway renders each BackendTLSPolicy with `wellKnownCACertificates: System` as
// one secret named after the policy, delivered by xDS, whose trusted CA is the system trust bundle
// by file name; Envoy watches that file with one inotify instance per secret, and a node allows
// 128 per user by default. Envoy alone runs N TLS clusters two ways, side by side: each with its
// own secret (one policy per model, as shipped) and all sharing one (one policy for many
// Backends). Figures: the inotify instances it holds and its heap per cluster. The secrets come
// from files here, and each file source is watched too: one instance more per secret than under
// Envoy Gateway. dataplane-scale.ts measures the heap with static secrets (no watch).
import * as fs from 'node:fs';
import { envoyWithTlsClusters } from './support/envoy-tls-clusters';

const TRUST_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

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
  for (const [layout, shared] of [['distinct', false], ['shared', true]] as const) {
    const a = await envoyWithTlsClusters({ bundle: TRUST_BUNDLE, clusters: small, shared, sds: true });
    const b = await envoyWithTlsClusters({ bundle: TRUST_BUNDLE, clusters: large, shared, sds: true });
    figures[`${layout}: inotify instances at ${small} / ${large} clusters`] = `${a.inotify} / ${b.inotify}`;
    figures[`${layout}: inotify instances per cluster`] = (b.inotify - a.inotify) / (large - small);
    figures[`${layout}: heap allocated at ${small} / ${large} clusters, MiB`] = `${a.allocatedMiB.toFixed(1)} / ${b.allocatedMiB.toFixed(1)}`;
    figures[`${layout}: heap per cluster, MiB`] = (b.allocatedMiB - a.allocatedMiB) / (large - small);
  }
  figures['ratio heap per cluster, shared / distinct'] = (figures['shared: heap per cluster, MiB'] as number) / (figures['distinct: heap per cluster, MiB'] as number);
  return figures;
}
