// Where the integration tests find their real programs: the cache that scripts/build-tools.sh
// fills from the pinned Go modules and npm packages. A missing program fails the run; it is
// never a reason to skip.
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { KUBERNETES_MINORS, type KubernetesMinor, NEWEST_KUBERNETES_MINOR } from '../../src/kubernetes-versions';

export const repoRoot = path.resolve(__dirname, '..', '..');

export interface ToolPaths {
  readonly binDir: string;
  readonly kubeApiserver: string;
  readonly kubeControllerManager: string;
  readonly kubeScheduler: string;
  readonly kubelet: string;
  readonly kubeProxy: string;
  readonly etcd: string;
  readonly kwok: string;
  readonly kwokStagesDir: string;
  readonly registry: string;
  readonly crane: string;
  /** The release tools: cosign signs and verifies the image and chart; actionlint checks the workflows. */
  readonly cosign: string;
  readonly actionlint: string;
  /** Static programs from Debian packages, for the end-to-end suite's own images. */
  readonly catatonit: string;
  readonly busybox: string;
  readonly helm3: string;
  readonly helm4: string;
  /** The end-to-end suite's data plane: Envoy Gateway, the AI Gateway's controller and extproc, Envoy, the endpoint picker, CoreDNS, the rate-limit service. */
  readonly envoyGateway: string;
  readonly aigwController: string;
  readonly aigwExtproc: string;
  /** The AI Gateway's unpacked source, for its Helm charts. */
  readonly aiGatewaySource: string;
  readonly envoy: string;
  readonly epp: string;
  readonly coredns: string;
  readonly ratelimit: string;
  /** Prometheus and promtool (Debian's package, tools/prometheus-deb/deb.lock): the e2e suite's metrics store. */
  readonly prometheus: string;
  readonly promtool: string;
  /** The PrometheusRule CRD of the Prometheus Operator module tools/prometheus-operator-crds pins (downloaded, never committed). */
  readonly prometheusRuleCrd: string;
}

let cached: ToolPaths | undefined;

/**
 * The Kubernetes minor the run's programs are of: `NLS_KUBE_MINOR` (one of the claimed minors,
 * for the version matrix), else the newest, which tools/kube pins.
 */
export function kubeMinor(): KubernetesMinor {
  const minor = process.env.NLS_KUBE_MINOR ?? NEWEST_KUBERNETES_MINOR;
  if (!(KUBERNETES_MINORS as readonly string[]).includes(minor)) {
    throw new Error(`NLS_KUBE_MINOR=${minor} is not a Kubernetes minor this release claims (${KUBERNETES_MINORS.join(', ')})`);
  }
  return minor as KubernetesMinor;
}

/**
 * The Kubernetes programs of the run's minor: tools/kube builds the newest under plain names,
 * tools/kube-<minor> an older minor's API server as `kube-apiserver-<minor>` (the version matrix
 * runs in apiserver mode). A program an older minor does not build is missing, never taken from
 * another minor: versions are not mixed.
 */
function kubePrograms(binDir: string, minor: KubernetesMinor): { paths: Record<string, string>; required: string[] } {
  const suffix = minor === NEWEST_KUBERNETES_MINOR ? '' : `-${minor}`;
  const names = { kubeApiserver: 'kube-apiserver', kubeControllerManager: 'kube-controller-manager', kubeScheduler: 'kube-scheduler', kubelet: 'kubelet', kubeProxy: 'kube-proxy' };
  const paths = Object.fromEntries(Object.entries(names).map(([key, name]) => [key, path.join(binDir, `${name}${suffix}`)]));
  const required = suffix ? [paths.kubeApiserver] : Object.values(paths);
  return { paths, required };
}

export function toolPaths(): ToolPaths {
  if (cached) return cached;
  const binDir = execFileSync('bash', [path.join(repoRoot, 'scripts', 'build-tools.sh'), '--print-dir'], {
    encoding: 'utf8',
  }).trim();
  const kube = kubePrograms(binDir, kubeMinor());
  const tools: ToolPaths = {
    binDir,
    kubeApiserver: kube.paths.kubeApiserver,
    kubeControllerManager: kube.paths.kubeControllerManager,
    kubeScheduler: kube.paths.kubeScheduler,
    kubelet: kube.paths.kubelet,
    kubeProxy: kube.paths.kubeProxy,
    etcd: path.join(binDir, 'etcd'),
    kwok: path.join(binDir, 'kwok'),
    kwokStagesDir: path.join(binDir, '..', 'kwok-stages'),
    registry: path.join(binDir, 'registry'),
    crane: path.join(binDir, 'crane'),
    cosign: path.join(binDir, 'cosign'),
    actionlint: path.join(binDir, 'actionlint'),
    catatonit: path.join(binDir, 'catatonit'),
    busybox: path.join(binDir, 'busybox'),
    helm3: path.join(binDir, 'helm3'),
    helm4: path.join(binDir, 'helm4'),
    envoyGateway: path.join(binDir, 'envoy-gateway'),
    aigwController: path.join(binDir, 'aigw-controller'),
    aigwExtproc: path.join(binDir, 'aigw-extproc'),
    aiGatewaySource: path.join(binDir, '..', 'ai-gateway'),
    envoy: path.join(binDir, 'envoy'),
    epp: path.join(binDir, 'epp'),
    coredns: path.join(binDir, 'coredns'),
    ratelimit: path.join(binDir, 'ratelimit'),
    prometheus: path.join(binDir, 'prometheus'),
    promtool: path.join(binDir, 'promtool'),
    prometheusRuleCrd: path.join(binDir, '..', 'prometheus-operator-crds', 'monitoring.coreos.com_prometheusrules.yaml'),
  };
  const kubeKeys = Object.keys(kube.paths);
  const missing = Object.entries(tools)
    .filter(([key, file]) => key !== 'binDir' && (!kubeKeys.includes(key) || kube.required.includes(file)))
    .filter(([, file]) => !fs.existsSync(file))
    .map(([, file]) => file);
  if (missing.length > 0) {
    throw new Error(
      `integration test tools are missing: ${missing.join(', ')}.\n` +
        'Build them with `npm run tools` (needs Go; the first build takes many minutes) and ' +
        '`bash scripts/install-node-runtime.sh` (the real node\'s runtime and image programs).',
    );
  }
  cached = tools;
  return tools;
}
