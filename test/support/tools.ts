// Where the integration tests find their real programs: the cache that scripts/build-tools.sh
// fills from the pinned Go modules and npm packages. A missing program fails the run; it is
// never a reason to skip.
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

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
}

let cached: ToolPaths | undefined;

export function toolPaths(): ToolPaths {
  if (cached) return cached;
  const binDir = execFileSync('bash', [path.join(repoRoot, 'scripts', 'build-tools.sh'), '--print-dir'], {
    encoding: 'utf8',
  }).trim();
  const tools: ToolPaths = {
    binDir,
    kubeApiserver: path.join(binDir, 'kube-apiserver'),
    kubeControllerManager: path.join(binDir, 'kube-controller-manager'),
    kubeScheduler: path.join(binDir, 'kube-scheduler'),
    kubelet: path.join(binDir, 'kubelet'),
    kubeProxy: path.join(binDir, 'kube-proxy'),
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
  };
  const missing = Object.entries(tools)
    .filter(([key]) => key !== 'binDir')
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
