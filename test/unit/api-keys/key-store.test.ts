// The key store's per-user limits and listing (issue 29, Medium 8) against an in-memory API server:
// a mint over a limit is refused before anything is written, counting only the owner's live keys
// on that model and their mints of the last hour from the audit log; concurrent mints never leave
// more keys than the limit; listing reads the metadata ConfigMap and never the key Secret.
import { MemoryKube } from './memory-kube';
import { listKeys, mintKey, revokeKey } from '../../../src/api-keys/key-store';
import { mintPortalKey, revokePortalKey } from '../../../src/portal/keys';
import { appendAuditEntry, readAuditEntries } from '../../../src/api-keys/audit-log';
import { CLEANUP_FINALIZER } from '../../../src/api/common';
import { KeyLimitError } from '../../../src/translate/keys/limits';
import { ModelRef, desiredApiKeyMetadataConfigMap, desiredApiKeySecret } from '../../../src/translate/keys/api-keys';

const ns = 'llm';
const model: ModelRef = { kind: 'PassthroughModel', name: 'gpt', namespace: ns };

async function cluster(): Promise<MemoryKube> {
  const kube = new MemoryKube();
  await kube.put({ apiVersion: 'llm.nebari.dev/v1beta1', kind: 'PassthroughModel', metadata: { name: 'gpt', namespace: ns, uid: 'u1', finalizers: [CLEANUP_FINALIZER] } });
  return kube;
}

const record = (createdBy: string, extra: Record<string, unknown> = {}) => JSON.stringify({ createdBy, createdAt: '2026-01-01T00:00:00.000Z', ...extra });

async function keyData(kube: MemoryKube): Promise<{ secret: Record<string, string>; metadata: Record<string, string> }> {
  const secret = await kube.read({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'gpt-api-keys', namespace: ns } });
  const metadata = await kube.read({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'gpt-api-key-metadata', namespace: ns } });
  return { secret: secret?.data ?? {}, metadata: metadata?.data ?? {} };
}

describe('listing keys', () => {
  it('reads the metadata ConfigMap only, never the key Secret', async () => {
    const kube = await cluster();
    await kube.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'gpt-api-keys', namespace: ns }, data: { 'id-a': Buffer.from('sk-a').toString('base64'), 'id-b': Buffer.from('sk-b').toString('base64') } });
    await kube.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'gpt-api-key-metadata', namespace: ns }, data: { 'id-a': record('alice', { description: 'laptop' }), 'id-b': record('bob') } });
    const records = await listKeys(kube, model);
    expect(records).toEqual([
      { clientId: 'id-a', createdBy: 'alice', createdAt: '2026-01-01T00:00:00.000Z', description: 'laptop' },
      { clientId: 'id-b', createdBy: 'bob', createdAt: '2026-01-01T00:00:00.000Z' },
    ]);
    expect(kube.requests.filter((r) => r.path.includes('/secrets'))).toEqual([]);
    expect(kube.requests.map((r) => `${r.method} ${r.path}`)).toEqual([`GET /api/v1/namespaces/${ns}/configmaps/gpt-api-key-metadata`]);
  });

  it('lists nothing, without reading the Secret, for a model without key objects', async () => {
    const kube = await cluster();
    expect(await listKeys(kube, model)).toEqual([]);
    expect(kube.requests.filter((r) => r.path.includes('/secrets'))).toEqual([]);
  });
});

