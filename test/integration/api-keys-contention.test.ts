// Minting and revoking API keys under contention, on the real API server: 32 concurrent mints on
// one model while CPU burners load the machine must all succeed, each key stored exactly once
// (Secret and metadata); concurrent revokes (two per key) remove each key exactly once and never
// touch keys minted at the same time; the audit log holds each mint and each revoke exactly once.
// Per-user limits (issue 29, Medium 8): concurrent mints of one user never leave more live keys than
// the limit, and mints per hour are counted from the audit log, revoked keys included.
// No operator: the test puts the cleanup finalizer on the model itself, which is all minting
// needs, and mintKey then creates the key objects (racing).
import { spawn, ChildProcess } from 'node:child_process';
import * as os from 'node:os';
import { applyObject, createNamespace, kubeConfig, kubeconfigPath, uniqueName } from '../support/cluster';
import { KubeRest, KubeObject, objectRef } from '../../src/kube/rest';
import { MintedKey, listKeys, mintKey, revokeKey } from '../../src/api-keys/key-store';
import { readAuditEntries } from '../../src/api-keys/audit-log';
import { CLEANUP_FINALIZER } from '../../src/api/common';
import { KeyLimitError } from '../../src/translate/keys/limits';
import { runKeys } from '../../src/cli/keys/keys';
import { installOwnCRDs, passthroughModel } from './operator-support';

const ns = uniqueName('keys-contention');
const model = { kind: 'PassthroughModel' as const, name: 'contended', namespace: ns };
const limited = { kind: 'PassthroughModel' as const, name: 'limited', namespace: ns };
const MINTS = 32;
const USERS = ['alice', 'bob', 'carol', 'dave']; // several mints per user: same user, same model, same hash part

type DataObject = KubeObject & { data?: Record<string, string> };

let client: KubeRest;
const answers = new Map<string, number>(); // `${method} ${code}` -> count, over every request of `client`

/** Busy loops on every core (at most 4), each ending by itself after `maxMs` even if never killed. */
function startCpuBurners(maxMs: number): ChildProcess[] {
  const count = Math.min(4, Math.max(2, os.availableParallelism()));
  return Array.from({ length: count }, () =>
    spawn(process.execPath, ['-e', `const end = Date.now() + ${maxMs}; while (Date.now() < end) {}`], { stdio: 'ignore' }),
  );
}

async function stopCpuBurners(burners: ChildProcess[]): Promise<void> {
  await Promise.all(
    burners.map(async (b) => {
      if (b.exitCode !== null || b.signalCode !== null) return;
      const exited = new Promise((r) => b.once('exit', r));
      b.kill('SIGKILL');
      await exited;
    }),
  );
}

async function keyObjects(): Promise<{ secret: Record<string, string>; metadata: Record<string, string> }> {
  const secret = await client.get<DataObject>(objectRef('v1', 'Secret', 'contended-api-keys', ns));
  const metadata = await client.get<DataObject>(objectRef('v1', 'ConfigMap', 'contended-api-key-metadata', ns));
  return { secret: secret?.data ?? {}, metadata: metadata?.data ?? {} };
}

/** Writes that lost to a concurrent writer (each one retried); a lost create race (POST 409) is expected and not counted. */
function conflictsSoFar(): number {
  return answers.get('PATCH 409') ?? 0;
}

beforeAll(async () => {
  await installOwnCRDs();
  await createNamespace(ns);
  client = new KubeRest(kubeConfig());
  client.metrics = { observeRequest: (method, code) => answers.set(`${method} ${code}`, (answers.get(`${method} ${code}`) ?? 0) + 1) };
  // What the operator does first (and all minting requires): its cleanup finalizer on the model.
  for (const name of [model.name, limited.name]) {
    const m = passthroughModel(ns, name);
    await applyObject({ ...m, metadata: { ...m.metadata, finalizers: [CLEANUP_FINALIZER] } });
  }
});

afterAll(async () => {
  // Let the namespace's model go: drop the finalizer the test put on it.
  for (const name of [model.name, limited.name]) {
    await client?.mergePatch(objectRef('llm.nebari.dev/v1alpha1', 'PassthroughModel', name, ns), { metadata: { finalizers: null } }).catch(() => undefined);
  }
  client?.close();
});

