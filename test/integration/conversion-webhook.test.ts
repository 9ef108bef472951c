// The conversion webhook on a real kube-apiserver (a private one, without the test wiring of
// conversion-wiring.ts: the webhook server under test wires the CRDs itself, by URL on 127.0.0.1
// instead of its Service). It writes the whole spec.conversion block (the generated CRDs carry
// none), puts it back when someone changes it, leaves a live other release's Service alone,
// re-applying the CRDs does not reset it, every example and fixture
// created in one version reads back in the other and back deep-equal, and two clients writing
// different versions, with server-side apply too, lose nothing. Prints conversion latency.
import * as k8s from '@kubernetes/client-node';
import { API_GROUP, applyDefaults, KIND_DEFINITIONS, rootSchema } from '../../src/api';
import { convertTo, restoreAnnotation } from '../../src/api/conversion';
import { FIELD_MANAGER } from '../../src/cli/lifecycle/crds';
import { type ControlPlane, applyObject, readManifests, startControlPlane, uniqueName } from '../support/cluster';
import { freePort } from '../support/processes';
import { kubeRequest } from '../support/webhook/kube-raw';
import { type WebhookEnvironment, crdDirectory, createNamespace, startWebhookEnvironment, waitUntil } from '../support/webhook/webhook-env';
import { examples } from '../unit/api/schema-helpers';
import { OBJECTS_AT_BOUNDS, UPSTREAM_OBJECTS } from './crds-cases';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ALPHA = `${API_GROUP}/v1alpha1`;
const BETA = `${API_GROUP}/v1beta1`;
const plural = (kind: string) => KIND_DEFINITIONS.find((d) => d.kind === kind)!.plural;
const path = (version: 'v1alpha1' | 'v1beta1', namespace: string, kind: string, name?: string) =>
  `/apis/${API_GROUP}/${version}/namespaces/${namespace}/${plural(kind)}${name ? `/${name}` : ''}`;

let plane: ControlPlane;
let admin: k8s.KubeConfig;
let env: WebhookEnvironment;
let crds: Obj[];
const conversionMs: number[] = [];

let conversionUrl: string;