describe('per-user limits on minting', () => {
  it('refuses a mint at keysPerUserPerModel, counting only that user\'s live keys on that model, before writing anything', async () => {
    const kube = await cluster();
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    const inADay = new Date(Date.now() + 86_400_000).toISOString();
    await kube.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'gpt-api-keys', namespace: ns }, data: {} });
    await kube.put({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'gpt-api-key-metadata', namespace: ns },
      data: {
        'alice-1': record('alice', { expiresAt: inADay }),
        // Expired (the operator has not removed it yet) and unreadable expiry: not live, not counted.
        'alice-old': record('alice', { expiresAt: hourAgo }),
        'alice-bad': record('alice', { expiresAt: 'soon' }),
        // Someone else's keys do not count for alice.
        'bob-1': record('bob'),
        'bob-2': record('bob'),
      },
    });
    const limits = { keysPerUserPerModel: 2, mintsPerUserPerHour: 100 };
    const second = await mintKey(kube, model, 'alice', 'second', { limits, waitMs: 2_000 });
    const refused = mintKey(kube, model, 'alice', 'third', { limits, waitMs: 2_000 });
    await expect(refused).rejects.toThrow(KeyLimitError);
    await expect(refused).rejects.toThrow(
      'alice already has 2 live API keys for PassthroughModel gpt (limit 2 per user per model, chart value portal.keyLimits.keysPerUserPerModel); revoke a key you no longer use, or ask an administrator to raise the limit',
    );
    const { secret, metadata } = await keyData(kube);
    expect(Object.keys(secret)).toEqual([second.clientId]);
    expect(Object.keys(metadata).sort()).toEqual(['alice-1', 'alice-bad', 'alice-old', 'bob-1', 'bob-2', second.clientId].sort());
    expect((await readAuditEntries(kube, ns)).map((e) => e.clientId)).toEqual([second.clientId]);
    // Bob is below the limit on his own count; a renamed alice (same OIDC subject) is not.
    await expect(mintKey(kube, model, 'bob', 'b3', { limits: { ...limits, keysPerUserPerModel: 3 }, waitMs: 2_000 })).resolves.toHaveProperty('clientId');
    await kube.put({ ...(await kube.read({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'gpt-api-key-metadata', namespace: ns } }))!, data: { s: record('alice', { subject: 'sub-alice' }), t: record('alice', { subject: 'sub-alice' }) } });
    await expect(mintKey(kube, model, 'alice.renamed', 'renamed', { subject: 'sub-alice', limits, waitMs: 2_000 })).rejects.toThrow('alice.renamed already has 2 live API keys');
  });

  it('refuses a mint at mintsPerUserPerHour, counted from the audit log, so revoking gives no mints back', async () => {
    const kube = await cluster();
    const limits = { keysPerUserPerModel: 100, mintsPerUserPerHour: 3 };
    // Mints before the hour do not count.
    await appendAuditEntry(kube, ns, { at: new Date(Date.now() - 2 * 3_600_000).toISOString(), action: 'mint', actor: 'alice', model: { kind: 'PassthroughModel', name: 'other' }, clientId: 'old', owner: 'alice' });
    for (let i = 0; i < 3; i++) {
      const k = await mintKey(kube, model, 'alice', `k${i}`, { limits, waitMs: 2_000 });
      expect(await revokeKey(kube, model, k.clientId, { actor: 'alice', waitMs: 2_000 })).toBe(true);
    }
    const refused = mintKey(kube, model, 'alice', 'k3', { limits, waitMs: 2_000 });
    await expect(refused).rejects.toThrow(KeyLimitError);
    await expect(refused).rejects.toThrow(/^alice minted 3 API keys in the last hour \(limit 3 per user per hour, chart value portal\.keyLimits\.mintsPerUserPerHour\); wait until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z, or ask an administrator$/);
    expect((await keyData(kube)).secret).toEqual({});
    // Other users are not affected; without limits (nls keys mint --over-limit) the mint goes through, with the reason in its audit entry.
    await expect(mintKey(kube, model, 'bob', 'b', { limits, waitMs: 2_000 })).resolves.toHaveProperty('clientId');
    const over = await mintKey(kube, model, 'alice', 'over', { reason: 'minted with nls keys mint --over-limit: per-user limits not checked', waitMs: 2_000 });
    expect((await readAuditEntries(kube, ns)).find((e) => e.clientId === over.clientId)).toMatchObject({ action: 'mint', owner: 'alice', reason: 'minted with nls keys mint --over-limit: per-user limits not checked' });
  });

  it('never leaves more live keys than keysPerUserPerModel after concurrent mints of one user', async () => {
    const kube = await cluster();
    const limits = { keysPerUserPerModel: 2, mintsPerUserPerHour: 100 };
    const results = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => mintKey(kube, model, 'alice', `c${i}`, { limits, waitMs: 2_000 })));
    const failures = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as Error] : []));
    for (const f of failures) expect(f).toBeInstanceOf(KeyLimitError);
    const { secret, metadata } = await keyData(kube);
    expect(Object.keys(secret).length).toBeLessThanOrEqual(2);
    expect(Object.keys(metadata).sort()).toEqual(Object.keys(secret).sort());
    expect(Object.keys(secret).length).toBe(results.length - failures.length);
    // What is left can still be topped up to the limit, and no further.
    const left = 2 - Object.keys(secret).length;
    for (let i = 0; i < left; i++) await mintKey(kube, model, 'alice', `top${i}`, { limits, waitMs: 2_000 });
    await expect(mintKey(kube, model, 'alice', 'one too many', { limits, waitMs: 2_000 })).rejects.toThrow(KeyLimitError);
    expect(Object.keys((await keyData(kube)).secret)).toHaveLength(2);
  });
});

describe('who the audit log names (issue 29, Low)', () => {
  it('records the actor\'s OIDC subject beside their name for a portal mint and revoke', async () => {
    const kube = await cluster();
    // The portal waits for the operator's key objects rather than creating them (issue 29, Medium 6).
    await kube.put(desiredApiKeySecret(model));
    await kube.put(desiredApiKeyMetadataConfigMap(model));
    const minted = await mintPortalKey(kube, model, { sub: 'sub-alice', username: 'alice', description: 'laptop', grant: { allowed: true, grantedBy: 'groups', groups: ['team-a'] }, expiresAt: new Date(Date.now() + 86_400_000), limits: { keysPerUserPerModel: 10, mintsPerUserPerHour: 10 } });
    expect(await revokePortalKey(kube, model, minted.clientId, { actor: 'root', actorSubject: 'sub-root', reason: 'revoked by an administrator' })).toBe(true);
    const entries = await readAuditEntries(kube, ns);
    expect(entries.map((e) => [e.action, e.actor, e.actorSubject, e.owner, e.subject])).toEqual([
      ['mint', 'alice', 'sub-alice', 'alice', 'sub-alice'],
      ['revoke', 'root', 'sub-root', 'alice', 'sub-alice'],
    ]);
  });
});
