// Admission reads models from watches (src/webhook/model-cache.ts), through the real API server:
// model writes cost the API server no read of models once the cache has listed, and what a cache
// could get wrong by lagging does not happen: a model written a moment before is seen (the
// replica's own admissions), and a model deleted a moment before refuses nothing.
import { installCRDs, kubeConfig, rest, uniqueName } from '../support/cluster';
import { gatewayObjectNames } from '../../src/translate/gateway/names';
import { kubernetesLookups } from '../../src/webhook/lookups';
import { startModelCache } from '../../src/webhook/model-cache';
import { diffCounts, requestCounts } from '../support/apiserver-requests';
import { collectionPath, kubeRequest } from '../support/webhook/kube-raw';
import { type WebhookEnvironment, crdDirectory, recordingLogger, startWebhookEnvironment, waitUntil } from '../support/webhook/webhook-env';

const admin = kubeConfig();
let env: WebhookEnvironment;
const infos: string[] = [];

const passthroughModel = (name: string, ids: string[]) => ({
  apiVersion: 'llm.nebari.dev/v1beta1',
  kind: 'PassthroughModel',
  metadata: { name },
  spec: { provider: { hostname: 'api.openai.com', credential: { secretRef: { name: 'openai-key' } } }, models: { declared: ids }, access: { groups: ['ml'] } },
});
const create = (body: unknown) => kubeRequest(admin, 'POST', collectionPath(env.operatorNamespace, 'passthroughmodels', 'v1beta1'), body);
const modelPath = (name: string) => `${collectionPath(env.operatorNamespace, 'passthroughmodels', 'v1beta1')}/${name}`;
/** Reads of models the API server served, by `VERB resource`. */
const modelReads = (counts: Map<string, number>) => [...counts].filter(([key]) => /^(LIST|GET) (llmmodels|passthroughmodels)$/.test(key));

beforeAll(async () => {
  await installCRDs([crdDirectory]);
  const calls: string[] = [];
  const log = { ...recordingLogger(calls), info: (msg: string) => void infos.push(msg) };
  env = await startWebhookEnvironment({ kubeConfig: admin, id: uniqueName('wh-cache'), server: { log } });
  await waitUntil('admission to read models from watches', () => infos.includes('admission reads models from watches'));
}, 120_000);
afterAll(() => env?.close());

it('admits model writes without reading models from the API server', async () => {
  const client = rest(admin);
  const before = await requestCounts(client);
  for (let i = 0; i < 10; i++) expect(await create(passthroughModel(`m${i}`, [`id-${i}`]))).toMatchObject({ status: 201 });
  const requests = diffCounts(before, await requestCounts(client));
  // Before the cache: a LIST of each kind and a GET of the other kind per create (30 here).
  expect(modelReads(requests)).toEqual([]);
  expect(requests.get('POST passthroughmodels')).toBe(10);
  // What stays per write: the review of the user's right to read the credential Secret.
  expect(requests.get('POST subjectaccessreviews')).toBe(10);
});

it('refuses a served id taken by a model created just before, as the live lookups did', async () => {
  expect(await create(passthroughModel('first', ['taken']))).toMatchObject({ status: 201 });
  const second = await create(passthroughModel('second', ['taken']));
  expect(second.status).toBe(422);
  expect(String(second.body.message)).toContain('model id "taken" is already served on the external endpoint by PassthroughModel first');
});

it('lets a model reuse the id of one deleted just before', async () => {
  expect(await create(passthroughModel('gone', ['reused']))).toMatchObject({ status: 201 });
  // The mutating webhook added the operator's finalizer; no operator runs here, so take it off.
  await kubeRequest(admin, 'PATCH', modelPath('gone'), [{ op: 'remove', path: '/metadata/finalizers' }], 'application/json-patch+json');
  expect((await kubeRequest(admin, 'DELETE', modelPath('gone'))).status).toBe(200);
  expect(await create(passthroughModel('successor', ['reused']))).toMatchObject({ status: 201 });
});

it('names the models that share an id or a generated name from its index, kept from watch events', async () => {
  // A cache of its own, so the test knows when the watch has delivered (the webhook's is the same code).
  const calls: string[] = [];
  const cache = startModelCache(rest(admin), { namespace: env.operatorNamespace, live: kubernetesLookups(rest(admin)), log: recordingLogger(calls), admittedTtlMs: 60_000 });
  try {
    await cache.listed;
    const ns = env.operatorNamespace;
    const long = `${'a-long-model-name-'.repeat(4)}x`;
    // A short name equal to the cut form of the long model's external route, less its suffix.
    const short = gatewayObjectNames(long).route('external').replace(/-external$/, '');
    expect(await create(passthroughModel(short, ['idx-held']))).toMatchObject({ status: 201 });
    expect(await create(passthroughModel('idx-other', ['idx-free']))).toMatchObject({ status: 201 });
    const cached = async (name: string) => (await cache.lookups.listModels('PassthroughModel', ns)).some((m) => m.metadata?.name === name);
    await waitUntil('the watch to deliver both models', async () => (await cached(short)) && (await cached('idx-other')));
    const names = async (wanted: Parameters<NonNullable<typeof cache.lookups.modelsSharing>>[1]) => (await cache.lookups.modelsSharing!(ns, wanted)).map((m) => m.metadata?.name).sort();

    expect(await names({ ids: [{ endpoint: 'external', id: 'idx-held' }] })).toEqual([short]);
    expect(await names({ generatedNamesOf: long })).toEqual([short]);
    expect(await names({ ids: [{ endpoint: 'internal', id: 'idx-nobody' }], generatedNamesOf: 'idx-new' })).toEqual([]);
    // A model admitted here and not yet delivered is returned too (the rules filter it).
    cache.admitted({ ...passthroughModel('idx-pending', ['idx-held']), metadata: { name: 'idx-pending', namespace: ns } });
    expect(await names({ ids: [{ endpoint: 'external', id: 'idx-held' }] })).toEqual(['idx-pending', short].sort());

    // Through the webhook: the long name's route would be the short model's.
    const refused = await create(passthroughModel(long, ['idx-long']));
    expect(refused.status).toBe(422);
    expect(String(refused.body.message)).toContain(`would generate objects named like those of PassthroughModel ${short}`);

    // Deleted: no longer named (the admitted one stays until its event or its time is up).
    await kubeRequest(admin, 'PATCH', modelPath(short), [{ op: 'remove', path: '/metadata/finalizers' }], 'application/json-patch+json');
    expect((await kubeRequest(admin, 'DELETE', modelPath(short))).status).toBe(200);
    await waitUntil('the watch to deliver the deletion', async () => !(await cached(short)));
    expect(await names({ generatedNamesOf: long })).toEqual(['idx-pending']);
    expect(await names({ ids: [{ endpoint: 'external', id: 'idx-held' }] })).toEqual(['idx-pending']);
  } finally {
    await cache.stop();
  }
});
