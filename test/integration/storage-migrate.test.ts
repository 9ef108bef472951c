// `nls storage migrate` on a real kube-apiserver + etcd (a private one): 500 objects stored in v1,
// the CRD switches its storage version to v2, the command (a real `nls` process) is killed in the
// middle while writers keep changing objects, and a rerun (two migrators at once) finishes:
// every object is then stored in v2 (read straight from etcd), status.storedVersions is ["v2"],
// and every writer's change is still there. Prints the migration rate.
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { migrateStorage, runStorage } from '../../src/cli/lifecycle/storage';
import { KubeApiError, KubeRest } from '../../src/kube/rest';
import { type ControlPlane, readManifests, startControlPlane, upstreamCrdDir } from '../support/cluster';
import { repoRoot } from '../support/tools';

const GROUP = 'migrate.example.com';
const CRD_NAME = `widgets.${GROUP}`;
const NAMESPACES = ['team-a', 'team-b'];
const COUNT = 500;

let plane: ControlPlane;
let kc: k8s.KubeConfig;
let rest: KubeRest;

function widgetCrd(storage: 'v1' | 'v2') {
  const schema = { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: CRD_NAME },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { kind: 'Widget', listKind: 'WidgetList', plural: 'widgets', singular: 'widget' },
      versions: ['v1', 'v2'].map((name) => ({ name, served: true, storage: name === storage, schema })),
    },
  };
}

const objectPath = (namespace: string, name: string, version = 'v1') => `/apis/${GROUP}/${version}/namespaces/${namespace}/widgets/${name}`;
const names = Array.from({ length: COUNT }, (_, i) => ({ namespace: NAMESPACES[i % NAMESPACES.length], name: `w-${String(i).padStart(3, '0')}` }));

/** The apiVersion each widget is stored with, read from etcd's JSON gateway (the API server always converts). */
async function storedVersions(): Promise<Map<string, number>> {
  const prefix = `/registry/${GROUP}/widgets/`;
  const end = prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const response = await fetch(`${plane.etcdUrl}/v3/kv/range`, { method: 'POST', body: JSON.stringify({ key: b64(prefix), range_end: b64(end) }) });
  const body = (await response.json()) as { kvs?: { value: string }[] };
  const counts = new Map<string, number>();
  for (const kv of body.kvs ?? []) {
    const apiVersion = (JSON.parse(Buffer.from(kv.value, 'base64').toString('utf8')) as { apiVersion: string }).apiVersion;
    counts.set(apiVersion, (counts.get(apiVersion) ?? 0) + 1);
  }
  return counts;
}

async function crdStoredVersions(): Promise<string[]> {
  const crd = await rest.request<{ status?: { storedVersions?: string[] } }>('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD_NAME}`);
  return crd.status?.storedVersions ?? [];
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Writers changing random widgets (a label with a sequence number) until stopped; returns the last value written per widget. */
function startWriters(count: number) {
  const last = new Map<string, string>();
  let stop = false;
  let writes = 0;
  let sequence = 0;
  // Writer i owns the widgets whose index is i modulo count, so the writes to one widget are
  // sequential and the last one sent is the one that must be stored.
  const writer = async (_: unknown, index: number) => {
    const owned = names.filter((_n, i) => i % count === index);
    while (!stop) {
      const target = owned[Math.floor(Math.random() * owned.length)];
      const value = String(++sequence);
      try {
        await rest.request('PATCH', objectPath(target.namespace, target.name), {
          body: { metadata: { labels: { 'writer-seq': value } } },
          contentType: 'application/merge-patch+json',
        });
        last.set(`${target.namespace}/${target.name}`, value);
        writes++;
      } catch (error) {
        if (!(error instanceof KubeApiError && error.code === 409)) throw error;
      }
    }
  };
  const running = Array.from({ length: count }, writer);
  return {
    last,
    writes: () => writes,
    async stop() {
      stop = true;
      await Promise.all(running);
    },
  };
}

beforeAll(async () => {
  plane = await startControlPlane({ mode: 'apiserver' });
  kc = plane.kubeConfig();
  rest = new KubeRest(kc);
  await rest.apply(widgetCrd('v1') as never, { fieldManager: 'test', force: true });
  await waitFor('the widget CRD to be served', async () => (await rest.request<{ resources?: unknown[] }>('GET', `/apis/${GROUP}/v1`).catch(() => ({ resources: [] }))).resources!.length > 0);
  for (const namespace of NAMESPACES) await rest.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } } });
  // 500 widgets stored in v1, 16 creates in flight.
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < names.length) {
        const { namespace, name } = names[next++];
        await rest.request('POST', `/apis/${GROUP}/v1/namespaces/${namespace}/widgets`, {
          body: { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name }, spec: { size: name.length, owner: namespace } },
        });
      }
    }),
  );
}, 180_000);

