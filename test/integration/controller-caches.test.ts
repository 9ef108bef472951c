// The controller runtime against the real API server, in this process: a generated object deleted
// out of band is re-created even when the cache that answers lookups of its kind belongs to
// another controller whose watch has not heard of the deletion yet (the operator runs one watch of
// SecurityPolicies per model kind), and workers start only once every watch has listed.
import { KubeObject, KubeRest, objectRef } from '../../src/kube/rest';
import { applyObject } from '../../src/operator/runtime/apply';
import { cachedLookup, registerCachedKind } from '../../src/operator/runtime/cached-lookups';
import { Controller, type ControllerOptions } from '../../src/operator/runtime/controller';
import { operatorMetrics } from '../../src/operator/runtime/metrics';
import { createLogger } from '../../src/runtime/log';
import { applyObject as applyTestObject, createNamespace, kubeConfig, rest, uniqueName } from '../support/cluster';
import { waitFor } from '../support/processes';

const admin = rest();
const ns = uniqueName('ctrl-caches');
const log = createLogger({ level: 'error' });
const metrics = operatorMetrics();
const controllers: Controller[] = [];
const clients: KubeRest[] = [];

beforeAll(async () => {
  await createNamespace(ns);
  await applyTestObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'source', namespace: ns }, stringData: { a: '1' } });
});

afterAll(async () => {
  await Promise.all(controllers.map((c) => c.stop()));
  for (const c of clients) c.close();
  await admin.delete(objectRef('v1', 'Namespace', ns));
  admin.close();
});

const generatedName = (source: string) => `generated-${source}`;

/** One Secret per key (the primary kind) generates one ConfigMap (watched for deletions). */
function startController(client: KubeRest, extra: Pick<ControllerOptions, 'secondary'> = {}, onReconcile?: () => void): Controller {
  const controller = new Controller(
    client,
    {
      apiVersion: 'v1',
      kind: 'Secret',
      namespace: ns,
      reconcile: async (req) => {
        onReconcile?.();
        await applyObject(client, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: generatedName(req.name), namespace: ns }, data: { from: req.name } });
      },
      secondary: [
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          map: (obj, event) => (event === 'delete' && obj.metadata.name.startsWith('generated-') ? [`${ns}/${obj.metadata.name.slice('generated-'.length)}`] : []),
        },
        ...(extra.secondary ?? []),
      ],
      workers: 1,
    },
    metrics,
    log,
  );
  controllers.push(controller);
  controller.start();
  return controller;
}

test('a deletion is repaired even when the lookup cache of its kind has not heard of it yet', async () => {
  const client = new KubeRest(kubeConfig());
  clients.push(client);
  startController(client);
  const ref = objectRef('v1', 'ConfigMap', generatedName('source'), ns);
  await waitFor('the generated ConfigMap', async () => (await admin.get(ref)) !== undefined);
  const before = (await admin.get<KubeObject>(ref))!;

  // A second controller's watch of ConfigMaps, registered last, answers lookups; it lags and
  // still holds the object as this controller last applied it.
  registerCachedKind(client, 'v1', 'ConfigMap', ns, { hasSynced: true, get: (_ns, name) => (name === before.metadata.name ? before : undefined) });
  expect(cachedLookup(client, 'v1', 'ConfigMap', ns, before.metadata.name)?.object?.metadata.uid).toBe(before.metadata.uid);

  await admin.delete(ref);
  await waitFor('the generated ConfigMap re-created', async () => {
    const now = await admin.get<KubeObject>(ref);
    return now !== undefined && now.metadata.uid !== before.metadata.uid;
  }, { timeoutMs: 15_000 });
});

test('workers start once every watch has listed, and a kind that is not served does not hold them back', async () => {
  const client = new KubeRest(kubeConfig());
  clients.push(client);
  const configMapsListedAtFirstPass: boolean[] = [];
  const started = Date.now();
  let firstPassAfterMs: number | undefined;
  startController(
    client,
    {
      secondary: [
        // Not served: its first list fails with "kind not served", which counts as listed.
        { apiVersion: 'nothing.example.com/v1', kind: 'Nothing', map: () => [] },
      ],
    },
    () => {
      firstPassAfterMs ??= Date.now() - started;
      configMapsListedAtFirstPass.push(cachedLookup(client, 'v1', 'ConfigMap', ns, 'any') !== undefined);
    },
  );
  await waitFor('the first pass', async () => configMapsListedAtFirstPass.length > 0, { timeoutMs: 20_000 });
  // The ConfigMap watch had listed before the first pass.
  expect(configMapsListedAtFirstPass[0]).toBe(true);
  // Well before the 30 s bound: the unserved kind did not hold the workers.
  expect(firstPassAfterMs!).toBeLessThan(15_000);
});
