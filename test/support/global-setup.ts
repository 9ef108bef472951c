// Jest global setup of the integration project: starts one shared control plane (cluster mode
// by default; NLS_TEST_MODE=apiserver for a lighter one) and the OCI registry, and prints what
// runs so the output shows the suite used real components.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as k8s from '@kubernetes/client-node';
import { ControlPlane, ControlPlaneMode, startControlPlane } from './control-plane';
import { Registry, startRegistry } from './registry';
import { SharedState, stateVariable } from './state';
import { toolPaths } from './tools';
import { execFileSync } from 'child_process';

declare global {
  var __nlsControlPlane: ControlPlane | undefined;
  var __nlsRegistry: Registry | undefined;
  var __nlsHelmHome: string | undefined;
}

export default async function globalSetup(): Promise<void> {
  const started = Date.now();
  const tools = toolPaths();
  const mode = (process.env.NLS_TEST_MODE ?? 'cluster') as ControlPlaneMode;
  if (mode !== 'cluster' && mode !== 'apiserver') throw new Error(`NLS_TEST_MODE must be cluster or apiserver, not ${mode}`);
  const plane = await startControlPlane({ mode });
  globalThis.__nlsControlPlane = plane;
  const registry = await startRegistry(plane.dir);
  globalThis.__nlsRegistry = registry;
  const helmHome = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-helm-'));
  globalThis.__nlsHelmHome = helmHome;

  const version = await plane.kubeConfig().makeApiClient(k8s.VersionApi).getCode();
  const helmVersion = (bin: string) => execFileSync(bin, ['version', '--short'], { encoding: 'utf8' }).trim();
  // /proc/net/dev lists the interfaces of this process's network namespace.
  const network = fs.readFileSync('/proc/net/dev', 'utf8').split('\n').slice(2).map((l) => l.split(':')[0].trim()).filter(Boolean).join(',');
  console.log(
    `\nintegration control plane (${mode} mode) ready in ${((Date.now() - started) / 1000).toFixed(1)} s: ` +
      `kube-apiserver ${version.gitVersion} at ${plane.server}; OCI registry ${registry.address}; ` +
      `helm ${helmVersion(tools.helm3)} and ${helmVersion(tools.helm4)}; network interfaces: ${network}\n`,
  );

  const state: SharedState = {
    kubeconfigPath: plane.kubeconfigPath,
    server: plane.server,
    registryAddress: registry.address,
    mode,
    users: [...plane.users],
    helmHome,
  };
  process.env[stateVariable] = JSON.stringify(state);
  process.env.KUBECONFIG = plane.kubeconfigPath;
}
