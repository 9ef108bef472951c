// The key audit log on the real API server, guarded by the chart's real ValidatingAdmissionPolicy:
// concurrent appends are all stored, each once; an update that changes or removes an entry, or
// drops the audit label, is refused while adding entries passes; only cluster admins may delete a
// shard. Also: a mint and a revoke each append their entry, without key material.
import { plainObjectsByFile } from '../../src/chart/render';
import { defaultValues } from '../../src/chart/values-schema';
import { KubeRest, type KubeObject, objectRef } from '../../src/kube/rest';
import { appendAuditEntry, readAuditEntries } from '../../src/api-keys/audit-log';
import { AuditEntry, LABEL_KEY_AUDIT, LABEL_KEY_AUDIT_DAY, auditDay, auditShardLabels, auditShardName } from '../../src/translate/keys/audit';
import { mintKey, revokeKey } from '../../src/api-keys/key-store';
import { CLEANUP_FINALIZER } from '../../src/api/common';
import { applyObject, createNamespace, kubeConfig, rest, uniqueName, userKubeConfig } from '../support/cluster';
import { waitFor } from '../support/processes';
import { installOwnCRDs, passthroughModel } from './operator-support';

type ConfigMap = KubeObject & { data?: Record<string, string> };

const ns = uniqueName('key-audit');
// A shard of a past day, as an administrator's earlier install would have left it.
const probeDay = auditDay(new Date('2000-01-01T00:00:00Z'));
const probe = auditShardName(probeDay, 0);
const release = uniqueName('audit');
const client = rest();
const policyObjects = plainObjectsByFile(defaultValues(), { releaseName: release, namespace: ns })['key-audit-policy.yaml'] as KubeObject[];

const entry = (i: number): AuditEntry => ({
  at: new Date().toISOString(),
  action: 'mint',
  actor: `user-${i % 5}`,
  model: { kind: 'PassthroughModel', name: 'm' },
  clientId: `client-${i}`,
  owner: `user-${i % 5}`,
});

/** Answers the API server's status code (0 = accepted). */
async function codeOf(p: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await p;
    return { code: 0, message: '' };
  } catch (err) {
    return { code: (err as { code?: number }).code ?? -1, message: String((err as Error).message) };
  }
}

const mergePatch = (name: string, body: unknown, c: KubeRest = client) =>
  c.request('PATCH', `/api/v1/namespaces/${ns}/configmaps/${name}`, { body, contentType: 'application/merge-patch+json' });

beforeAll(async () => {
  await createNamespace(ns);
  expect(policyObjects.map((o) => o.kind)).toEqual(['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);
  for (const o of policyObjects) await applyObject(o);
  // The policy takes effect once the API server's policy informer has it: probe until a removal is refused.
  await applyObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: probe, namespace: ns, labels: auditShardLabels(probeDay) }, data: { a: '1' } });
  await waitFor('the key audit policy to refuse a removal', async () => {
    const r = await codeOf(mergePatch(probe, { data: { a: null } }));
    if (r.code === 0) await mergePatch(probe, { data: { a: '1' } });
    return r.code !== 0;
  }, { timeoutMs: 30_000, intervalMs: 200 });
});

afterAll(async () => {
  for (const o of [...policyObjects].reverse()) await client.delete(objectRef(o.apiVersion, o.kind, o.metadata.name)).catch(() => undefined);
  await client.mergePatch(objectRef('llm.nebari.dev/v1beta1', 'PassthroughModel', 'audited', ns), { metadata: { finalizers: null } }).catch(() => undefined);
  client.close();
});

it('stores 40 concurrent appends, each exactly once, in one shard of the day', async () => {
  const started = Date.now();
  const writers = Array.from({ length: 4 }, () => new KubeRest(kubeConfig()));
  try {
    await Promise.all(Array.from({ length: 40 }, (_, i) => appendAuditEntry(writers[i % writers.length], ns, entry(i))));
  } finally {
    writers.forEach((w) => w.close());
  }
  console.log(`40 concurrent audit appends (4 clients) in ${((Date.now() - started) / 1000).toFixed(2)} s`);
  const all = await readAuditEntries(client, ns);
  expect(all.map((e) => e.clientId).sort()).toEqual(Array.from({ length: 40 }, (_, i) => `client-${i}`).sort());
  const shard = await client.get<ConfigMap>(objectRef('v1', 'ConfigMap', auditShardName(auditDay(new Date()), 0), ns));
  expect(Object.keys(shard!.data!)).toHaveLength(40);
  expect((await readAuditEntries(client, ns, { user: 'user-3' })).map((e) => e.clientId).sort()).toEqual(['client-13', 'client-18', 'client-23', 'client-28', 'client-3', 'client-33', 'client-38', 'client-8']);
});

