// Issue 29, High 2: a user disabled at the identity provider must not keep a key. On the real API
// server with the real key store: the group refresh round and the portal's mint, with the issuer's
// answer given by the test (the refresh is refused, as for a disabled user) so that a mint can be
// placed exactly inside the window the review found: after the round listed keys, before it
// recorded the refusal. Before the fix that key was never revoked (the round revoked from its
// snapshot, and later rounds skipped refused users).
import { randomBytes } from 'node:crypto';
import { applyObject, createNamespace, kubeConfig, uniqueName } from '../support/cluster';
import { KubeRest, objectRef } from '../../src/kube/rest';
import { listKeys, mintKey } from '../../src/api-keys/key-store';
import { readAuditEntries } from '../../src/api-keys/audit-log';
import { CLEANUP_FINALIZER } from '../../src/api/common';
import { refreshRound } from '../../src/portal/group-refresh';
import { MintRefusedError, mintPortalKey } from '../../src/portal/keys';
import { RefreshRefusedError } from '../../src/portal/oidc';
import { endSessions, isRefused, readUserState, recordLogin, saveRefreshToken } from '../../src/portal/user-tokens';
import { EventRecorder } from '../../src/runtime/events';
import { createLogger } from '../../src/runtime/log';
import { DEFAULT_KEY_LIMITS } from '../../src/translate/keys/limits';
import { installOwnCRDs, passthroughModel } from './operator-support';

const ns = uniqueName('portal-refusal');
const model = { kind: 'PassthroughModel' as const, name: 'team-model', namespace: ns };
const sessionKey = randomBytes(32);
const alice = { sub: 'alice-subject', username: 'alice@example.com' };
const grant = { allowed: true, grantedBy: 'groups' as const, groups: ['ml-team'] };
const expiresAt = () => new Date(Date.now() + 86_400_000);

let client: KubeRest;

const aliceKeys = async () => (await listKeys(client, model)).filter((k) => k.subject === alice.sub).map((k) => k.clientId).sort();

function deps(refresh: (token: string, sub: string) => Promise<never>) {
  const log = createLogger({ level: 'warn' });
  return { client, namespace: ns, sessionKey, refresh, log, events: new EventRecorder(client, 'nls-portal', 'test', log) };
}

beforeAll(async () => {
  await installOwnCRDs();
  await createNamespace(ns);
  client = new KubeRest(kubeConfig());
  // What the operator does first (and all minting requires): its cleanup finalizer on the model.
  const m = passthroughModel(ns, model.name);
  await applyObject({ ...m, metadata: { ...m.metadata, finalizers: [CLEANUP_FINALIZER] } });
});

afterAll(async () => {
  await client?.mergePatch(objectRef('llm.nebari.dev/v1alpha1', 'PassthroughModel', model.name, ns), { metadata: { finalizers: null } }).catch(() => undefined);
  client?.close();
});

it('revokes a key minted while the round was refreshing a user the issuer refuses, and every later key of that user in every later round', async () => {
  await saveRefreshToken(client, ns, sessionKey, { ...alice, refreshToken: 'alice-refresh-token' });
  const earlier = await mintPortalKey(client, model, { ...alice, description: 'earlier', grant, expiresAt: expiresAt(), limits: DEFAULT_KEY_LIMITS });
  let racing: string | undefined;
  const refused = deps(async () => {
    // The account is disabled; alice's open session mints while the issuer is being asked, after
    // the mint's own refusal check and before the round records the refusal.
    racing = (await mintPortalKey(client, model, { ...alice, description: 'racing', grant, expiresAt: expiresAt(), limits: DEFAULT_KEY_LIMITS })).clientId;
    throw new RefreshRefusedError('invalid_grant');
  });
  const first = await refreshRound(refused);
  expect(racing).toBeDefined();
  expect(await isRefused(client, ns, alice.sub)).toBe(true);
  expect(await aliceKeys()).toEqual([]);
  expect(first).toMatchObject({ users: 1, revoked: 2, failed: 0 });

  // A key of hers that appears later (a take-back that failed, a key written by other means) goes
  // at the next round: refused users are not skipped while they stay refused.
  const later = await mintKey(client, model, alice.username, 'later', { subject: alice.sub, groups: ['ml-team'], grantedBy: 'groups', source: 'portal', waitMs: 30_000 });
  const second = await refreshRound(deps(async () => {
    throw new Error('a refused user must not be refreshed again');
  }));
  expect(second).toMatchObject({ users: 1, revoked: 1, failed: 0 });
  expect(await aliceKeys()).toEqual([]);

  const revokedIds = (await readAuditEntries(client, ns, {}))
    .filter((e) => e.action === 'access-revoked' && e.reason === 'user-refresh-refused')
    .map((e) => e.clientId)
    .sort();
  expect(revokedIds).toEqual([earlier.clientId, racing!, later.clientId].sort());
});

