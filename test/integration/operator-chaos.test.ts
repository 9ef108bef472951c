// SIGKILL the operator 20 times while 100 PassthroughModels are created, minted keys, updated,
// toggled and deleted. Afterwards the operator converges with zero lost keys, zero orphans and
// zero duplicates.
import { applyObject, deleteObject, kubeconfigPath, uniqueName } from '../support/cluster';
import { waitFor } from '../support/processes';
import { KubeRest, KubeObject } from '../../src/kube/rest';
import { mintKey } from '../../src/api-keys/key-store';
import { OperatorProcess, isReadyAtGeneration, passthroughModel, startOperator, prepareOperatorNamespace } from './operator-support';

const ns = uniqueName('op-chaos');
const MODELS = 100;
const KILLS = 20;
const PTM = { apiVersion: 'llm.nebari.dev/v1alpha1', kind: 'PassthroughModel' };
const name = (i: number) => `m${String(i).padStart(3, '0')}`;
const isDeleted = (i: number) => i % 4 === 0;
const isUpdated = (i: number) => i % 3 === 0;
const internalOff = (i: number) => i % 5 === 0;

let client: KubeRest;
let operator: OperatorProcess | undefined;
const allOperators: OperatorProcess[] = [];
const minted = new Map<string, Map<string, string>>(); // model -> clientId -> key

function launch(n: number): OperatorProcess {
  // The same pod name across restarts, as a restarted container keeps it: the Lease is re-acquired at once.
  const op = startOperator({ kubeconfigPath: kubeconfigPath(), namespace: ns, name: 'chaos-operator', leaderElection: true, env: { NLS_WORKERS: '8' } });
  (op as { restart?: number }).restart = n;
  allOperators.push(op);
  return op;
}

async function inBatches<T>(items: T[], size: number, fn: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(fn));
}

beforeAll(async () => {
  client = await prepareOperatorNamespace(ns);
});

afterAll(async () => {
  for (const op of allOperators) if (op.child.exitCode === null) await op.kill();
  client?.close();
});

