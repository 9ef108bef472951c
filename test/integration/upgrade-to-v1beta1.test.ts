// The move from a release that only knows v1alpha1 to this one, on a real kube-apiserver + etcd
// (a private one without the test wiring of conversion-wiring.ts: the steps under test wire it).
//
// 1. The CRDs as the v1alpha1-only release shipped them (one version, no conversion), 500
//    PassthroughModels and their API-key Secrets created through v1alpha1, and that release's
//    operator (its webhook Secret holds the serving CA; the Deployment names its Service).
// 2. `nls crds apply --release` (the CRD phase `nls upgrade` runs) points each CRD's conversion at
//    the release's webhook Service *before* the new CRD lands. The old operator serves no
//    /convert, so until the new one runs a v1alpha1 write fails — it is never relabelled as
//    v1beta1 — while every stored object stays readable.
// 3. The new operator's webhook server takes the conversion over (here by URL on 127.0.0.1; in a
//    cluster the same Service) and v1alpha1 clients work again through conversion.
// 4. `nls storage migrate` rewrites every object to v1beta1 while writers change some in both
//    versions; storedVersions ends ["v1beta1"], etcd holds only v1beta1, and every object, every
//    writer's change and every API key is still there. Prints the migration rate.
import * as k8s from '@kubernetes/client-node';
import { API_GROUP, crdObjects } from '../../src/api';
import { runCrds } from '../../src/cli/lifecycle/crds';
import { migrateStorage } from '../../src/cli/lifecycle/storage';
import { KubeApiError, KubeRest } from '../../src/kube/rest';
import { type WebhookServer, startWebhookServer } from '../../src/webhook';
import { silentLogger } from '../../src/webhook/log';
import { type ControlPlane, startControlPlane } from '../support/cluster';
import { freePort, waitFor } from '../support/processes';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const NAMESPACE = 'nls-system';
const RELEASE = 'nls';
const SERVICE = `${RELEASE}-webhook`;
const SECRET = `${RELEASE}-webhook-certs`;
const COUNT = 500;
const CRD = `passthroughmodels.${API_GROUP}`;
const path = (version: string, name?: string) => `/apis/${API_GROUP}/${version}/namespaces/${NAMESPACE}/passthroughmodels${name ? `/${name}` : ''}`;
const names = Array.from({ length: COUNT }, (_, i) => `m-${String(i).padStart(3, '0')}`);

let plane: ControlPlane;
let kc: k8s.KubeConfig;
let rest: KubeRest;
const servers: WebhookServer[] = [];
/** Written through v1alpha1 while the API server still served the old CRD. */
const early: string[] = [];
/** Each model as v1alpha1 clients read it before the upgrade (with the API server's defaults). */
const before = new Map<string, Obj>();

/** Our CRDs as a v1alpha1-only release shipped them: that version alone, stored, no conversion. */
function v1alpha1OnlyCrds(): Obj[] {
  return (crdObjects() as Obj[]).map((crd) => {
    const copy = structuredClone(crd);
    const alpha = copy.spec.versions.find((v: Obj) => v.name === 'v1alpha1');
    delete alpha.deprecated;
    delete alpha.deprecationWarning;
    copy.spec.versions = [{ ...alpha, storage: true }];
    return copy;
  });
}

function model(name: string): Obj {
  return {
    apiVersion: `${API_GROUP}/v1alpha1`,
    kind: 'PassthroughModel',
    metadata: { name, namespace: NAMESPACE, labels: { batch: 'upgrade' } },
    spec: {
      provider: { backend: { type: 'OpenAI' }, hostname: 'api.openai.com', credentialSecretName: `${name}-provider`, schemaVersion: 'v1' },
      models: { declared: [`gpt-${name}`] },
      access: { groups: ['team-a'] },
    },
  };
}

