// The provider CA ConfigMap watch: what it keeps of a ConfigMap, which models its changes bring
// back, and the condition a model reports while the ConfigMap or its certificates are missing.
import { caBundleEntry, ProviderCABundle } from '../../../src/operator/provider-ca-bundle';
import type { CachedKind } from '../../../src/operator/runtime/cached-lookups';
import type { KubeObject, KubeRest } from '../../../src/kube/rest';

const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const configMap = (name: string, data: Record<string, string>, resourceVersion = '1'): KubeObject =>
  caBundleEntry({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'llm', uid: `u-${name}`, resourceVersion, labels: { a: 'b' } }, data } as KubeObject);

function fakeCache(objects: KubeObject[], hasSynced = true): CachedKind & { list(): KubeObject[] } {
  return { hasSynced, get: (namespace, name) => objects.find((o) => o.metadata.namespace === namespace && o.metadata.name === name), list: () => objects };
}

/** A client whose only answer is `get`, counting the reads. */
function client(answer: KubeObject | undefined): KubeRest & { reads: number } {
  const c = { reads: 0, get: async () => { c.reads++; return answer; } };
  return c as unknown as KubeRest & { reads: number };
}

test('keeps the identity and the number of certificates in ca.crt, never the bundle', () => {
  const kept = configMap('provider-ca', { 'ca.crt': `${PEM}${PEM}`, other: 'x' });
  expect(kept).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'provider-ca', namespace: 'llm', uid: 'u-provider-ca', resourceVersion: '1' }, certificates: 2 });
  expect(JSON.stringify(kept)).not.toContain('MIIB');
  expect(configMap('provider-ca', {})).toMatchObject({ certificates: 0 });
});

test('watches the namespace\'s ConfigMaps but the key metadata, and brings back every model when the named one appears, goes or its certificates change', () => {
  const bundle = new ProviderCABundle('provider-ca');
  const watch = bundle.watch('llm');
  expect(watch).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'llm', labelSelector: '!llm.nebari.dev/api-keys' });
  bundle.reference('llm/gpt', true);
  bundle.reference('llm/claude', true);
  const ca = configMap('provider-ca', { 'ca.crt': PEM });
  expect(watch.map(ca, 'add').sort()).toEqual(['llm/claude', 'llm/gpt']);
  expect(watch.map(ca, 'delete').sort()).toEqual(['llm/claude', 'llm/gpt']);
  expect(watch.map(configMap('provider-ca', { 'ca.crt': `${PEM}${PEM}` }, '2'), 'update', ca).sort()).toEqual(['llm/claude', 'llm/gpt']);
  // The same number of certificates (a rotated one), another ConfigMap, a resync: nothing to do.
  expect(watch.map(configMap('provider-ca', { 'ca.crt': PEM }, '2'), 'update', ca)).toEqual([]);
  expect(watch.map(configMap('dashboards', {}), 'add')).toEqual([]);
  expect(watch.map(ca, 'resync')).toEqual([]);
  bundle.reference('llm/gpt', false);
  expect(watch.map(ca, 'add')).toEqual(['llm/claude']);
});

describe('the condition of a model', () => {
  const bundleWith = (objects: KubeObject[]) => {
    const bundle = new ProviderCABundle('provider-ca');
    bundle.watch('llm').onCache!(fakeCache(objects));
    return bundle;
  };

  test('none while the ConfigMap holds a certificate, read from the cache without a request', async () => {
    const c = client(undefined);
    expect(await bundleWith([configMap('provider-ca', { 'ca.crt': PEM })]).problem(c, 'llm')).toBeUndefined();
    expect(c.reads).toBe(0);
  });

  test('BackendConfigured=False naming the ConfigMap, the chart value and the fix while it is missing or has no certificate', async () => {
    const missing = await bundleWith([]).problem(client(undefined), 'llm');
    expect(missing).toEqual({
      type: 'BackendConfigured', status: false, reason: 'ProviderCANotFound',
      message: 'ConfigMap provider-ca (chart value platform.providerTLS.caConfigMap) does not exist in namespace llm, so the gateway cannot verify the provider and refuses its requests; create it and put the CA certificates (PEM) that sign the providers\' certificates under key "ca.crt", or set the chart value platform.providerTLS.caConfigMap to "" to verify providers against the system CAs',
    });
    const empty = await bundleWith([configMap('provider-ca', { 'ca.crt': 'not a certificate' })]).problem(client(undefined), 'llm');
    expect(empty).toMatchObject({ status: false, reason: 'ProviderCAEmpty', message: expect.stringContaining('has no PEM certificate under "ca.crt"') });
  });

  test('asks the server before the watch has listed', async () => {
    const bundle = new ProviderCABundle('provider-ca');
    bundle.watch('llm').onCache!(fakeCache([], false));
    const c = client({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'provider-ca', namespace: 'llm' }, data: { 'ca.crt': PEM } } as KubeObject);
    expect(await bundle.problem(c, 'llm')).toBeUndefined();
    expect(c.reads).toBe(1);
    expect(await new ProviderCABundle('provider-ca').problem(client(undefined), 'llm')).toMatchObject({ reason: 'ProviderCANotFound' });
  });
});
