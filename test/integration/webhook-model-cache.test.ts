// Admission reads models from watches (src/webhook/model-cache.ts), through the real API server:
// model writes cost the API server no read of models once the cache has listed, and what a cache
// could get wrong by lagging does not happen: a model written a moment before is seen (the
// replica's own admissions), and a model deleted a moment before refuses nothing.
import { installCRDs, kubeConfig, rest, uniqueName } from '../support/cluster';
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