/** The apiVersion each PassthroughModel is stored with, read from etcd (the API server always converts). */
async function etcdApiVersions(): Promise<Map<string, number>> {
  const prefix = `/registry/${API_GROUP}/passthroughmodels/`;
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

const crd = () => rest.request<Obj>('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD}`);

/** A webhook server as the release's operator runs it (self-managed certificates in the release Secret). */
async function operatorServer(conversion?: { url: string; port: number }): Promise<WebhookServer> {
  const server = await startWebhookServer({
    kubeConfig: kc,
    env: { POD_NAMESPACE: NAMESPACE, NLS_RELEASE_NAME: RELEASE },
    host: '127.0.0.1',
    extraIpAddresses: ['127.0.0.1'],
    checkIntervalMs: 1000,
    log: silentLogger,
    conversionUrl: conversion?.url,
    settings: {
      namespace: NAMESPACE,
      port: conversion?.port ?? 0,
      secretName: SECRET,
      serviceName: SERVICE,
      webhookConfigurations: { validating: [], mutating: [] },
      conversionCrds: conversion ? crdObjects().map((c) => c.metadata.name) : [],
    },
  });
  servers.push(server);
  return server;
}

beforeAll(async () => {
  plane = await startControlPlane({ mode: 'apiserver', conversion: false });
  kc = plane.kubeConfig();
  rest = new KubeRest(kc);
  for (const c of v1alpha1OnlyCrds()) await rest.apply(c as never, { fieldManager: 'helm', force: true });
  await waitFor('v1alpha1 served', async () => (await rest.request<Obj>('GET', `/apis/${API_GROUP}/v1alpha1`).catch(() => ({ resources: [] }))).resources.filter((r: Obj) => !r.name.includes('/')).length === 3, { timeoutMs: 60_000 });
  await rest.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } } as never, { fieldManager: 'test', force: true });
  // The old release: its operator Deployment (what `nls` reads the names from) and webhook server.
  await rest.apply(
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: `${RELEASE}-operator`, namespace: NAMESPACE, labels: { 'app.kubernetes.io/instance': RELEASE, 'app.kubernetes.io/component': 'operator' } },
      spec: {
        selector: { matchLabels: { app: 'operator' } },
        template: {
          metadata: { labels: { app: 'operator' } },
          spec: {
            containers: [{
              name: 'operator',
              image: 'operator:old',
              env: [
                { name: 'NLS_WEBHOOK_SERVICE', value: SERVICE },
                { name: 'NLS_WEBHOOK_SECRET', value: SECRET },
                { name: 'NLS_VALIDATING_WEBHOOK_CONFIGURATIONS', value: `${RELEASE}-validating` },
                { name: 'NLS_MUTATING_WEBHOOK_CONFIGURATIONS', value: `${RELEASE}-mutating` },
              ],
            }],
          },
        },
      },
    } as never,
    { fieldManager: 'helm', force: true },
  );
  await operatorServer();
  for (let i = 0; i < COUNT; i += 50) {
    await Promise.all(names.slice(i, i + 50).map(async (name) => {
      await rest.request('POST', path('v1alpha1'), { body: model(name) });
      await rest.request('POST', `/api/v1/namespaces/${NAMESPACE}/secrets`, {
        body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: `${name}-api-keys`, namespace: NAMESPACE }, stringData: { [`key-${name}`]: `sk-${name}` } },
      });
    }));
  }
  for (const item of (await rest.request<Obj>('GET', path('v1alpha1'))).items as Obj[]) before.set(item.metadata.name, item);
  expect(before.size).toBe(COUNT);
}, 300_000);

afterAll(async () => {
  for (const server of servers) await server.close();
  rest?.close();
  await plane?.stop();
});

test('the CRD phase points conversion at the release before the new CRDs land; a v1alpha1 write then fails closed, nothing is relabelled', async () => {
  const out: string[] = [];
  const code = await runCrds(['apply', '--release', RELEASE, '--namespace', NAMESPACE, '--kubeconfig', plane.kubeconfigPath], (l) => out.push(l));
  expect({ code, out: out.join('\n') }).toEqual({ code: 0, out: expect.stringContaining(`${CRD}: conversion now points at ${NAMESPACE}/${SERVICE} (/convert)`) });
  const after = await crd();
  expect(after.spec.versions.map((v: Obj) => `${v.name}:${v.storage}`)).toEqual(['v1beta1:true', 'v1alpha1:false']);
  const secret = await rest.request<Obj>('GET', `/api/v1/namespaces/${NAMESPACE}/secrets/${SECRET}`);
  expect(after.spec.conversion).toEqual({
    strategy: 'Webhook',
    webhook: { conversionReviewVersions: ['v1'], clientConfig: { service: { name: SERVICE, namespace: NAMESPACE, path: '/convert', port: 443 }, caBundle: secret.data['ca.crt'] } },
  });
  expect(after.status.storedVersions).toEqual(['v1alpha1', 'v1beta1']);
  // Everything stored is readable as before: stored in v1alpha1, read in v1alpha1, no conversion.
  const listed = await rest.request<Obj>('GET', path('v1alpha1'));
  expect(listed.items.length).toBe(COUNT);
  // A new write must be stored as v1beta1: through the webhook, which is not there yet. (Until the
  // API server loads the new CRD a write still lands as v1alpha1 under the old one: legitimate.)
  let attempt = 0;
  await waitFor('the API server to use the new CRD', async () => {
    const name = `early-${attempt++}`;
    try {
      await rest.request('POST', path('v1alpha1'), { body: model(name) });
      early.push(name);
      return false;
    } catch (error) {
      if (error instanceof KubeApiError && error.code >= 500 && /conversion webhook/.test(error.message)) return true;
      throw error;
    }
  }, { timeoutMs: 30_000 });
  expect(await etcdApiVersions()).toEqual(new Map([[`${API_GROUP}/v1alpha1`, COUNT + early.length]]));
}, 120_000);