it(`converges after ${KILLS} SIGKILLs during churn of ${MODELS} models: no lost keys, orphans or duplicates`, async () => {
  const indexes = Array.from({ length: MODELS }, (_, i) => i);
  operator = launch(0);
  let kills = 0;
  const killer = (async () => {
    while (kills < KILLS) {
      // Kill it while it works: some time after it took the Lease and started its controllers.
      // The random delay is the point (kills land at different moments), not a wait for a state.
      await operator!.waitForLine(/became leader/, 60_000);
      await new Promise((r) => setTimeout(r, 500 + Math.random() * 2500));
      await operator!.kill();
      kills++;
      operator = launch(kills);
    }
  })();

  const workload = (async () => {
    await inBatches(indexes, 10, async (i) => {
      await applyObject(passthroughModel(ns, name(i)));
    });
    await inBatches(indexes, 10, async (i) => {
      const key = await mintKey(client, { kind: 'PassthroughModel', name: name(i), namespace: ns }, `user${i}`, 'chaos', { waitMs: 300_000 });
      minted.set(name(i), new Map([[key.clientId, key.apiKey]]));
    });
    await inBatches(indexes.filter(isUpdated), 10, async (i) => {
      await applyObject(passthroughModel(ns, name(i), { declared: ['gpt-4o', 'gpt-4o-mini'], internal: !internalOff(i) }));
    });
    await inBatches(indexes.filter((i) => internalOff(i) && !isUpdated(i)), 10, async (i) => {
      await applyObject(passthroughModel(ns, name(i), { internal: false }));
    });
    await inBatches(indexes.filter(isDeleted), 10, async (i) => {
      await deleteObject({ ...PTM, metadata: { name: name(i), namespace: ns } });
    });
    // A second key for some survivors, minted while the operator keeps dying.
    await inBatches(indexes.filter((i) => i % 7 === 1), 10, async (i) => {
      const key = await mintKey(client, { kind: 'PassthroughModel', name: name(i), namespace: ns }, `second${i}`, undefined, { waitMs: 300_000 });
      minted.get(name(i))!.set(key.clientId, key.apiKey);
    });
  })();
  await workload;
  await killer;
  expect(kills).toBe(KILLS);

  const survivors = indexes.filter((i) => !isDeleted(i)).map(name);
  const deleted = indexes.filter(isDeleted).map(name);
  await waitFor(
    'every surviving model Ready at its generation and every deleted model gone',
    async () => {
      const { items } = await client.list(PTM.apiVersion, PTM.kind, { namespace: ns });
      const byName = new Map(items.map((m) => [m.metadata.name, m]));
      return deleted.every((n) => !byName.has(n)) && survivors.every((n) => isReadyAtGeneration(byName.get(n)));
    },
    { timeoutMs: 180_000, intervalMs: 1000 },
  );

  // Zero lost keys, zero duplicates: each survivor's Secret holds exactly the keys minted for it.
  const { items: secrets } = await client.list<KubeObject & { data?: Record<string, string> }>('v1', 'Secret', { namespace: ns, labelSelector: 'llm.nebari.dev/api-keys=true' });
  const secretsByModel = new Map(secrets.map((s) => [s.metadata.annotations?.['llm.nebari.dev/model-name'], s]));
  let lost = 0;
  let unexpected = 0;
  for (const n of survivors) {
    const data = secretsByModel.get(n)?.data ?? {};
    for (const [clientId, key] of minted.get(n)!) if (Buffer.from(data[clientId] ?? '', 'base64').toString() !== key) lost++;
    unexpected += Object.keys(data).filter((id) => !minted.get(n)!.has(id)).length;
  }
  expect({ lost, unexpected }).toEqual({ lost: 0, unexpected: 0 });
  expect(secrets.map((s) => s.metadata.name).sort()).toEqual(survivors.map((n) => `${n}-api-keys`).sort());
  const { items: metadata } = await client.list('v1', 'ConfigMap', { namespace: ns, labelSelector: 'llm.nebari.dev/api-keys=true' });
  expect(metadata.map((c) => c.metadata.name).sort()).toEqual(survivors.map((n) => `${n}-api-key-metadata`).sort());

  // Zero orphans and zero duplicates among generated gateway objects (garbage collection and the finalizer's teardown both run).
  const { items: models } = await client.list(PTM.apiVersion, PTM.kind, { namespace: ns });
  const liveUids = new Set(models.map((m) => m.metadata.uid));
  const kinds: Array<[string, string, (n: string, i: number) => string[]]> = [
    ['aigateway.envoyproxy.io/v1beta1', 'AIGatewayRoute', (n, i) => [`${n}-external`, ...(internalOff(i) ? [] : [`${n}-internal`])]],
    ['gateway.envoyproxy.io/v1alpha1', 'SecurityPolicy', (n, i) => [`${n}-external-auth`, ...(internalOff(i) ? [] : [`${n}-internal-auth`])]],
    ['aigateway.envoyproxy.io/v1beta1', 'AIServiceBackend', (n) => [n]],
    ['aigateway.envoyproxy.io/v1beta1', 'BackendSecurityPolicy', (n) => [`${n}-upstream-auth`]],
    ['gateway.envoyproxy.io/v1alpha1', 'Backend', (n) => [`${n}-backend`]],
    ['gateway.networking.k8s.io/v1', 'BackendTLSPolicy', (n) => [`${n}-backend-tls`]],
  ];
  for (const [apiVersion, kind, expected] of kinds) {
    const want = indexes.filter((i) => !isDeleted(i)).flatMap((i) => expected(name(i), i)).sort();
    await waitFor(`${kind}: exactly the survivors' objects`, async () => {
      const { items } = await client.list(apiVersion, kind, { namespace: ns });
      return JSON.stringify(items.map((o) => o.metadata.name).sort()) === JSON.stringify(want);
    }, { timeoutMs: 60_000, intervalMs: 1000 });
    const { items } = await client.list(apiVersion, kind, { namespace: ns });
    expect(items.filter((o) => !o.metadata.ownerReferences?.some((r) => liveUids.has(r.uid))).map((o) => o.metadata.name)).toEqual([]);
  }
  // Only the last process remains; earlier ones were all killed.
  expect(allOperators.filter((o) => o.child.exitCode === null && o.child.signalCode === null)).toHaveLength(1);
});