afterAll(async () => {
  rest?.close();
  await plane?.stop();
});

it('500 objects stored in v1 end up stored in v2 after a killed run and a resumed one, with writers changing objects throughout', async () => {
  expect(Object.fromEntries(await storedVersions())).toEqual({ [`${GROUP}/v1`]: COUNT });
  // The storage version switch (what an upgrade's CRD step does): new writes go to v2 from now on.
  await rest.apply(widgetCrd('v2') as never, { fieldManager: 'test', force: true });
  await waitFor('storedVersions to list v2', async () => (await crdStoredVersions()).includes('v2'));
  // The API server picks the new storage version up asynchronously: wait until a write lands in v2.
  await waitFor('a write to be stored in v2', async () => {
    await rest.request('PATCH', objectPath('team-a', 'w-000'), { body: { metadata: { labels: { probe: String(Date.now()) } } }, contentType: 'application/merge-patch+json' });
    return ((await storedVersions()).get(`${GROUP}/v2`) ?? 0) > 0;
  });
  expect(await crdStoredVersions()).toEqual(['v1', 'v2']);

  const writers = startWriters(3);
  try {
    // A real `nls` process, killed once it has rewritten two pages.
    const child = spawn(
      path.join(repoRoot, 'node_modules', '.bin', 'ts-node'),
      ['--transpile-only', 'src/cli/main.ts', 'storage', 'migrate', '--crd', CRD_NAME, '--kubeconfig', plane.kubeconfigPath, '--page-size', '50', '--concurrency', '4'],
      { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code, signal) => resolve(signal ? null : code)));
    await waitFor('the first run to rewrite two pages', async () => /page 2:/.test(output) || child.exitCode !== null, 120_000);
    child.kill('SIGKILL');
    expect(await exited).toBeNull(); // killed, not finished
    const afterKill = await storedVersions();
    expect(afterKill.get(`${GROUP}/v2`)).toBeGreaterThanOrEqual(100);
    expect(afterKill.get(`${GROUP}/v1`)).toBeGreaterThan(0);
    expect(await crdStoredVersions()).toEqual(['v1', 'v2']);

    // The rerun, twice at once: conflicts between them and with the writers are retried.
    const [first, second] = await Promise.all([migrateStorage(rest, CRD_NAME, { pageSize: 50, concurrency: 4 }), migrateStorage(rest, CRD_NAME, { pageSize: 50, concurrency: 4 })]);
    for (const result of [first, second]) {
      expect(result.failed).toEqual([]);
      expect(result.rewritten + result.gone).toBe(COUNT);
      expect(result.trimmed).toBe(true);
    }
    process.stdout.write(
      `storage migrate: killed run got ${afterKill.get(`${GROUP}/v2`)} of ${COUNT} into v2; resumed runs: ${first.rewritten} objects in ${first.seconds.toFixed(2)} s ` +
        `(${(first.rewritten / first.seconds).toFixed(0)} objects/s per migrator, two at once), conflicts retried ${first.conflicts + second.conflicts}, writer patches ${writers.writes()}\n`,
    );
  } finally {
    await writers.stop();
  }
  expect(Object.fromEntries(await storedVersions())).toEqual({ [`${GROUP}/v2`]: COUNT });
  expect(await crdStoredVersions()).toEqual(['v2']);
  // Every writer's last change is there.
  const lost: string[] = [];
  for (const [key, value] of writers.last) {
    const [namespace, name] = key.split('/');
    const object = await rest.request<{ metadata: { labels?: Record<string, string> } }>('GET', objectPath(namespace, name, 'v2'));
    if (object.metadata.labels?.['writer-seq'] !== value) lost.push(`${key}: ${value} != ${object.metadata.labels?.['writer-seq']}`);
  }
  expect(lost).toEqual([]);
  expect(writers.last.size).toBeGreaterThan(0);

  // A third run through the command finds nothing left and says so.
  const lines: string[] = [];
  const kubeconfigArgs = ['--kubeconfig', plane.kubeconfigPath];
  expect(await runStorage(['migrate', '--crd', CRD_NAME, ...kubeconfigArgs], (l) => lines.push(l))).toBe(0);
  expect(lines.join('\n')).toContain('status.storedVersions is [v2]');
  process.stdout.write(`storage migrate, a run with nothing left to move: ${lines.find((l) => l.includes('objects/s'))}\n`);
}, 300_000);

