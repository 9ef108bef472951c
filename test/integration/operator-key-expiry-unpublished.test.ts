// Keys expire also while a model is not published (issue 29, Low): its deletion waits for a
// generated HTTPRoute that does not go (the auth policy with its keys lives on meanwhile), or the
// operator runs without its configuration. In both states an expired key still leaves the key
// Secret and the metadata within the bound, with its audit entry, and the other keys stay.
import { applyObject, getObject, kubeconfigPath, uniqueName } from '../support/cluster';
import { waitFor } from '../support/processes';
import { KubeObject, KubeRest, objectRef } from '../../src/kube/rest';
import { mintKey } from '../../src/api-keys/key-store';
import { readAuditEntries } from '../../src/api-keys/audit-log';
import { OperatorProcess, condition, isReadyAtGeneration, passthroughModel, prepareOperatorNamespace, startOperator } from './operator-support';

const ns = uniqueName('key-expiry-idle');
const ref = (apiVersion: string, kind: string, name: string) => objectRef(apiVersion, kind, name, ns);
const modelRef = (name: string) => ref('llm.nebari.dev/v1beta1', 'PassthroughModel', name);
/** The requeue fires at the expiry; the rest is one reconcile on a loaded 2-core machine. */
const BOUND_MS = 15_000;
let client: KubeRest;
let operator: OperatorProcess | undefined;

const secretData = async (name: string) => (await getObject<KubeObject & { data?: Record<string, string> }>(ref('v1', 'Secret', `${name}-api-keys`)))?.data ?? {};
const metadataData = async (name: string) => (await getObject<KubeObject & { data?: Record<string, string> }>(ref('v1', 'ConfigMap', `${name}-api-key-metadata`)))?.data ?? {};

/** A Ready model with a key expiring in `ms` and one that never expires. */
async function modelWithKeys(name: string, ms: number): Promise<{ expiring: string; lasting: string; expiresAt: Date }> {
  await applyObject(passthroughModel(ns, name));
  await waitFor(`${name} Ready`, async () => isReadyAtGeneration(await client.get(modelRef(name))), { timeoutMs: 60_000 });
  const model = { kind: 'PassthroughModel' as const, name, namespace: ns };
  const expiresAt = new Date(Date.now() + ms);
  const expiring = (await mintKey(client, model, 'erin', 'expires', { grantedBy: 'admin', source: 'cli', expiresAt })).clientId;
  const lasting = (await mintKey(client, model, 'lou', 'lasts', { grantedBy: 'admin', source: 'cli' })).clientId;
  return { expiring, lasting, expiresAt };
}

async function expectExpiredWithinBound(name: string, keys: { expiring: string; lasting: string; expiresAt: Date }): Promise<void> {
  await waitFor(`the expired key of ${name} to leave the Secret and the metadata`, async () => {
    const [secret, metadata] = [await secretData(name), await metadataData(name)];
    return !(keys.expiring in secret) && !(keys.expiring in metadata);
  }, { timeoutMs: keys.expiresAt.getTime() - Date.now() + BOUND_MS });
  expect(Object.keys(await secretData(name))).toEqual([keys.lasting]);
  // The audit entry is appended just after the removal (key-store.ts revokeKey), so it may trail the poll above.
  const expiries = async () => (await readAuditEntries(client, ns, { model: name })).filter((e) => e.clientId === keys.expiring && e.action === 'expire').map((e) => e.actor);
  await waitFor(`the audit entry of the expired key of ${name}`, async () => (await expiries()).length > 0, { timeoutMs: 5_000 });
  expect(await expiries()).toEqual(['operator']);
}

beforeAll(async () => {
  client = await prepareOperatorNamespace(ns);
});

afterAll(async () => {
  await client?.delete(ref('gateway.networking.k8s.io/v1', 'HTTPRoute', 'held-external')).catch(() => undefined);
  if (operator && operator.child.exitCode === null) await operator.kill();
  client?.close();
});

it('removes a key that expires while the model\'s deletion waits', async () => {
  operator = startOperator({ kubeconfigPath: kubeconfigPath(), namespace: ns, name: 'expiry-deleting' });
  const keys = await modelWithKeys('held', 12_000);
  // The AI Gateway controller's HTTPRoute for the route, which nothing removes: the deletion waits for it.
  await client.create({ ...ref('gateway.networking.k8s.io/v1', 'HTTPRoute', 'held-external'), metadata: { name: 'held-external', namespace: ns }, spec: { rules: [{ backendRefs: [{ name: 'x', port: 80 }] }] } } as KubeObject);
  await client.delete(modelRef('held'));
  await operator.waitForLine(/waiting for a generated object to go/, 30_000);
  expect(keys.expiresAt.getTime()).toBeGreaterThan(Date.now()); // the wait started before the expiry
  await expectExpiredWithinBound('held', keys);
  expect((await client.get(modelRef('held')))?.metadata.deletionTimestamp).toBeDefined();
});

it('removes a key that expires while the operator is not configured', async () => {
  const keys = await modelWithKeys('idle', 15_000);
  await operator!.kill();
  operator = startOperator({ kubeconfigPath: kubeconfigPath(), namespace: ns, name: 'expiry-unconfigured', env: { NLS_BASE_DOMAIN: '' } });
  await waitFor('OperatorNotConfigured', async () => condition(await client.get(modelRef('idle')), 'Ready')?.reason === 'OperatorNotConfigured', { timeoutMs: 30_000 });
  expect(keys.expiresAt.getTime()).toBeGreaterThan(Date.now());
  await expectExpiredWithinBound('idle', keys);
});