test('the new operator takes conversion over; storage migrate moves all 500 to v1beta1 while writers change some; nothing is lost', async () => {
  await servers[0].close();
  const port = await freePort();
  const server = await operatorServer({ url: `https://127.0.0.1:${port}/convert`, port });
  await waitFor('the new operator ready (the CRDs convert through it)', async () => server.ready(), { timeoutMs: 60_000 });
  await waitFor('v1alpha1 writes through conversion', async () => {
    try {
      await rest.request('POST', path('v1alpha1'), { body: model('after-upgrade') });
      return true;
    } catch (error) {
      if (error instanceof KubeApiError && error.code === 409) return true;
      return false;
    }
  }, { timeoutMs: 30_000 });

  // Writers: half change a label through v1alpha1, half a declared model through v1beta1.
  const changed = new Map<string, { version: string; value: string }>();
  let stop = false;
  const writer = async (version: 'v1alpha1' | 'v1beta1', owned: string[]) => {
    for (let round = 0; !stop; round++) {
      const name = owned[round % owned.length];
      const value = `${version}-${round}`;
      const patch = version === 'v1alpha1' ? { metadata: { labels: { written: value } } } : { spec: { models: { declared: [value] } } };
      try {
        await rest.request('PATCH', path(version, name), { body: patch, contentType: 'application/merge-patch+json' });
        changed.set(name, { version, value });
      } catch (error) {
        if (!(error instanceof KubeApiError && error.code === 409)) throw error;
      }
    }
  };
  const writers = [writer('v1alpha1', names.slice(0, 20)), writer('v1beta1', names.slice(20, 40))];
  const started = Date.now();
  const result = await migrateStorage(rest, CRD, { pageSize: 100, concurrency: 4 });
  const seconds = (Date.now() - started) / 1000;
  stop = true;
  await Promise.all(writers);
  const total = COUNT + early.length + 1;
  process.stdout.write(`storage migrate of ${total} PassthroughModels (writers running): ${seconds.toFixed(1)} s, ${(total / seconds).toFixed(0)} objects/s, ${result.conflicts} conflicts retried\n`);
  expect(result).toMatchObject({ storageVersion: 'v1beta1', failed: [], trimmed: true });

  expect((await crd()).status.storedVersions).toEqual(['v1beta1']);
  expect(await etcdApiVersions()).toEqual(new Map([[`${API_GROUP}/v1beta1`, total]]));
  // Every object reads back in v1alpha1 as it was written, plus the writers' changes.
  const items = new Map(((await rest.request<Obj>('GET', path('v1alpha1'))).items as Obj[]).map((o) => [o.metadata.name, o]));
  for (const name of names) {
    const stored = items.get(name)!;
    const write = changed.get(name);
    const expected = structuredClone(before.get(name)!);
    if (write?.version === 'v1alpha1') expected.metadata.labels.written = write.value;
    if (write?.version === 'v1beta1') expected.spec.models.declared = [write.value];
    expect({ name, spec: stored.spec, labels: stored.metadata.labels }).toEqual({ name, spec: expected.spec, labels: expected.metadata.labels });
  }
  expect(changed.size).toBe(40);
  // The API keys are Secrets beside the models: all still there, unchanged.
  const secrets = (await rest.request<Obj>('GET', `/api/v1/namespaces/${NAMESPACE}/secrets`)).items as Obj[];
  for (const name of names) {
    const keys = secrets.find((s) => s.metadata.name === `${name}-api-keys`);
    expect(Buffer.from(keys?.data?.[`key-${name}`] ?? '', 'base64').toString()).toBe(`sk-${name}`);
  }
}, 300_000);