it('Envoy AI Gateway\'s own CRD: AIServiceBackends stored as v1alpha1 (as AI Gateway 0.5 stored them) move to v1beta1 after its v1.1.0 CRD lands', async () => {
  // The released v1.1.0 CRD, read in place; the older release stored v1alpha1, served alone.
  const released = readManifests(path.join(upstreamCrdDir(), 'envoy-ai-gateway', 'v1.1.0', 'aigateway.envoyproxy.io_aiservicebackends.yaml'))[0] as unknown as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  const older = structuredClone(released);
  older.spec.versions = older.spec.versions.filter((v: { name: string }) => v.name === 'v1alpha1').map((v: object) => ({ ...v, storage: true }));
  const crdName = released.metadata.name as string;
  await rest.apply(older as never, { fieldManager: 'test', force: true });
  await waitFor('v1alpha1 AIServiceBackends served', async () => (await rest.request<{ resources?: { name: string }[] }>('GET', '/apis/aigateway.envoyproxy.io/v1alpha1').catch(() => ({ resources: [] }))).resources!.some((r) => r.name === 'aiservicebackends'));
  const backendsPath = (version: string) => `/apis/aigateway.envoyproxy.io/${version}/namespaces/team-a/aiservicebackends`;
  for (let i = 0; i < 40; i++) {
    await rest.request('POST', backendsPath('v1alpha1'), {
      body: { apiVersion: 'aigateway.envoyproxy.io/v1alpha1', kind: 'AIServiceBackend', metadata: { name: `b-${i}` }, spec: { schema: { name: 'OpenAI' }, backendRef: { name: `backend-${i}`, kind: 'Backend', group: 'gateway.envoyproxy.io' } } },
    });
  }
  await rest.apply(released as never, { fieldManager: 'test', force: true });
  await waitFor('storedVersions to list v1beta1', async () => ((await rest.request<{ status?: { storedVersions?: string[] } }>('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crdName}`)).status?.storedVersions ?? []).includes('v1beta1'));
  const lines: string[] = [];
  expect(await runStorage(['migrate', '--crd', crdName, '--kubeconfig', plane.kubeconfigPath], (l) => lines.push(l))).toBe(0);
  expect(lines.join('\n')).toContain('status.storedVersions is [v1beta1]');
  const stored = await rest.request<{ status?: { storedVersions?: string[] } }>('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crdName}`);
  expect(stored.status?.storedVersions).toEqual(['v1beta1']);
  const items = (await rest.request<{ items: { spec: { backendRef: { name: string } } }[] }>('GET', backendsPath('v1beta1'))).items;
  expect(items.map((b) => b.spec.backendRef.name).sort()).toEqual(Array.from({ length: 40 }, (_, i) => `backend-${i}`).sort());
}, 120_000);

it('a CRD that does not exist is refused, naming the form of the name', async () => {
  const lines: string[] = [];
  expect(await runStorage(['migrate', '--crd', 'widgets', '--kubeconfig', plane.kubeconfigPath], (l) => lines.push(l))).toBe(3);
  expect(lines.join('\n')).toContain('CustomResourceDefinition widgets does not exist; name it as <plural>.<group>');
});
