// Revocation without a human, by the real operator on the real API server: a key whose expiry
// passes disappears (Secret, metadata and SecurityPolicy) within the bound while the others stay;
// removing a group from a model's spec.access.groups revokes exactly the keys that group alone
// granted, never admin (CLI) keys. Each revocation is an audit entry by `operator` and an Event on
// the model naming client ID and owner; no key reaches the operator's log or an Event.
import { applyObject, getObject, kubeconfigPath, uniqueName } from '../support/cluster';
import { waitFor } from '../support/processes';
import { KubeRest, KubeObject } from '../../src/kube/rest';
import { MintedKey, mintKey } from '../../src/api-keys/key-store';
import { readAuditEntries } from '../../src/api-keys/audit-log';
import { OperatorProcess, isReadyAtGeneration, passthroughModel, startOperator, prepareOperatorNamespace } from './operator-support';

const ns = uniqueName('key-revoke');
const model = { kind: 'PassthroughModel' as const, name: 'rev', namespace: ns };
const ref = (apiVersion: string, kind: string, name: string) => ({ apiVersion, kind, metadata: { name, namespace: ns } });
/** Bound on revocation delay: the requeue fires at the expiry; the rest is one reconcile on a loaded 2-core machine. */
const BOUND_MS = 10_000;

let client: KubeRest;
let operator: OperatorProcess;

function withGroups(groups: string[]): KubeObject {
  const m = passthroughModel(ns, model.name);
  return { ...m, spec: { ...(m.spec as object), access: { public: false, groups } } } as KubeObject;
}

async function keysData(): Promise<{ secret: Record<string, string>; metadata: Record<string, string>; policy: string }> {
  const secret = await getObject<KubeObject & { data?: Record<string, string> }>(ref('v1', 'Secret', 'rev-api-keys'));
  const metadata = await getObject<KubeObject & { data?: Record<string, string> }>(ref('v1', 'ConfigMap', 'rev-api-key-metadata'));
  const policy = JSON.stringify((await getObject(ref('gateway.envoyproxy.io/v1alpha1', 'SecurityPolicy', 'rev-external-auth')))?.spec ?? {});
  return { secret: secret?.data ?? {}, metadata: metadata?.data ?? {}, policy };
}

async function events(): Promise<Array<{ reason: string; message: string; type: string }>> {
  const list = await client.request<{ items: Array<{ reason: string; message: string; type: string }> }>('GET', `/api/v1/namespaces/${ns}/events`, { query: { fieldSelector: `involvedObject.name=${model.name}` } });
  return list.items;
}

beforeAll(async () => {
  client = await prepareOperatorNamespace(ns);
  operator = startOperator({ kubeconfigPath: kubeconfigPath(), namespace: ns, name: 'operator-revoke' });
  await applyObject(withGroups(['ml-team', 'team-b']));
  await waitFor('the model to be Ready', async () => isReadyAtGeneration(await getObject(ref('llm.nebari.dev/v1beta1', 'PassthroughModel', model.name))), { timeoutMs: 60_000 });
});

afterAll(async () => {
  if (operator && operator.child.exitCode === null) await operator.kill();
  client?.close();
});

it('removes an expired key and the keys a removed group granted, within the bound, and nothing else', async () => {
  const expiresAt = new Date(Date.now() + 3_000);
  const minted: Record<string, MintedKey> = {
    expiring: await mintKey(client, model, 'erin', 'expires', { grantedBy: 'groups', groups: ['ml-team'], subject: 'sub-erin', expiresAt, source: 'portal' }),
    mlOnly: await mintKey(client, model, 'mia', 'ml only', { grantedBy: 'groups', groups: ['ml-team'], subject: 'sub-mia', source: 'portal' }),
    both: await mintKey(client, model, 'bo', 'both groups', { grantedBy: 'groups', groups: ['ml-team', 'team-b'], source: 'portal' }),
    teamB: await mintKey(client, model, 'tb', 'team-b', { grantedBy: 'groups', groups: ['team-b'], source: 'portal' }),
    admin: await mintKey(client, model, 'root', 'admin key', { grantedBy: 'admin', source: 'cli' }),
    later: await mintKey(client, model, 'lou', 'expires later', { grantedBy: 'groups', groups: ['team-b'], expiresAt: new Date(Date.now() + 3_600_000) }),
  };
  const id = (k: string) => minted[k].clientId;
  const all = Object.keys(minted);
  await waitFor('every key in the SecurityPolicy', async () => {
    const { policy } = await keysData();
    return all.every((k) => policy.includes(id(k)));
  });

  // ---- expiry
  await waitFor('the expired key to leave the Secret, the metadata and the SecurityPolicy', async () => {
    const d = await keysData();
    return d.secret[id('expiring')] === undefined && d.metadata[id('expiring')] === undefined && !d.policy.includes(id('expiring'));
  }, { timeoutMs: 3_000 + BOUND_MS, intervalMs: 100 });
  const expiryDelayMs = Date.now() - expiresAt.getTime();
  let d = await keysData();
  expect(Object.keys(d.secret).sort()).toEqual(all.filter((k) => k !== 'expiring').map(id).sort());
  expect(all.filter((k) => k !== 'expiring').every((k) => d.policy.includes(id(k)))).toBe(true);

  // ---- a group removed from spec.access.groups
  const changedAt = Date.now();
  await applyObject(withGroups(['team-b']));
  await waitFor('the key granted only by ml-team to go', async () => {
    const x = await keysData();
    return x.secret[id('mlOnly')] === undefined && !x.policy.includes(id('mlOnly'));
  }, { timeoutMs: BOUND_MS, intervalMs: 100 });
  const accessDelayMs = Date.now() - changedAt;
  d = await keysData();
  const kept = ['both', 'teamB', 'admin', 'later'];
  expect(Object.keys(d.secret).sort()).toEqual(kept.map(id).sort());
  expect(Object.keys(d.metadata).sort()).toEqual(kept.map(id).sort());
  expect(kept.every((k) => d.policy.includes(id(k)))).toBe(true);
  console.log(`revocation delays: expiry ${expiryDelayMs} ms after expiresAt (to Secret, metadata and SecurityPolicy); spec.access.groups change ${accessDelayMs} ms after the apply`);

  // ---- audit entries, Events, logs
  const audit = (await readAuditEntries(client, ns, { model: model.name })).filter((e) => e.actor === 'operator');
  expect(audit.map(({ action, clientId, owner, subject }) => ({ action, clientId, owner, subject }))).toEqual([
    { action: 'expire', clientId: id('expiring'), owner: 'erin', subject: 'sub-erin' },
    { action: 'access-revoked', clientId: id('mlOnly'), owner: 'mia', subject: 'sub-mia' },
  ]);
  expect(audit[1].reason).toBe('the model no longer grants access to group ml-team');
  await waitFor('both Events', async () => {
    const es = await events();
    return es.some((e) => e.reason === 'ApiKeyExpired' && e.message.includes(id('expiring')) && e.message.includes('erin')) &&
      es.some((e) => e.reason === 'ApiKeyAccessRevoked' && e.type === 'Warning' && e.message.includes(id('mlOnly')) && e.message.includes('mia'));
  }, { timeoutMs: 5_000 });
  const logs = operator.lines.join('\n');
  expect(logs).toContain(id('expiring'));
  expect(logs).toContain(id('mlOnly'));
  const eventText = JSON.stringify(await events());
  for (const k of all) {
    expect(logs).not.toContain(minted[k].apiKey);
    expect(eventText).not.toContain(minted[k].apiKey);
  }
});