it('refuses updates that change or remove an entry or drop the label, and lets entries be added', async () => {
  const name = auditShardName(auditDay(new Date()), 0);
  const shard = (await client.get<ConfigMap>(objectRef('v1', 'ConfigMap', name, ns)))!;
  const [key, value] = Object.entries(shard.data!)[0];

  const changed = await codeOf(mergePatch(name, { data: { [key]: value.replace('mint', 'revoke') } }));
  expect(changed.code).toBe(403);
  expect(changed.message).toContain('key audit entries are append-only');
  expect((await codeOf(mergePatch(name, { data: { [key]: null } }))).code).toBe(403);
  // A full replace (PUT) without the entry is refused too.
  const { [key]: _gone, ...rest } = shard.data!;
  expect((await codeOf(client.request('PUT', `/api/v1/namespaces/${ns}/configmaps/${name}`, { body: { ...shard, data: rest } }))).code).toBe(403);
  const unlabelled = await codeOf(mergePatch(name, { metadata: { labels: { [LABEL_KEY_AUDIT]: null } } }));
  expect(unlabelled.code).toBe(403);
  expect(unlabelled.message).toContain('keeps its label');

  expect((await codeOf(mergePatch(name, { data: { 'added-later': '{}' } }))).code).toBe(0);
  const after = await client.get<ConfigMap>(objectRef('v1', 'ConfigMap', name, ns));
  expect(after!.data![key]).toBe(value);
  expect(Object.keys(after!.data!)).toHaveLength(41);
});

// Issue 29, Medium 3: the log could be diverted and hidden. Each of these was allowed before.
it('refuses an unlabelled ConfigMap under a shard\'s name, a shard moved to another day, immutable and owner references', async () => {
  const day = auditDay(new Date());
  const decoy = await codeOf(client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: auditShardName(day, 7), namespace: ns }, data: {} } as KubeObject));
  expect(decoy.code).toBe(403);
  expect(decoy.message).toContain('an audit ConfigMap keeps its labels');
  const name = auditShardName(day, 0);
  const moved = await codeOf(mergePatch(name, { metadata: { labels: { [LABEL_KEY_AUDIT_DAY]: probeDay } } }));
  expect(moved.code).toBe(403);
  expect(moved.message).toContain(`${LABEL_KEY_AUDIT_DAY}: <day>, and is named`);
  const frozen = await codeOf(mergePatch(name, { immutable: true }));
  expect(frozen.code).toBe(403);
  expect(frozen.message).toContain('never immutable');
  const owned = await codeOf(mergePatch(name, { metadata: { ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'anything', uid: '00000000-0000-0000-0000-000000000000' }] } }));
  expect(owned.code).toBe(403);
  expect(owned.message).toContain('no owner references');
  // Creating a proper shard (what appends do) still passes.
  expect((await codeOf(client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: auditShardName(day, 8), namespace: ns, labels: auditShardLabels(day) }, data: {} } as KubeObject))).code).toBe(0);
});

it('never appends to a ConfigMap under a shard\'s name that is not labelled as one (a namespace without the policy)', async () => {
  const open = uniqueName('key-audit-open');
  await createNamespace(open);
  const day = auditDay(new Date());
  await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: auditShardName(day, 0), namespace: open }, data: {} } as KubeObject);
  await appendAuditEntry(client, open, entry(99));
  expect((await readAuditEntries(client, open)).map((e) => e.clientId)).toEqual(['client-99']);
  const decoy = await client.get<ConfigMap>(objectRef('v1', 'ConfigMap', auditShardName(day, 0), open));
  expect(decoy!.data ?? {}).toEqual({});
  const shard = await client.get<ConfigMap>(objectRef('v1', 'ConfigMap', auditShardName(day, 1), open));
  expect(shard!.metadata.labels).toMatchObject(auditShardLabels(day));
});

