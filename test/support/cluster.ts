// The helper API integration tests use against the shared control plane started by global
// setup: a KubeConfig, server-side apply/get/delete, CRD installation, helm and the registry.
import * as k8s from '@kubernetes/client-node';
import { execFile } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { parseAllDocuments } from 'yaml';
import { CRD_NAMES } from '../../src/api/kinds';
import { KubeRest, type ObjectRef } from '../../src/kube/rest';
import { waitFor } from './processes';
import { readSharedState } from './state';
import { toolPaths } from './tools';

export { startControlPlane } from './control-plane';
export type { ControlPlane } from './control-plane';

export type { ObjectRef } from '../../src/kube/rest';
/** The released upstream CRDs, read in place (never copied into the project). */
export { upstreamCrdDir } from '../../scripts/import-crds';

export const testFieldManager = 'nebari-llm-serving-tests';

export function kubeconfigPath(): string {
  return readSharedState().kubeconfigPath;
}

export function kubeConfig(): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfigPath());
  return kc;
}

/** A KubeConfig for a user with no RBAC grants (`alice` or `bob`). */
export function userKubeConfig(name: string): k8s.KubeConfig {
  const user = readSharedState().users.find((u) => u.name === name);
  if (!user) throw new Error(`no test user ${name}`);
  const kc = kubeConfig();
  const cluster = kc.getCurrentCluster()!;
  const out = new k8s.KubeConfig();
  out.loadFromOptions({
    clusters: [cluster],
    users: [{ name, token: user.token }],
    contexts: [{ name, cluster: cluster.name, user: name }],
    currentContext: name,
  });
  return out;
}

export function registryAddress(): string {
  return readSharedState().registryAddress;
}

const clients = new Map<k8s.KubeConfig | undefined, KubeRest>();

/** The raw-JSON client for a KubeConfig (the shared admin one by default). */
export function rest(kc?: k8s.KubeConfig): KubeRest {
  let client = clients.get(kc);
  if (!client) {
    client = new KubeRest(kc ?? kubeConfig());
    clients.set(kc, client);
  }
  return client;
}

/** Server-side apply (raw JSON, nothing dropped on the way); returns the object as stored. */
export async function applyObject<T = any>( // eslint-disable-line @typescript-eslint/no-explicit-any
  obj: object,
  opts: { fieldManager?: string; force?: boolean; dryRun?: boolean; kubeConfig?: k8s.KubeConfig } = {},
): Promise<T> {
  return (await rest(opts.kubeConfig).apply(obj as ObjectRef, {
    fieldManager: opts.fieldManager ?? testFieldManager,
    force: opts.force ?? true,
    dryRun: opts.dryRun,
  })) as T;
}

/** Reads an object; undefined when it does not exist. */
export async function getObject<T = any>(ref: ObjectRef, kc?: k8s.KubeConfig): Promise<T | undefined> { // eslint-disable-line @typescript-eslint/no-explicit-any
  return (await rest(kc).get(ref)) as T | undefined;
}

/** Deletes an object; a missing object is not an error. */
export async function deleteObject(ref: ObjectRef, kc?: k8s.KubeConfig): Promise<void> {
  await rest(kc).delete(ref);
}

export async function createNamespace(name: string, labels: Record<string, string> = {}): Promise<void> {
  await applyObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
}

/** The YAML documents of a file, or of every .yaml/.yml file in a directory (sorted). */
export function readManifests(fileOrDir: string): k8s.KubernetesObject[] {
  const files = fs.statSync(fileOrDir).isDirectory()
    ? fs.readdirSync(fileOrDir).filter((f) => /\.ya?ml$/.test(f)).sort().map((f) => path.join(fileOrDir, f))
    : [fileOrDir];
  return files.flatMap((file) =>
    parseAllDocuments(fs.readFileSync(file, 'utf8'))
      .map((doc) => doc.toJS() as k8s.KubernetesObject | null)
      .filter((obj): obj is k8s.KubernetesObject => !!obj && typeof obj === 'object' && 'kind' in obj),
  );
}

/** Applies CRDs server-side (they are too large for client-side apply) and waits for Established. */
export async function installCRDs(paths: string[], kc?: k8s.KubeConfig): Promise<string[]> {
  const crds = paths.flatMap(readManifests).filter((o) => o.kind === 'CustomResourceDefinition');
  if (crds.length === 0) throw new Error(`no CustomResourceDefinition in ${paths.join(', ')}`);
  for (const crd of crds) await applyObject(crd, { kubeConfig: kc });
  const api = (kc ?? kubeConfig()).makeApiClient(k8s.ApiextensionsV1Api);
  const names = crds.map((c) => c.metadata!.name!);
  for (const name of names) {
    await waitFor(`CRD ${name} Established`, async () => {
      const crd = await api.readCustomResourceDefinition({ name });
      return !!crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
    }, { timeoutMs: 60000 });
  }
  // Established comes before discovery lists the kind (the API server updates discovery on its
  // own loop), and a client resolves the kind through discovery: wait for every served version
  // (asking the shared client, so its discovery cache is fresh too).
  const discovery = rest(kc);
  for (const crd of crds) {
    const spec = (crd as unknown as { spec: { group: string; names: { kind: string }; versions: { name: string; served: boolean }[] } }).spec;
    for (const version of spec.versions.filter((v) => v.served)) {
      const apiVersion = `${spec.group}/${version.name}`;
      await waitFor(`${spec.names.kind} served in ${apiVersion}`, async () => {
        discovery.forgetDiscovery(apiVersion);
        return discovery.isServed(apiVersion, spec.names.kind);
      }, { timeoutMs: 60000 });
    }
  }
  // Ours convert through the webhook the control plane runs (conversion-wiring.ts): wait until it
  // is wired and the API server had a moment to load it, so no test writes v1alpha1 before.
  const ours = names.filter((name) => CRD_NAMES.includes(name));
  if (ours.length > 0) {
    let wiredSince = 0;
    await waitFor(`conversion webhook wired into ${ours.join(', ')}`, async () => {
      const stored = await Promise.all(ours.map((name) => api.readCustomResourceDefinition({ name })));
      const wired = stored.every((crd) => crd.spec.conversion?.strategy === 'Webhook' && !!crd.spec.conversion.webhook?.clientConfig?.caBundle);
      if (!wired) wiredSince = 0;
      else wiredSince ||= Date.now();
      return wired && Date.now() - wiredSince >= 1000;
    }, { timeoutMs: 60000 });
  }
  return names;
}

export interface HelmResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs real helm (v3.17 or v4.1) against the shared control plane, with an isolated helm home. */
export function helm(version: 3 | 4, args: string[], opts: { env?: NodeJS.ProcessEnv; input?: string; kubeconfig?: string } = {}): Promise<HelmResult> {
  const tools = toolPaths();
  const state = readSharedState();
  const home = path.join(state.helmHome, `v${version}`);
  const env = {
    ...process.env,
    KUBECONFIG: opts.kubeconfig ?? state.kubeconfigPath,
    HELM_CACHE_HOME: path.join(home, 'cache'),
    HELM_CONFIG_HOME: path.join(home, 'config'),
    HELM_DATA_HOME: path.join(home, 'data'),
    HELM_REGISTRY_CONFIG: path.join(home, 'registry.json'),
    ...opts.env,
  };
  return new Promise((resolve) => {
    const child = execFile(version === 3 ? tools.helm3 : tools.helm4, args, { env, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

/** A name unique within this run, for namespaces and objects of one test file. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}${Math.floor(Math.random() * 1296).toString(36)}`.slice(0, 63);
}