it(`${MINTS} concurrent mints on one model on a loaded machine all succeed, each key stored exactly once; concurrent revokes remove each key once`, async () => {
  const burners = startCpuBurners(180_000);
  try {
    // ---- 32 concurrent mints (the key objects do not exist yet: the mints also race to create them)
    const started = Date.now();
    const results = await Promise.allSettled(Array.from({ length: MINTS }, (_, i) => mintKey(client, model, USERS[i % USERS.length], `mint ${i}`)));
    const mintSeconds = (Date.now() - started) / 1000;
    const mintConflicts = conflictsSoFar();
    const failures = results.flatMap((r) => (r.status === 'rejected' ? [String((r.reason as Error).message)] : []));
    console.log(`${MINTS} concurrent mints: ${MINTS - failures.length} succeeded in ${mintSeconds.toFixed(2)} s (${burners.length} CPU burners, load ${os.loadavg()[0].toFixed(1)}); write conflicts (PATCH 409, retried): ${mintConflicts}`);
    expect(failures).toEqual([]);
    const minted = results.map((r) => (r as PromiseFulfilledResult<MintedKey>).value);

    const ids = minted.map((k) => k.clientId);
    expect(new Set(ids).size).toBe(MINTS);
    const { secret, metadata } = await keyObjects();
    // Exactly the minted keys, each once, in both objects (no orphaned or overwritten entry).
    expect(Object.keys(secret).sort()).toEqual([...ids].sort());
    expect(Object.keys(metadata).sort()).toEqual([...ids].sort());
    minted.forEach((k, i) => {
      expect(Buffer.from(secret[k.clientId], 'base64').toString('utf8')).toBe(k.apiKey);
      expect(JSON.parse(metadata[k.clientId])).toMatchObject({ createdBy: USERS[i % USERS.length], description: `mint ${i}` });
    });
    expect((await listKeys(client, model)).map((r) => r.clientId).sort()).toEqual([...ids].sort());

    // ---- every second key revoked twice at once, while 8 more keys are minted
    const revoked = ids.filter((_, i) => i % 2 === 0);
    const kept = ids.filter((_, i) => i % 2 === 1);
    const revokeStarted = Date.now();
    const [revokeAnswers, moreMinted] = await Promise.all([
      Promise.all([...revoked, ...revoked].map((id) => revokeKey(client, model, id))),
      Promise.all(Array.from({ length: 8 }, (_, i) => mintKey(client, model, USERS[i % USERS.length], `during revokes ${i}`))),
    ]);
    const revokeSeconds = (Date.now() - revokeStarted) / 1000;
    // Each key is removed by exactly one of its two revokes; the other finds it gone.
    revoked.forEach((_, i) => expect([revokeAnswers[i], revokeAnswers[i + revoked.length]].sort()).toEqual([false, true]));
    const after = await keyObjects();
    const expected = [...kept, ...moreMinted.map((k) => k.clientId)].sort();
    expect(Object.keys(after.secret).sort()).toEqual(expected);
    expect(Object.keys(after.metadata).sort()).toEqual(expected);
    for (const k of [...minted.filter((m) => kept.includes(m.clientId)), ...moreMinted]) {
      expect(Buffer.from(after.secret[k.clientId], 'base64').toString('utf8')).toBe(k.apiKey);
    }
    // Revoking what is gone answers false and changes nothing.
    expect(await revokeKey(client, model, revoked[0])).toBe(false);

    // The audit log has one mint entry per key and one revoke entry per revoked key, none lost or doubled.
    const audit = await readAuditEntries(client, ns, { model: model.name });
    const idsOf = (action: string) => audit.filter((e) => e.action === action).map((e) => e.clientId).sort();
    expect(idsOf('mint')).toEqual([...ids, ...moreMinted.map((k) => k.clientId)].sort());
    expect(idsOf('revoke')).toEqual([...revoked].sort());

    const byAnswer = [...answers].sort().map(([k, c]) => `${k}: ${c}`).join(', ');
    console.log(`${revoked.length} double revokes + 8 mints at once in ${revokeSeconds.toFixed(2)} s; write conflicts in all: ${conflictsSoFar()}; requests by answer: ${byAnswer}`);
  } finally {
    await stopCpuBurners(burners);
  }
});

