// Jest global setup of the end-to-end project: a registry, the images, a control plane with one
// real node, the pinned upstream gateway CRDs, and this version's chart (plus a next version for
// the upgrade) pushed to the registry. Tests install from there, as users do.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parseDocument } from 'yaml';
import { version } from '../../../src/version';
import { ControlPlane, startControlPlane } from '../../support/control-plane';
import { installCRDs, upstreamCrdDir } from '../../support/cluster';
import { Registry, startRegistry } from '../../support/registry';
import { SharedState, stateVariable } from '../../support/state';
import { repoRoot, toolPaths } from '../../support/tools';
import { execFileSync } from 'child_process';
import { pushImages } from './images';
import { signArtifact, verifySignature } from '../../../scripts/release/cosign';
import { CHART_NAME, packageChart, pushChart, releaseRefs } from '../../../scripts/release/publish';
import { E2eState, e2eStateVariable, nextVersion } from './state';

declare global {
  var __nlsE2e: { plane?: ControlPlane; registry?: Registry; dir: string } | undefined;
}

function figure(started: number): string {
  return `${((Date.now() - started) / 1000).toFixed(1)} s`;
}

export default async function globalSetup(): Promise<void> {
  const started = Date.now();
  const tools = toolPaths();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-e2e-'));
  globalThis.__nlsE2e = { dir };
  const registry = await startRegistry(dir);
  globalThis.__nlsE2e.registry = registry;
  const images = pushImages(registry.address, version);
  const next = nextVersion(version);
  execFileSync(tools.crane, ['tag', `${images.operator.repository}:${version}`, next]);
  const imagesAt = Date.now();

  const plane = await startControlPlane({ mode: 'node', realNode: { registryHost: registry.address, pauseImage: images.pause }, keepFiles: !!process.env.NLS_E2E_KEEP });
  globalThis.__nlsE2e.plane = plane;
  const nodeAt = Date.now();
  const crd = (rel: string) => path.join(upstreamCrdDir(), rel);
  const kc = plane.kubeConfig();
  await installCRDs(
    [crd('gateway-api/v1.5.1/standard'), crd('envoy-gateway/v1.8.1'), crd('envoy-ai-gateway/v1.1.0'), crd('gateway-api-inference-extension/v1.0.2')],
    kc,
  );

  // This version's chart and the same chart as the next version, published the way
  // `npm run release` publishes (scripts/release/publish.ts: the operator image pinned by digest
  // in the packaged values), signed with a throw-away cosign key pair and verified before use.
  const helmHome = path.join(dir, 'helm');
  process.env.HELM_REGISTRY_CONFIG = path.join(helmHome, 'registry.json');
  process.env.HELM_CACHE_HOME = path.join(helmHome, 'cache');
  process.env.HELM_CONFIG_HOME = path.join(helmHome, 'config');
  process.env.COSIGN_PASSWORD = 'e2e';
  const refs = releaseRefs(`oci://${registry.address}/nebari`, true);
  const releaseTools = { crane: tools.crane, cosign: tools.cosign, helm3: tools.helm3, helm4: tools.helm4 };
  const key = path.join(dir, 'cosign');
  execFileSync(tools.cosign, ['generate-key-pair', '--output-key-prefix', key], { stdio: 'pipe' });
  const root = path.join(dir, 'chart-root');
  fs.cpSync(path.join(repoRoot, 'charts', CHART_NAME), path.join(root, CHART_NAME), { recursive: true });
  const publish = (v: string) => {
    const tgz = packageChart(releaseTools, path.join(root, CHART_NAME), refs, images.operator.digest, fs.mkdtempSync(path.join(dir, 'dist-')));
    const digest = pushChart(releaseTools, refs, tgz, v);
    signArtifact(releaseTools, refs, `${refs.chartArtifact}@${digest}`, { key: `${key}.key` });
    verifySignature(releaseTools, refs, `${refs.chartArtifact}@${digest}`, { key: `${key}.pub` });
  };
  signArtifact(releaseTools, refs, `${refs.imageRepository}@${images.operator.digest}`, { key: `${key}.key` });
  verifySignature(releaseTools, refs, `${refs.imageRepository}@${images.operator.digest}`, { key: `${key}.pub` });
  publish(version);
  const chartYaml = path.join(root, CHART_NAME, 'Chart.yaml');
  const chart = parseDocument(fs.readFileSync(chartYaml, 'utf8'));
  chart.set('version', next);
  chart.set('appVersion', next);
  fs.writeFileSync(chartYaml, chart.toString());
  publish(next);
  const chartRepo = refs.chartRepository;

  const shared: SharedState = {
    kubeconfigPath: plane.kubeconfigPath,
    server: plane.server,
    registryAddress: registry.address,
    mode: 'node',
    users: [...plane.users],
    helmHome,
  };
  const e2e: E2eState = { dir, chartRepo, images, version, next, auditLog: plane.auditLog!, nodeDir: plane.node!.dir, planeDir: plane.dir };
  process.env[stateVariable] = JSON.stringify(shared);
  process.env[e2eStateVariable] = JSON.stringify(e2e);
  process.env.KUBECONFIG = plane.kubeconfigPath;
  console.log(
    `\ne2e environment ready in ${figure(started)} (images pushed in ${((imagesAt - started) / 1000).toFixed(1)} s, ` +
      `node Ready ${((nodeAt - imagesAt) / 1000).toFixed(1)} s later): kube-apiserver at ${plane.server}, node ${plane.node!.name} ` +
      `(kubelet + containerd + kube-proxy), registry ${registry.address}, operator image ${images.operator.repository}@${images.operator.digest}\n`,
  );
}
