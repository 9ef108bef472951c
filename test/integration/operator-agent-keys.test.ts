// The key the operator mints for an AgentDeployment (issue 29, Medium 4), by the real operator on
// the real API server: the key's record names the agent (namespace, name, uid) and carries an
// expiry; each mint and revocation is an audit entry by `operator` and an Event on the agent;
// re-pointing the agent revokes its key on the old model, deleting it revokes the rest, and a
// Secret of the key Secret's name that the agent does not own is never written to.
import { applyObject, deleteObject, getObject, kubeconfigPath, uniqueName } from '../support/cluster';
import { waitFor } from '../support/processes';
import { KubeRest, KubeObject } from '../../src/kube/rest';
import { readAuditEntries } from '../../src/api-keys/audit-log';
import { parseApiKeyRecord } from '../../src/translate/keys/api-keys';
import { AGENT_KEY_LIFETIME_MS, ANNOTATION_KEY_CLIENT_ID, ANNOTATION_KEY_MODEL_NAME } from '../../src/translate/agents/agent-key';
import { OperatorProcess, condition, isReadyAtGeneration, passthroughModel, prepareOperatorNamespace, startOperator } from './operator-support';

const ns = uniqueName('agent-keys');
const GROUP = 'llm.nebari.dev/v1alpha1';
type WithData = KubeObject & { data?: Record<string, string> };

let client: KubeRest;
let operator: OperatorProcess;

const agent = (name: string, modelName: string): KubeObject => ({
  apiVersion: GROUP,
  kind: 'AgentDeployment',
  metadata: { name, namespace: ns },
  spec: { image: 'example.com/agent:1', model: { modelRef: { kind: 'PassthroughModel', name: modelName, modelName: 'gpt-4o' } } },
});
const get = <T extends KubeObject = KubeObject>(apiVersion: string, kind: string, name: string) => getObject<T>({ apiVersion, kind, metadata: { name, namespace: ns } });
const modelKeys = async (model: string) => ({
  secret: (await get<WithData>('v1', 'Secret', `${model}-api-keys`))?.data ?? {},
  metadata: (await get<WithData>('v1', 'ConfigMap', `${model}-api-key-metadata`))?.data ?? {},
});
/** Client IDs on `model` whose key or record belongs to the agent with `uid` (or has the planted value). */
async function agentEntriesOn(model: string, uid: string): Promise<string[]> {
  const { secret, metadata } = await modelKeys(model);
  return [...new Set([...Object.keys(secret), ...Object.keys(metadata)])].filter((id) => parseApiKeyRecord(id, metadata[id]).agent?.uid === uid || id.includes('agentdeployment'));
}
async function events(name: string): Promise<Array<{ reason: string; message: string }>> {
  const list = await client.request<{ items: Array<{ reason: string; message: string }> }>('GET', `/api/v1/namespaces/${ns}/events`, { query: { fieldSelector: `involvedObject.name=${name},involvedObject.kind=AgentDeployment` } });
  return list.items;
}
const audit = async (clientId: string) => (await readAuditEntries(client, ns)).filter((e) => e.clientId === clientId);

beforeAll(async () => {
  client = await prepareOperatorNamespace(ns);
  operator = startOperator({ kubeconfigPath: kubeconfigPath(), namespace: ns, name: 'operator-agent-keys' });
  for (const name of ['alpha', 'beta']) await applyObject(passthroughModel(ns, name));
  for (const name of ['alpha', 'beta']) {
    await waitFor(`PassthroughModel ${name} Ready`, async () => isReadyAtGeneration(await get('llm.nebari.dev/v1beta1', 'PassthroughModel', name)), { timeoutMs: 60_000 });
  }
});

afterAll(async () => {
  if (operator && operator.child.exitCode === null) await operator.kill();
  client?.close();
});