async function request(method: string, url: string, body?: unknown, contentType?: string): Promise<Obj> {
  const response = await kubeRequest(admin, method, url, body, contentType);
  if (response.status >= 300) throw new Error(`${method} ${url}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

/** What a client sees of an object, without what the server alone keeps (managed fields, versions, times). */
function content(object: Obj): Obj {
  const { managedFields: _m, resourceVersion: _r, generation: _g, creationTimestamp: _c, uid: _u, ...metadata } = object.metadata;
  return { ...object, metadata };
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

beforeAll(async () => {
  plane = await startControlPlane({ mode: 'apiserver', conversion: false });
  admin = plane.kubeConfig();
  const id = uniqueName('conv');
  // The CRDs as generated: no spec.conversion at all.
  crds = readManifests(crdDirectory) as Obj[];
  for (const crd of crds) expect(crd.spec.conversion).toBeUndefined();
  for (const crd of crds) await applyObject(crd, { kubeConfig: admin });
  const port = await freePort();
  conversionUrl = `https://127.0.0.1:${port}/convert`;
  env = await startWebhookEnvironment({
    kubeConfig: admin,
    id,
    server: {
      onConversion: (ms) => conversionMs.push(ms),
      conversionUrl,
      checkIntervalMs: 1000,
      settings: { port, conversionCrds: KIND_DEFINITIONS.map((d) => `${d.plural}.${API_GROUP}`) },
    },
    // The admission configurations are not needed here; without them readiness is about the CRDs.
    register: false,
  });
  // The server's injection writes the whole block into each CRD; then the API server can call it.
  const api = admin.makeApiClient(k8s.ApiextensionsV1Api);
  await waitUntil('spec.conversion in every CRD', async () => {
    const stored = await Promise.all(crds.map((c) => api.readCustomResourceDefinition({ name: c.metadata.name })));
    return stored.every((c) => c.spec.conversion?.webhook?.clientConfig?.url === conversionUrl && !!c.spec.conversion.webhook.clientConfig.caBundle && c.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True'));
  });
  await waitUntil('the server to be ready (CRDs convert through it and trust its certificate)', () => env.server.ready());
  const probeNs = `${id}-probe`;
  await createNamespace(admin, probeNs, {});
  // The API server loads the new conversion settings asynchronously: wait until a v1alpha1 write
  // (stored as v1beta1, so converted) goes through.
  await waitUntil('a v1alpha1 write through the webhook', async () => {
    const response = await kubeRequest(admin, 'POST', path('v1alpha1', probeNs, 'LLMModel'), {
      apiVersion: ALPHA,
      kind: 'LLMModel',
      metadata: { name: 'probe' },
      spec: { model: { name: 'probe', source: 'huggingface' }, resources: { gpu: { count: 0 } }, access: { public: true } },
    });
    return response.status === 201 || response.status === 409;
  }, 30_000);
}, 180_000);

afterAll(async () => {
  if (conversionMs.length > 0) {
    process.stdout.write(
      `conversion webhook: ${conversionMs.length} reviews, p50 ${percentile(conversionMs, 50).toFixed(3)} ms, p99 ${percentile(conversionMs, 99).toFixed(3)} ms (inside the server)\n`,
    );
  }
  await env?.close();
  await plane?.stop();
});

describe('who owns spec.conversion', () => {
  const api = () => admin.makeApiClient(k8s.ApiextensionsV1Api);

  it('re-applying the CRDs server-side (nls crds apply\'s field manager, forced) keeps the whole block', async () => {
    const before = await api().readCustomResourceDefinition({ name: crds[0].metadata.name });
    for (const crd of crds) await applyObject(crd, { kubeConfig: admin, fieldManager: FIELD_MANAGER, force: true });
    const after = await api().readCustomResourceDefinition({ name: crds[0].metadata.name });
    expect(after.spec.conversion).toEqual(before.spec.conversion);
    expect(after.spec.conversion!.webhook!.clientConfig!.url).toBe(conversionUrl);
    expect(Buffer.from(after.spec.conversion!.webhook!.clientConfig!.caBundle!, 'base64').toString('utf8')).toContain('BEGIN CERTIFICATE');
    // Nobody but the operator owns the fields, so no apply of the files can take them away.
    const owners = (after.metadata!.managedFields ?? []).filter((m) => JSON.stringify(m.fieldsV1 ?? {}).includes('"f:conversion"')).map((m) => m.manager);
    expect(owners.length).toBe(1);
    expect(owners).not.toContain(FIELD_MANAGER);
  });

  it('a block changed by someone else (strategy None) is put back, and readiness waits for it', async () => {
    const name = crds[1].metadata.name;
    await plane.kubeConfig().makeApiClient(k8s.ApiextensionsV1Api).patchCustomResourceDefinition({ name, body: [{ op: 'replace', path: '/spec/conversion', value: { strategy: 'None' } }] });
    await waitUntil('the block rewritten', async () => (await api().readCustomResourceDefinition({ name })).spec.conversion?.webhook?.clientConfig?.url === conversionUrl, 20_000);
    await waitUntil('ready again', () => env.server.ready(), 20_000);
  });

  it('a block pointing at another release\'s Service is left alone while that Service exists, and taken over when it is gone', async () => {
    const name = crds[2].metadata.name;
    const other = { name: 'other-release-webhook', namespace: 'other-release' };
    await createNamespace(admin, other.namespace, {});
    await applyObject({ apiVersion: 'v1', kind: 'Service', metadata: { ...other }, spec: { ports: [{ port: 443, targetPort: 9443 }] } }, { kubeConfig: admin });
    const pointElsewhere = async () => {
      const current = await api().readCustomResourceDefinition({ name });
      const conversion = structuredClone(current.spec.conversion!);
      conversion.webhook!.clientConfig = { service: { ...other, path: '/convert', port: 443 }, caBundle: conversion.webhook!.clientConfig!.caBundle };
      await admin.makeApiClient(k8s.ApiextensionsV1Api).patchCustomResourceDefinition({ name, body: [{ op: 'replace', path: '/spec/conversion', value: conversion }] });
    };
    await pointElsewhere();
    // Three check rounds later it still points at the other release, and this server stays ready.
    await new Promise((resolve) => setTimeout(resolve, 3500));
    expect((await api().readCustomResourceDefinition({ name })).spec.conversion?.webhook?.clientConfig?.service?.name).toBe(other.name);
    expect(env.server.ready()).toBe(true);
    await plane.kubeConfig().makeApiClient(k8s.CoreV1Api).deleteNamespacedService({ name: other.name, namespace: other.namespace });
    await waitUntil('taken over once the Service is gone', async () => (await api().readCustomResourceDefinition({ name })).spec.conversion?.webhook?.clientConfig?.url === conversionUrl, 20_000);
  });
});

const FIXTURES = [
  // The fixtures are v1alpha1 objects (the v1beta1 examples are their conversions).
  ...(['llmmodel', 'passthroughmodel', 'agentdeployment'] as const).flatMap((dir) => examples(dir, 'v1alpha1')).map((e) => ({ name: e.file, object: e.object as Obj })),
  ...UPSTREAM_OBJECTS,
  ...OBJECTS_AT_BOUNDS,
].map((f, index) => ({ ...f, index }));

describe('every example and fixture round-trips through the API server', () => {
  it.each(FIXTURES.map((f) => [f.name, f] as const))('%s: created as v1alpha1, read as v1beta1, written back, reads as before', async (_name, fixture) => {
    const namespace = `rt-a-${fixture.index}`;
    await createNamespace(admin, namespace, {});
    const object: Obj = { ...fixture.object, metadata: { ...fixture.object.metadata, namespace } };
    const created = await request('POST', path('v1alpha1', namespace, object.kind), object);
    const name = created.metadata.name;
    const asBeta = await request('GET', path('v1beta1', namespace, object.kind, name));
    expect(asBeta.apiVersion).toBe(BETA);
    // The API server's v1beta1 view is the pure conversion of what it stored.
    const expected = convertTo(content(created), BETA);
    expect(expected.ok && content(asBeta)).toEqual(expected.ok && expected.object);
    // A v1beta1 client writes back what it read: the stored v1alpha1 object does not change.
    await request('PUT', path('v1beta1', namespace, object.kind, name), asBeta);
    const again = await request('GET', path('v1alpha1', namespace, object.kind, name));
    expect(content(again)).toEqual(content(created));
  });

  it.each(FIXTURES.map((f) => [f.name, f] as const))('%s: created as v1beta1, read as v1alpha1, written back, reads as before', async (_name, fixture) => {
    const namespace = `rt-b-${fixture.index}`;
    await createNamespace(admin, namespace, {});
    const def = KIND_DEFINITIONS.find((d) => d.kind === fixture.object.kind)!;
    // The v1beta1 form a v1beta1 client would write: converted from the stored (defaulted) fixture, without the record.
    const converted = convertTo(applyDefaults(rootSchema(def.schema), fixture.object), BETA);
    if (!converted.ok) throw new Error(converted.reason);
    const beta = { ...converted.object, metadata: { ...(converted.object.metadata as Obj), namespace } } as Obj;
    delete beta.metadata.annotations?.[restoreAnnotation('v1alpha1')];
    if (beta.metadata.annotations && Object.keys(beta.metadata.annotations).length === 0) delete beta.metadata.annotations;
    const created = await request('POST', path('v1beta1', namespace, beta.kind), beta);
    expect(content(created).spec).toEqual(applyDefaults(rootSchema(def.v1beta1Schema!), beta).spec);
    const asAlpha = await request('GET', path('v1alpha1', namespace, beta.kind, created.metadata.name));
    expect(asAlpha.apiVersion).toBe(ALPHA);
    await request('PUT', path('v1alpha1', namespace, beta.kind, created.metadata.name), asAlpha);
    const again = await request('GET', path('v1beta1', namespace, beta.kind, created.metadata.name));
    expect(content(again)).toEqual(content(created));
  });
});

describe('mixed clients: one writes v1alpha1, another v1beta1, nothing is lost', () => {
  const namespace = 'mixed';
  const base = {
    model: { name: 'Qwen/Qwen3-8B', source: 'huggingface' },
    resources: { gpu: { count: 1 } },
    access: { groups: ['ml'] },
  };
  const apply = (version: 'v1alpha1' | 'v1beta1', manager: string, body: Obj) =>
    request('PATCH', `${path(version, namespace, 'LLMModel', body.metadata.name)}?fieldManager=${manager}`, body, 'application/apply-patch+yaml');

  beforeAll(() => createNamespace(admin, namespace, {}));

  it('spec.routing (v1beta1 only) survives a v1alpha1 client reading and writing the object back', async () => {
    const routing = { retries: { attempts: 2, retryOn: ['connect-failure', 'reset'], statusCodes: [429, 503], perTryTimeout: '10s' }, timeouts: { request: '900s', streamIdle: '30s' }, fallback: [{ name: 'other', model: 'x' }] };
    const beta = {
      apiVersion: BETA,
      kind: 'PassthroughModel',
      metadata: { name: 'routed' },
      spec: { provider: { hostname: 'api.openai.com', credential: { type: 'APIKey', secretRef: { name: 'k' } } }, models: { declared: ['routed-id'] }, access: { groups: ['ml'] }, routing },
    };
    await request('POST', path('v1beta1', namespace, 'PassthroughModel'), beta);
    const asAlpha = await request('GET', path('v1alpha1', namespace, 'PassthroughModel', 'routed'));
    expect(asAlpha.spec.routing).toBeUndefined();
    await request('PUT', path('v1alpha1', namespace, 'PassthroughModel', 'routed'), { ...asAlpha, metadata: { ...asAlpha.metadata, labels: { touched: 'by-v1alpha1' } } });
    const again = await request('GET', path('v1beta1', namespace, 'PassthroughModel', 'routed'));
    expect(again.metadata.labels).toEqual({ touched: 'by-v1alpha1' });
    expect(again.spec.routing).toEqual(routing);
  });

  it('server-side apply from a v1alpha1 manager and a v1beta1 manager: both sets of fields survive, each keeps its own', async () => {
    const alphaConfig = {
      apiVersion: ALPHA,
      kind: 'LLMModel',
      metadata: { name: 'shared' },
      spec: { ...base, serving: { vllmArgs: ['--max-model-len=8192'] }, advanced: { vllm: { extraArgs: ['--enable-prefix-caching'], tolerations: [{ key: 'gpu', operator: 'Exists' }] } } },
    };
    await apply('v1alpha1', 'team-alpha', alphaConfig);
    const betaConfig = { apiVersion: BETA, kind: 'LLMModel', metadata: { name: 'shared' }, spec: { serving: { replicas: 2 }, scheduling: { nodeSelector: { pool: 'a100' } } } };
    await apply('v1beta1', 'team-beta', betaConfig);
    const stored = await request('GET', path('v1alpha1', namespace, 'LLMModel', 'shared'));
    expect(stored.spec.serving).toEqual({ vllmArgs: ['--max-model-len=8192'], replicas: 2, dataParallelism: 1, updateStrategy: 'Recreate' });
    expect(stored.spec.advanced.vllm).toEqual({ extraArgs: ['--enable-prefix-caching'], tolerations: [{ key: 'gpu', operator: 'Exists' }], nodeSelector: { pool: 'a100' } });
    // The v1alpha1 manager re-applies its unchanged configuration: the v1beta1 manager's fields stay.
    await apply('v1alpha1', 'team-alpha', alphaConfig);
    const afterAlpha = await request('GET', path('v1beta1', namespace, 'LLMModel', 'shared'));
    expect(afterAlpha.spec.serving).toMatchObject({ engineArgs: ['--max-model-len=8192', '--enable-prefix-caching'], replicas: 2 });
    expect(afterAlpha.spec.scheduling).toEqual({ tolerations: [{ key: 'gpu', operator: 'Exists' }], nodeSelector: { pool: 'a100' } });
    const managers = afterAlpha.metadata.managedFields.map((m: Obj) => `${m.manager}@${m.apiVersion}`);
    expect(managers).toEqual(expect.arrayContaining([`team-alpha@${ALPHA}`, `team-beta@${BETA}`]));
    // The v1beta1 manager drops its nodeSelector: only that field goes.
    await apply('v1beta1', 'team-beta', { ...betaConfig, spec: { serving: { replicas: 2 } } });
    const final = await request('GET', path('v1alpha1', namespace, 'LLMModel', 'shared'));
    expect(final.spec.advanced.vllm).toEqual({ extraArgs: ['--enable-prefix-caching'], tolerations: [{ key: 'gpu', operator: 'Exists' }] });
    expect(final.spec.serving).toMatchObject({ vllmArgs: ['--max-model-len=8192'], replicas: 2 });
  });

  it('read-modify-write: a v1beta1 update between a v1alpha1 read and write is kept (conflict, re-read, no loss)', async () => {
    const created = await request('POST', path('v1alpha1', namespace, 'LLMModel'), {
      apiVersion: ALPHA,
      kind: 'LLMModel',
      metadata: { name: 'rmw', labels: { owner: 'alpha' } },
      spec: { ...base, serving: { vllmArgs: ['--a'] }, advanced: { vllm: { extraArgs: ['--b'] } } },
    });
    const beta = await request('GET', path('v1beta1', namespace, 'LLMModel', 'rmw'));
    beta.spec.scheduling = { nodeSelector: { pool: 'h100' } };
    await request('PUT', path('v1beta1', namespace, 'LLMModel', 'rmw'), beta);
    // The v1alpha1 client writes from its stale read: refused, it re-reads, and both changes are there.
    const stale = { ...created, spec: { ...created.spec, serving: { ...created.spec.serving, replicas: 3 } } };
    const conflict = await kubeRequest(admin, 'PUT', path('v1alpha1', namespace, 'LLMModel', 'rmw'), stale);
    expect(conflict.status).toBe(409);
    const fresh = await request('GET', path('v1alpha1', namespace, 'LLMModel', 'rmw'));
    fresh.spec.serving.replicas = 3;
    const written = await request('PUT', path('v1alpha1', namespace, 'LLMModel', 'rmw'), fresh);
    expect(written.spec.serving).toMatchObject({ vllmArgs: ['--a'], replicas: 3 });
    expect(written.spec.advanced.vllm).toEqual({ extraArgs: ['--b'], nodeSelector: { pool: 'h100' } });
    expect(written.metadata.labels).toEqual({ owner: 'alpha' });
  });

  it('a v1beta1 change to a field the record covers wins over the record', async () => {
    await request('POST', path('v1alpha1', namespace, 'LLMModel'), {
      apiVersion: ALPHA,
      kind: 'LLMModel',
      metadata: { name: 'wins' },
      spec: { ...base, serving: { vllmArgs: ['--a'] }, advanced: { vllm: { extraArgs: ['--b'] } } },
    });
    const beta = await request('GET', path('v1beta1', namespace, 'LLMModel', 'wins'));
    expect(beta.metadata.annotations[restoreAnnotation('v1alpha1')]).toBeDefined();
    beta.spec.serving.engineArgs = ['--c'];
    await request('PUT', path('v1beta1', namespace, 'LLMModel', 'wins'), beta);
    const alpha = await request('GET', path('v1alpha1', namespace, 'LLMModel', 'wins'));
    expect(alpha.spec.serving.vllmArgs).toEqual(['--c']);
    expect(alpha.spec.advanced).toBeUndefined();
  });
});

describe('latency', () => {
  it('reads as v1alpha1 cost one webhook call each (v1beta1 is stored); p50/p99 measured from the client', async () => {
    const namespace = 'latency';
    await createNamespace(admin, namespace, {});
    await request('POST', path('v1alpha1', namespace, 'LLMModel'), {
      apiVersion: ALPHA,
      kind: 'LLMModel',
      metadata: { name: 'timed' },
      spec: { model: { name: 'm', source: 'huggingface' }, resources: { gpu: { count: 0 } }, access: { public: true } },
    });
    const time = async (version: 'v1alpha1' | 'v1beta1') => {
      const samples: number[] = [];
      for (let i = 0; i < 200; i++) {
        const started = process.hrtime.bigint();
        await request('GET', path(version, namespace, 'LLMModel', 'timed'));
        samples.push(Number(process.hrtime.bigint() - started) / 1e6);
      }
      return samples;
    };
    const before = conversionMs.length;
    const beta = await time('v1beta1');
    const alpha = await time('v1alpha1');
    expect(conversionMs.length - before).toBeGreaterThanOrEqual(200);
    process.stdout.write(
      `GET latency over 200 reads: v1beta1 (storage) p50 ${percentile(beta, 50).toFixed(2)} ms p99 ${percentile(beta, 99).toFixed(2)} ms; ` +
        `v1alpha1 (converted) p50 ${percentile(alpha, 50).toFixed(2)} ms p99 ${percentile(alpha, 99).toFixed(2)} ms\n`,
    );
    // The conversion itself is pure and small: far below the API server's webhook timeout.
    expect(percentile(conversionMs, 99)).toBeLessThan(100);
  });
});