it('per-user limits hold under concurrent mints of one user; mints per hour are counted from the audit log, revoked keys included', async () => {
  const limits = { keysPerUserPerModel: 3, mintsPerUserPerHour: 8 };
  const secretIds = async () => Object.keys((await client.get<DataObject>(objectRef('v1', 'Secret', 'limited-api-keys', ns)))?.data ?? {}).sort();
  // ---- 8 concurrent mints of one user with room for 3: never more than 3 keys, every refusal a limit refusal
  const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => mintKey(client, limited, 'eve', `eve ${i}`, { limits })));
  const failures = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as Error] : []));
  for (const f of failures) expect(f).toBeInstanceOf(KeyLimitError);
  const live = (await listKeys(client, limited)).map((r) => r.clientId).sort();
  console.log(`8 concurrent mints of one user with a limit of 3: ${results.length - failures.length} kept, ${failures.length} refused`);
  expect(live.length).toBe(results.length - failures.length);
  expect(live.length).toBeLessThanOrEqual(3);
  // The Secret holds exactly the listed keys: a key taken back by the second count never reached it.
  expect(await secretIds()).toEqual(live);
  // Topped up to the limit, then refused.
  let mints = live.length;
  while ((await listKeys(client, limited)).length < 3) {
    await mintKey(client, limited, 'eve', 'top up', { limits });
    mints++;
  }
  await expect(mintKey(client, limited, 'eve', 'one too many', { limits })).rejects.toThrow('eve already has 3 live API keys for PassthroughModel limited (limit 3 per user per model');
  // Another user has their own count.
  await mintKey(client, limited, 'frank', 'frank', { limits });

  // ---- revoking makes room for keys but gives no mints back: refused at 8 mints in the hour
  for (;;) {
    for (const r of (await listKeys(client, limited)).filter((k) => k.createdBy === 'eve')) await revokeKey(client, limited, r.clientId, { actor: 'eve' });
    if (mints >= limits.mintsPerUserPerHour) break;
    await mintKey(client, limited, 'eve', `after revoke ${mints}`, { limits });
    mints++;
  }
  await expect(mintKey(client, limited, 'eve', 'too fast', { limits })).rejects.toThrow(/^eve minted 8 API keys in the last hour \(limit 8 per user per hour, chart value portal\.keyLimits\.mintsPerUserPerHour\); wait until /);
  // Refused mints left no audit entry: exactly the kept mints are logged.
  const audit = await readAuditEntries(client, ns, { model: limited.name });
  expect(audit.filter((e) => e.action === 'mint' && e.owner === 'eve')).toHaveLength(8);
  expect((await listKeys(client, limited)).map((r) => r.createdBy)).toEqual(['frank']);

  // ---- `nls keys mint` applies the limits the namespace's portal runs with (its Deployment's
  // environment; nothing runs it here) and mints over them only with --over-limit, on the record.
  await applyObject({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'limits-portal', namespace: ns, labels: { 'app.kubernetes.io/part-of': 'nebari-llm-serving', 'app.kubernetes.io/component': 'portal' } },
    spec: {
      replicas: 0,
      selector: { matchLabels: { app: 'limits-portal' } },
      template: {
        metadata: { labels: { app: 'limits-portal' } },
        spec: { containers: [{ name: 'portal', image: 'portal:test', env: [{ name: 'NLS_PORTAL_KEYS_PER_USER_PER_MODEL', value: '3' }, { name: 'NLS_PORTAL_MINTS_PER_USER_PER_HOUR', value: '8' }] }] },
      },
    },
  });
  const cli = (...extra: string[]) => runKeys(['mint', '--model', limited.name, '--namespace', ns, '--user', 'eve', '--output', 'json', '--kubeconfig', kubeconfigPath(), ...extra], () => undefined);
  await expect(cli()).rejects.toThrow(/^eve minted 8 API keys in the last hour \(limit 8 per user per hour, .*; as an administrator, pass --over-limit to mint anyway$/);
  expect(await cli('--over-limit')).toBe(0);
  const overEntry = (await readAuditEntries(client, ns, { model: limited.name })).filter((e) => e.action === 'mint' && e.owner === 'eve');
  expect(overEntry).toHaveLength(9);
  expect(overEntry.filter((e) => e.reason === 'minted with nls keys mint --over-limit: per-user limits not checked')).toHaveLength(1);
});