describe('the key of an AgentDeployment bound by modelRef', () => {
  let uid = '';
  let firstKey = '';

  it('is recorded with the agent and an expiry, audited as minted by the operator, and an Event on the agent', async () => {
    await applyObject(agent('helper', 'alpha'));
    await waitFor('helper bound', async () => condition(await get(GROUP, 'AgentDeployment', 'helper'), 'ModelBound')?.status === 'True', { timeoutMs: 60_000 });
    uid = (await get(GROUP, 'AgentDeployment', 'helper'))!.metadata.uid!;
    const held = (await get<WithData>('v1', 'Secret', 'helper-model-key'))!;
    firstKey = held.metadata.annotations![ANNOTATION_KEY_CLIENT_ID];
    expect(held.metadata.annotations![ANNOTATION_KEY_MODEL_NAME]).toBe('alpha');
    const { secret, metadata } = await modelKeys('alpha');
    expect(secret[firstKey]).toBe(held.data!.apiKey);
    const record = parseApiKeyRecord(firstKey, metadata[firstKey]);
    expect(record).toMatchObject({ createdBy: `AgentDeployment ${ns}/helper`, source: 'agent', agent: { namespace: ns, name: 'helper', uid } });
    expect(Math.abs(Date.parse(record.expiresAt!) - (Date.parse(record.createdAt) + AGENT_KEY_LIFETIME_MS))).toBeLessThan(60_000);
    expect(await audit(firstKey)).toEqual([expect.objectContaining({ action: 'mint', actor: 'operator', owner: `AgentDeployment ${ns}/helper`, model: { kind: 'PassthroughModel', name: 'alpha' } })]);
    await waitFor('an ApiKeyMinted Event on the agent', async () => (await events('helper')).some((e) => e.reason === 'ApiKeyMinted' && e.message.includes(firstKey)));
  });

  it('is revoked on the old model when the agent is re-pointed, and a new one is minted on the new model', async () => {
    await applyObject(agent('helper', 'beta'));
    await waitFor('the agent key Secret to hold a key on beta', async () => (await get('v1', 'Secret', 'helper-model-key'))?.metadata.annotations?.[ANNOTATION_KEY_MODEL_NAME] === 'beta', { timeoutMs: 60_000 });
    expect(await agentEntriesOn('alpha', uid)).toEqual([]);
    expect(await audit(firstKey)).toEqual([expect.objectContaining({ action: 'mint' }), expect.objectContaining({ action: 'revoke', actor: 'operator', model: { kind: 'PassthroughModel', name: 'alpha' } })]);
    const held = (await get<WithData>('v1', 'Secret', 'helper-model-key'))!;
    const newKey = held.metadata.annotations![ANNOTATION_KEY_CLIENT_ID];
    expect((await modelKeys('beta')).secret[newKey]).toBe(held.data!.apiKey);
    expect(await agentEntriesOn('beta', uid)).toEqual([newKey]);
    await waitFor('an ApiKeyRevoked Event on the agent', async () => (await events('helper')).some((e) => e.reason === 'ApiKeyRevoked' && e.message.includes(firstKey)));
  });

  it('is revoked when the agent is deleted, leaving nothing behind on any model', async () => {
    const lastKey = (await get('v1', 'Secret', 'helper-model-key'))!.metadata.annotations![ANNOTATION_KEY_CLIENT_ID];
    await deleteObject({ apiVersion: GROUP, kind: 'AgentDeployment', metadata: { name: 'helper', namespace: ns } });
    await waitFor('the agent gone', async () => (await get(GROUP, 'AgentDeployment', 'helper')) === undefined, { timeoutMs: 60_000 });
    expect(await agentEntriesOn('alpha', uid)).toEqual([]);
    expect(await agentEntriesOn('beta', uid)).toEqual([]);
    expect((await audit(lastKey)).map((e) => [e.action, e.actor])).toEqual([['mint', 'operator'], ['revoke', 'operator']]);
  });
});

describe('a key Secret the agent does not own', () => {
  it('is never written to or adopted: the agent reports KeySecretConflict naming the Secret and the fix', async () => {
    const planted = 'sk-planted-by-someone-else-0123456789abcdefghijklmnopq';
    await applyObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'squat-model-key', namespace: ns }, type: 'Opaque', stringData: { apiKey: planted } });
    await applyObject(agent('squat', 'alpha'));
    await waitFor('KeySecretConflict', async () => condition(await get(GROUP, 'AgentDeployment', 'squat'), 'ModelBound')?.reason === 'KeySecretConflict', { timeoutMs: 60_000 });
    const bound = condition(await get(GROUP, 'AgentDeployment', 'squat'), 'ModelBound')!;
    expect(bound.message).toContain(`Secret ${ns}/squat-model-key exists and is not owned by AgentDeployment squat`);
    expect(bound.message).toContain('delete or rename that Secret, or rename the agent');
    const secret = (await get<WithData>('v1', 'Secret', 'squat-model-key'))!;
    expect(Buffer.from(secret.data!.apiKey, 'base64').toString()).toBe(planted);
    expect(secret.metadata.ownerReferences ?? []).toEqual([]);
    const { secret: keys, metadata } = await modelKeys('alpha');
    expect(Object.values(keys).map((v) => Buffer.from(v, 'base64').toString())).not.toContain(planted);
    expect(Object.values(metadata).join()).not.toContain('squat');

    // Once the Secret is gone, the agent gets its own.
    await deleteObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'squat-model-key', namespace: ns } });
    await waitFor('squat bound', async () => condition(await get(GROUP, 'AgentDeployment', 'squat'), 'ModelBound')?.status === 'True', { timeoutMs: 60_000 });
  });
});