it('lets only cluster admins delete a shard', async () => {
  // alice may delete ConfigMaps by RBAC; the policy still refuses her.
  await applyObject({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'cm-admin', namespace: ns }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'delete'] }] });
  await applyObject({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'alice-cm-admin', namespace: ns }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'cm-admin' }, subjects: [{ kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.k8s.io' }] });
  const alice = new KubeRest(userKubeConfig('alice'));
  try {
    let refused = { code: 0, message: '' };
    await waitFor('alice to be allowed by RBAC and refused by the policy', async () => {
      refused = await codeOf(alice.delete(objectRef('v1', 'ConfigMap', probe, ns)));
      return refused.code === 403 && refused.message.includes('only be deleted by cluster administrators');
    }, { timeoutMs: 15_000, intervalMs: 200 });
    expect(await client.get(objectRef('v1', 'ConfigMap', probe, ns))).toBeDefined();
  } finally {
    alice.close();
  }
  // The test's admin is in system:masters.
  expect((await codeOf(client.delete(objectRef('v1', 'ConfigMap', probe, ns)))).code).toBe(0);
});

it('records a mint and a revoke with owner and actor, never the key', async () => {
  await installOwnCRDs();
  const m = passthroughModel(ns, 'audited');
  await applyObject({ ...m, metadata: { ...m.metadata, finalizers: [CLEANUP_FINALIZER] } });
  const model = { kind: 'PassthroughModel' as const, name: 'audited', namespace: ns };
  const minted = await mintKey(client, model, 'carol', 'laptop', { subject: 'sub-carol', groups: ['team-a'], grantedBy: 'groups', source: 'portal', actor: 'carol' });
  expect(await revokeKey(client, model, minted.clientId, { actor: 'admin-dan', reason: 'left the team' })).toBe(true);
  const entries = await readAuditEntries(client, ns, { model: 'audited' });
  expect(entries.map(({ action, actor, owner, subject, clientId, reason }) => ({ action, actor, owner, subject, clientId, reason }))).toEqual([
    { action: 'mint', actor: 'carol', owner: 'carol', subject: 'sub-carol', clientId: minted.clientId, reason: undefined },
    { action: 'revoke', actor: 'admin-dan', owner: 'carol', subject: 'sub-carol', clientId: minted.clientId, reason: 'left the team' },
  ]);
  const shards = await client.list<ConfigMap>('v1', 'ConfigMap', { namespace: ns, labelSelector: `${LABEL_KEY_AUDIT}=true` });
  expect(JSON.stringify(shards.items.map((s) => s.data))).not.toContain(minted.apiKey);
});

it('takes a mint back when its audit entry cannot be written', async () => {
  // alice may read and patch the key objects, but not list ConfigMaps: the audit append fails.
  await applyObject({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: 'key-writer', namespace: ns },
    rules: [
      { apiGroups: [''], resources: ['secrets', 'configmaps'], verbs: ['get', 'patch'] },
      { apiGroups: ['llm.nebari.dev'], resources: ['passthroughmodels'], verbs: ['get'] },
    ],
  });
  await applyObject({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'alice-key-writer', namespace: ns }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'key-writer' }, subjects: [{ kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.k8s.io' }] });
  const model = { kind: 'PassthroughModel' as const, name: 'audited', namespace: ns };
  const alice = new KubeRest(userKubeConfig('alice'));
  try {
    await expect(mintKey(alice, model, 'alice', undefined, { waitMs: 5_000 })).rejects.toThrow(`no key was issued: the key audit log in namespace ${ns} could not be written`);
  } finally {
    alice.close();
  }
  const secret = await client.get<ConfigMap>(objectRef('v1', 'Secret', 'audited-api-keys', ns));
  const metadata = await client.get<ConfigMap>(objectRef('v1', 'ConfigMap', 'audited-api-key-metadata', ns));
  expect(secret!.data ?? {}).toEqual({});
  expect(metadata!.data ?? {}).toEqual({});
});