it('takes back a key whose write finished after the refusal was recorded, and tells the user to log in again', async () => {
  const bob = { sub: 'bob-subject', username: 'bob@example.com' };
  await saveRefreshToken(client, ns, sessionKey, { ...bob, refreshToken: 'bob-refresh-token' });
  await refreshRound(deps(async (_token, sub) => {
    if (sub === bob.sub) throw new RefreshRefusedError('invalid_grant');
    throw new Error(`unexpected refresh of ${sub}`);
  }));
  expect(await isRefused(client, ns, bob.sub)).toBe(true);
  // The portal's pre-check ran before the refusal (the session looked fine); the write lands after it.
  await expect(mintPortalKey(client, model, { ...bob, description: 'too late', grant, expiresAt: expiresAt(), limits: DEFAULT_KEY_LIMITS })).rejects.toThrow(MintRefusedError);
  expect((await listKeys(client, model)).filter((k) => k.subject === bob.sub)).toEqual([]);
});

it('keeps each user\'s session generation and current groups server-side: a login keeps it, logout and a refusal replace it, the round stores the groups it read', async () => {
  // Issue 29, Medium 5: what every request of a session is checked against.
  const carol = { sub: 'carol-subject', username: 'carol@example.com' };
  const first = await recordLogin(client, ns, sessionKey, { ...carol, groups: ['ml-team', 'platform-admins'], refreshToken: 'carol-refresh-token' });
  expect(await readUserState(client, ns, carol.sub)).toEqual({ refused: false, generation: first, groups: ['ml-team', 'platform-admins'] });
  // A login elsewhere does not end her other sessions.
  expect(await recordLogin(client, ns, sessionKey, { ...carol, groups: ['ml-team', 'platform-admins'], refreshToken: 'carol-refresh-token' })).toBe(first);

  // The issuer now says she is no admin: the round stores that, the generation stays.
  await refreshRound(deps(async (_token, sub) => {
    if (sub === carol.sub) return { sub, username: carol.username, groups: ['ml-team'] } as never;
    throw new RefreshRefusedError('invalid_grant');
  }));
  expect(await readUserState(client, ns, carol.sub)).toEqual({ refused: false, generation: first, groups: ['ml-team'] });

  await endSessions(client, ns, carol.sub);
  const afterLogout = (await readUserState(client, ns, carol.sub))!.generation;
  expect(afterLogout).toBeDefined();
  expect(afterLogout).not.toBe(first);
  const second = await recordLogin(client, ns, sessionKey, { ...carol, groups: ['ml-team'], refreshToken: 'carol-refresh-token' });
  expect(second).toBe(afterLogout);

  await refreshRound(deps(async () => {
    throw new RefreshRefusedError('invalid_grant');
  }));
  const refused = (await readUserState(client, ns, carol.sub))!;
  expect(refused.refused).toBe(true);
  expect(refused.generation).not.toBe(second);
  // Logging out a user the portal stores nothing for is not an error.
  await expect(endSessions(client, ns, 'nobody-subject')).resolves.toBeUndefined();
});
