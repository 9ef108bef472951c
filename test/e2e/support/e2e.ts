// Helpers the end-to-end tests share: clients of the e2e control plane, helm against it, the
// `nls` of the operator image run with the image's own Node, pod waits and logs for failures.
import * as k8s from '@kubernetes/client-node';
import { execFile, execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { type KubeObject, type KubeRest, objectRef } from '../../../src/kube/rest';
import { helm, kubeConfig, kubeconfigPath, rest } from '../../support/cluster';
import { waitFor } from '../../support/processes';
import { toolPaths } from '../../support/tools';
import { e2eState } from './state';

export const RELEASE = 'nebari-llm-serving';
export const NAMESPACE = 'nebari-llm-serving-system';
export const CHART = 'nebari-llm-serving';
/** The chart's ServiceAccount: the full name, which is the release name here. */
export const OPERATOR_SA = RELEASE;

/** The admin client of the e2e control plane (one, cached). */
export function admin(): KubeRest {
  return rest();
}

export async function helmOk(version: 3 | 4, args: string[]): Promise<string> {
  // The registry on 127.0.0.1 speaks plain HTTP; only commands that reach it take the flag.
  const r = await helm(version, args.some((a) => a.startsWith('oci://')) ? [...args, '--plain-http'] : args);
  if (r.code !== 0) throw new Error(`helm v${version} ${args.join(' ')} failed (${r.code}):\n${r.stderr}${r.stdout}`);
  return r.stdout;
}

/** The operator image's filesystem, exported once, so `nls` runs exactly as shipped. */
export function imageRoot(): string {
  const state = e2eState();
  const root = path.join(state.dir, 'operator-rootfs');
  if (!fs.existsSync(path.join(root, 'nodejs', 'bin', 'node'))) {
    fs.mkdirSync(root, { recursive: true });
    const ref = `${state.images.operator.repository}:${state.version}`;
    execFileSync('bash', ['-c', `"$0" export --platform linux/amd64 "$1" - | tar -x -C "$2"`, toolPaths().crane, ref, root]);
  }
  return root;
}

/** Runs `nls` from the operator image with the image's Node; resolves with exit code and output. */
export function nls(args: string[]): Promise<{ code: number; output: string }> {
  const root = imageRoot();
  const env = { ...process.env, KUBECONFIG: kubeconfigPath(), NLS_HELM: toolPaths().helm4, NODE_ENV: 'production' };
  return new Promise((resolve) => {
    execFile(path.join(root, 'nodejs', 'bin', 'node'), [path.join(root, 'app', 'lib', 'src', 'cli', 'main.js'), ...args], { env, maxBuffer: 32 << 20 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolve({ code, output: stdout + stderr });
    });
  });
}

export function imageNodeVersion(): string {
  return execFileSync(path.join(imageRoot(), 'nodejs', 'bin', 'node'), ['--version'], { encoding: 'utf8' }).trim();
}

type Pod = KubeObject & { spec: { serviceAccountName?: string; containers: { name: string; image: string }[]; nodeName?: string }; status?: { phase?: string; podIP?: string; conditions?: { type: string; status: string }[]; containerStatuses?: { name: string; ready: boolean; restartCount: number }[] } };

export async function pods(selector: string, namespace = NAMESPACE): Promise<Pod[]> {
  const list = await admin().list<Pod>('v1', 'Pod', { namespace, labelSelector: selector });
  return list.items.filter((p) => !p.metadata.deletionTimestamp);
}

export function isPodReady(p: Pod): boolean {
  return p.status?.phase === 'Running' && !!p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
}

/** Logs of every container of the pods `selector` matches, for failure messages. */
export async function podLogs(selector: string, namespace = NAMESPACE): Promise<string> {
  const core = kubeConfig().makeApiClient(k8s.CoreV1Api);
  const out: string[] = [];
  for (const p of await pods(selector, namespace)) {
    for (const c of p.spec.containers) {
      const log = await core.readNamespacedPodLog({ name: p.metadata.name, namespace, container: c.name, tailLines: 40 }).catch((e: Error) => `(no log: ${e.message})`);
      out.push(`--- ${p.metadata.name}/${c.name} (${p.status?.phase}):\n${log}`);
    }
  }
  return out.join('\n');
}

/** Waits until `count` pods matching `selector` are Ready; fails with their logs. */
export async function waitForReadyPods(selector: string, count: number, timeoutMs = 180000, namespace = NAMESPACE): Promise<Pod[]> {
  let ready: Pod[] = [];
  try {
    await waitFor(`${count} Ready pod(s) ${selector}`, async () => {
      ready = (await pods(selector, namespace)).filter(isPodReady);
      return ready.length >= count;
    }, { timeoutMs, intervalMs: 500 });
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${await podLogs(selector, namespace)}`);
  }
  return ready;
}

/** Waits until an object satisfies `check`; fails naming the object and its last status. */
export async function waitForObject<T extends KubeObject>(apiVersion: string, kind: string, name: string, check: (o: T) => boolean, timeoutMs = 180000, namespace = NAMESPACE): Promise<T> {
  let last: T | undefined;
  try {
    await waitFor(`${kind} ${name}`, async () => {
      last = await admin().get<T>(objectRef(apiVersion, kind, name, namespace));
      return !!last && check(last);
    }, { timeoutMs, intervalMs: 500 });
  } catch (err) {
    throw new Error(`${(err as Error).message}; last status: ${JSON.stringify(last?.status ?? null)}\noperator:\n${await podLogs(OPERATOR_SELECTOR)}`);
  }
  return last!;
}

export const OPERATOR_SELECTOR = 'app.kubernetes.io/component=operator';

/** Observed at its generation and serving: phase Ready (models) or a Ready condition (agents). */
export function readyAtGeneration(o: KubeObject): boolean {
  const status = o.status as { phase?: string; observedGeneration?: number; conditions?: { type: string; status: string }[] } | undefined;
  if (status?.observedGeneration !== o.metadata.generation) return false;
  return status?.phase === 'Ready' || !!status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
}

/** GET/POST inside the run's network namespace (pod and Service addresses live only there). */
export async function http(url: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const res = await fetch(url, body === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  let json: unknown = text;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, json };
}
