// Issue 29, High 2: a user disabled at the identity provider must not keep a key. On the real API
// server with the real key store: the group refresh round and the portal's mint, with the issuer's
// answer given by the test (the refresh is refused, as for a disabled user) so that a mint can be
// placed exactly inside the window the review found: after the round listed keys, before it
// recorded the refusal. Before the fix that key was never revoked (the round revoked from its
// snapshot, and later rounds skipped refused users).
// Issue 29, Medium 7 (group revocation failed open, silently), last in this file: a user whose
// refresh keeps failing for another reason, or who has no readable refresh token, loses their keys
// after the fail-closed period; rotating the session key keeps stored tokens readable; the round's
// numbers reach the portal's metrics.
// Issue 29, Medium 6 (the portal's Role covered every Secret of the namespace, create included):
// every call of this file that the portal makes runs as the portal's ServiceAccount under exactly
// the chart's portal Role and admission policies, so the portal's paths are proven to work with
// those rights; the last tests try what a compromised portal would, and must be refused. The
// portal holds no right on Secrets by kind but create: the Role naming the key and user Secrets it
// may get and patch is kept by the operator's code (src/operator/portal-secrets-role.ts), run here
// as the operator's ServiceAccount under the chart's operator Role, so the API server's escalation
// check on that Role is passed for real.
import { randomBytes } from 'node:crypto';
import * as k8s from '@kubernetes/client-node';
import { applyObject, createNamespace, kubeConfig, rest, uniqueName } from '../support/cluster';
import { KubeObject, KubeRest, objectRef } from '../../src/kube/rest';
import { plainObjects } from '../../src/chart/render';
import { defaultValues } from '../../src/chart/values-schema';
import { desiredApiKeyMetadataConfigMap, desiredApiKeySecret } from '../../src/translate/keys/api-keys';
import { revokePortalKey } from '../../src/portal/keys';
import { waitFor } from '../support/processes';
import { listKeys, mintKey } from '../../src/api-keys/key-store';
import { readAuditEntries } from '../../src/api-keys/audit-log';
import { CLEANUP_FINALIZER } from '../../src/api/common';
import { REFRESH_FAILING_REASON, RefreshDeps, refreshRound } from '../../src/portal/group-refresh';
import { portalMetrics } from '../../src/portal/metrics';
import { loadSessionKeys } from '../../src/portal/session';
import { MintRefusedError, mintPortalKey } from '../../src/portal/keys';
import { RefreshRefusedError } from '../../src/portal/oidc';
import { endSessions, isRefused, listStoredUsers, mintStanding, readUserState, recordLogin, saveRefreshToken, userSecretName } from '../../src/portal/user-tokens';
import { EventRecorder } from '../../src/runtime/events';
import { createLogger } from '../../src/runtime/log';
import { DEFAULT_KEY_LIMITS } from '../../src/translate/keys/limits';
import { installOwnCRDs, passthroughModel } from './operator-support';
import { PortalSecretsRole } from '../../src/operator/portal-secrets-role';
import { secretNamesOfRole } from '../../src/translate/keys/portal-secrets';
import { untilReadable } from '../../src/portal/user-tokens';

const ns = uniqueName('portal-refusal');
const model = { kind: 'PassthroughModel' as const, name: 'team-model', namespace: ns };
const sessionKey = randomBytes(32);
const alice = { sub: 'alice-subject', username: 'alice@example.com' };
const grant = { allowed: true, grantedBy: 'groups' as const, groups: ['ml-team'] };
const expiresAt = () => new Date(Date.now() + 86_400_000);

// The chart with the portal on, released into this file's namespace.
const release = uniqueName('refusal');
const defaults = defaultValues();
const chart = plainObjects(
  {
    ...defaults,
    platform: { ...defaults.platform, jwt: { ...defaults.platform.jwt, issuer: 'https://issuer.example.com', audiences: ['nebari-llm'] } },
    portal: { ...defaults.portal, enabled: true, hostname: 'llm-keys.example.com', oidc: { ...defaults.portal.oidc, clientId: 'nls-portal' } },
  },
  { releaseName: release, namespace: ns },
) as KubeObject[];
const portalDeployment = chart.find((o) => o.kind === 'Deployment' && o.metadata.labels?.['app.kubernetes.io/component'] === 'portal') as KubeObject & {
  spec: { template: { spec: { serviceAccountName: string; containers: Array<{ env: Array<{ name: string; value?: string }> }> } } };
};
const portalServiceAccount = portalDeployment.spec.template.spec.serviceAccountName;
const portalEnv = (name: string) => portalDeployment.spec.template.spec.containers[0].env.find((e) => e.name === name)!.value!;
const sessionSecretName = portalEnv('NLS_PORTAL_SESSION_SECRET');
/** The Role the operator keeps for the portal, as the chart names it to both. */
const secretsRole = portalEnv('NLS_PORTAL_SECRETS_ROLE');
const operatorServiceAccount = (chart.find((o) => o.kind === 'Deployment' && o.metadata.labels?.['app.kubernetes.io/component'] === 'operator') as typeof portalDeployment).spec.template.spec.serviceAccountName;
// The portal's ServiceAccount, Role and bindings (its own Role and the operator's), every admission
// policy the chart ships, and the operator's ServiceAccount, Role and binding in this namespace.
const inNamespace = (kind: string) => chart.filter((o) => o.kind === kind && o.metadata.namespace === ns) as Array<KubeObject & { subjects?: Array<{ name: string }>; roleRef?: { name: string } }>;
const bindings = inNamespace('RoleBinding').filter((b) => b.subjects?.some((x) => [portalServiceAccount, operatorServiceAccount].includes(x.name)));
const portalRights = [
  ...chart.filter((o) => ['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'].includes(o.kind)),
  ...inNamespace('ServiceAccount').filter((o) => [portalServiceAccount, operatorServiceAccount].includes(o.metadata.name)),
  ...inNamespace('Role').filter((r) => bindings.some((b) => b.roleRef?.name === r.metadata.name)),
  ...bindings,
];

/** An API client as one of the chart's ServiceAccounts, with a token from the TokenRequest API. */
async function portalClient(serviceAccount = portalServiceAccount): Promise<KubeRest> {
  const kc = kubeConfig();
  const review = await admin.request<{ status: { token: string } }>('POST', `/api/v1/namespaces/${ns}/serviceaccounts/${serviceAccount}/token`, {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  const cluster = kc.getCurrentCluster()!;
  const sa = new k8s.KubeConfig();
  sa.loadFromOptions({ clusters: [cluster], users: [{ name: 'portal', token: review.status.token }], contexts: [{ name: 'portal', cluster: cluster.name, user: 'portal' }], currentContext: 'portal' });
  return new KubeRest(sa);
}

/** The portal's calls, as the portal (the chart's RBAC and admission policies). */
let client: KubeRest;
/** What administrators do (and the operator, where its rights are not the point). */
let admin: KubeRest;
/** The operator's API client: its ServiceAccount under the chart's operator Role. */
let operatorClient: KubeRest;
/** The operator's keeper of the portal's Secret Role, as the leader runs it. */
let roleKeeper: PortalSecretsRole;
const startRoleKeeper = () => {
  const keeper = new PortalSecretsRole(operatorClient, { namespace: ns, roleName: secretsRole }, createLogger({ level: 'warn' }));
  keeper.start();
  return keeper;
};

const aliceKeys = async () => (await listKeys(client, model)).filter((k) => k.subject === alice.sub).map((k) => k.clientId).sort();

function deps(refresh: (token: string, sub: string) => Promise<never>) {
  const log = createLogger({ level: 'warn' });
  return { client, namespace: ns, sessionKey, secretsRole, refresh, log, events: new EventRecorder(client, 'nls-portal', 'test', log) };
}

beforeAll(async () => {
  await installOwnCRDs();
  await createNamespace(ns);
  admin = rest();
  for (const o of portalRights) await applyObject(o);
  client = await portalClient();
  operatorClient = await portalClient(operatorServiceAccount);
  // What the operator does first (and all minting requires): its cleanup finalizer on the model,
  // then the model's key objects (the portal may not create them), then names the key Secret in
  // the portal's Secret Role.
  const m = passthroughModel(ns, model.name);
  await applyObject({ ...m, metadata: { ...m.metadata, finalizers: [CLEANUP_FINALIZER] } });
  await applyObject(desiredApiKeySecret(model));
  await applyObject(desiredApiKeyMetadataConfigMap(model));
  roleKeeper = startRoleKeeper();
  await roleKeeper.readable(desiredApiKeySecret(model).metadata.name);
  // The policies are in force once a write they refuse is refused (a dry run changes nothing).
  await waitFor(
    'the portal admission policy',
    async () =>
      client
        .create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'policy-probe', namespace: ns }, type: 'Opaque' } as KubeObject, { dryRun: true })
        .then(() => false)
        .catch((err: { code?: number }) => err.code === 403),
    { timeoutMs: 20_000 },
  );
}, 60_000);

afterAll(async () => {
  await roleKeeper?.stop();
  operatorClient?.close();
  await admin?.mergePatch(objectRef('llm.nebari.dev/v1alpha1', 'PassthroughModel', model.name, ns), { metadata: { finalizers: null } }).catch(() => undefined);
  for (const o of portalRights.filter((x) => !x.metadata.namespace)) await admin?.delete(o).catch(() => undefined);
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
  const later = await mintKey(admin, model, alice.username, 'later', { subject: alice.sub, groups: ['ml-team'], grantedBy: 'groups', source: 'portal', waitMs: 30_000 });
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

describe('group revocation fails closed (issue 29, Medium 7)', () => {
  const t0 = new Date('2026-12-04T00:00:00Z');
  const hours = (h: number) => new Date(t0.getTime() + h * 3_600_000);
  /** A round at `at`, the issuer answering with `answer` for users the test owns; other (earlier, refused) users are never refreshed. */
  function round(at: Date, answer: (sub: string, token: string) => Promise<never> | Promise<{ sub: string; username: string; groups: string[] }>, extra: Partial<RefreshDeps> = {}) {
    return refreshRound({ ...deps(((token: string, sub: string) => answer(sub, token)) as never), failClosedAfterSeconds: 86_400, now: () => at, ...extra });
  }
  const unreachable = async () => {
    throw new TypeError('fetch failed');
  };
  const keysOf = async (sub: string) => (await listKeys(client, model)).filter((k) => k.subject === sub).map((k) => k.clientId);

  it('keeps the keys of a user whose refresh fails for another reason until the period ends, then revokes them and marks the user refused, on the record', async () => {
    const dave = { sub: 'dave-subject', username: 'dave@example.com' };
    await recordLogin(client, ns, sessionKey, { ...dave, groups: ['ml-team'], refreshToken: 'dave-refresh-token' });
    const key = await mintPortalKey(client, model, { ...dave, description: 'dave laptop', grant, expiresAt: expiresAt(), limits: DEFAULT_KEY_LIMITS });
    const metrics = portalMetrics();

    expect(await round(t0, unreachable, { metrics })).toMatchObject({ failed: 1, failedClosed: 0, revoked: 0 });
    expect(await round(hours(23), unreachable, { metrics })).toMatchObject({ failed: 1, failedClosed: 0, revoked: 0 });
    expect(await keysOf(dave.sub)).toEqual([key.clientId]);
    expect((await listStoredUsers(client, ns, sessionKey, secretsRole)).find((u) => u.sub === dave.sub)).toMatchObject({ refreshFailures: 2, refreshFailingSince: t0, refused: false });
    expect(await metrics.registry.getSingleMetricAsString('nls_portal_users_refresh_failing')).toMatch(/^nls_portal_users_refresh_failing 1$/m);

    // A day after the first failure: nobody could confirm dave's access all that time.
    expect(await round(hours(24), unreachable, { metrics })).toMatchObject({ failed: 1, failedClosed: 1, revoked: 1 });
    expect(await keysOf(dave.sub)).toEqual([]);
    expect(await isRefused(client, ns, dave.sub)).toBe(true);
    const audit = (await readAuditEntries(client, ns, {})).filter((e) => e.clientId === key.clientId && e.action === 'access-revoked');
    expect(audit).toEqual([expect.objectContaining({ actor: 'portal', reason: REFRESH_FAILING_REASON, subject: dave.sub })]);
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/^nls_portal_keys_revoked_total\{reason="user-refresh-failing"\} 1$/m);
    expect(text).toMatch(/^nls_portal_users_failed_closed_total 1$/m);
    expect(text).toMatch(/^nls_portal_users_refresh_failing 0$/m);
    expect((await listStoredUsers(client, ns, sessionKey, secretsRole)).find((u) => u.sub === dave.sub)).toMatchObject({ refused: true, refusedBy: 'fail-closed' });
    // A key of his found in a later round (written by other means) goes too, for the same reason.
    const later = await mintKey(admin, model, dave.username, 'later', { subject: dave.sub, groups: ['ml-team'], grantedBy: 'groups', source: 'portal', waitMs: 30_000 });
    expect(await round(hours(25), unreachable)).toMatchObject({ revoked: 1 });
    expect((await readAuditEntries(client, ns, {})).find((e) => e.clientId === later.clientId && e.action === 'access-revoked')).toMatchObject({ reason: REFRESH_FAILING_REASON });
    // Logging in again (the issuer confirms dave) lifts the mark and restarts the count.
    await recordLogin(client, ns, sessionKey, { ...dave, groups: ['ml-team'], refreshToken: 'dave-refresh-token-2' });
    expect((await listStoredUsers(client, ns, sessionKey, secretsRole)).find((u) => u.sub === dave.sub)).toMatchObject({ refused: false, refreshFailures: 0 });
    expect((await listStoredUsers(client, ns, sessionKey, secretsRole)).find((u) => u.sub === dave.sub)?.refreshFailingSince).toBeUndefined();
  });

  it('restarts the count when a refresh succeeds again', async () => {
    const erin = { sub: 'erin-subject', username: 'erin@example.com' };
    await recordLogin(client, ns, sessionKey, { ...erin, groups: ['ml-team'], refreshToken: 'erin-refresh-token' });
    const answers = (sub: string) => (sub === erin.sub ? Promise.resolve({ sub, username: erin.username, groups: ['ml-team'] }) : unreachable());
    await round(t0, (sub) => (sub === erin.sub ? unreachable() : answers(sub)));
    await round(hours(20), answers);
    await round(hours(21), (sub) => (sub === erin.sub ? unreachable() : answers(sub)));
    // Failing since 21 h, not since 0 h: a day after 0 h is no reason to revoke.
    await round(hours(30), (sub) => (sub === erin.sub ? unreachable() : answers(sub)));
    expect(await isRefused(client, ns, erin.sub)).toBe(false);
    expect((await listStoredUsers(client, ns, sessionKey, secretsRole)).find((u) => u.sub === erin.sub)).toMatchObject({ refreshFailures: 2, refreshFailingSince: hours(21) });
  });

  it('counts users without a refresh token and with one no key opens, refuses their mints, and fails them closed after the period', async () => {
    const frank = { sub: 'frank-subject', username: 'frank@example.com' };
    const gina = { sub: 'gina-subject', username: 'gina@example.com' };
    await recordLogin(client, ns, sessionKey, { ...frank, groups: ['ml-team'] });
    // gina's token was sealed with a key that is gone (the session Secret was deleted and recreated).
    await recordLogin(client, ns, randomBytes(32), { ...gina, groups: ['ml-team'], refreshToken: 'gina-refresh-token' });
    expect(await mintStanding(client, ns, sessionKey, frank.sub)).toEqual({ refused: false, refreshToken: 'missing' });
    expect(await mintStanding(client, ns, sessionKey, gina.sub)).toEqual({ refused: false, refreshToken: 'unreadable' });
    // Keys they hold from before (minted when the portal still allowed it, or by other means).
    for (const u of [frank, gina]) await mintKey(admin, model, u.username, 'older key', { subject: u.sub, groups: ['ml-team'], grantedBy: 'groups', source: 'portal', waitMs: 30_000 });
    const metrics = portalMetrics();
    const everyoneElse = (sub: string) => Promise.resolve({ sub, username: sub, groups: ['ml-team'] });
    const first = await round(t0, (sub) => (sub === frank.sub || sub === gina.sub ? Promise.reject(new Error(`${sub} has no usable token`)) : everyoneElse(sub)), { metrics });
    expect(first).toMatchObject({ withoutRefreshToken: 1, unreadable: 1, failedClosed: 0 });
    expect(await metrics.registry.getSingleMetricAsString('nls_portal_users_without_refresh_token')).toMatch(/^nls_portal_users_without_refresh_token 1$/m);
    expect(await metrics.registry.getSingleMetricAsString('nls_portal_users_refresh_token_unreadable')).toMatch(/^nls_portal_users_refresh_token_unreadable 1$/m);
    expect(await keysOf(frank.sub)).toHaveLength(1);

    const last = await round(hours(24), everyoneElse, { metrics });
    expect(last).toMatchObject({ failedClosed: 2, withoutRefreshToken: 0, unreadable: 0 });
    expect([await keysOf(frank.sub), await keysOf(gina.sub)]).toEqual([[], []]);
    expect([await isRefused(client, ns, frank.sub), await isRefused(client, ns, gina.sub)]).toEqual([true, true]);
  });

  it('rotates the session key with a key list: tokens sealed with the old key stay readable, are re-sealed with the new one, and the old key can then be dropped', async () => {
    const secretName = sessionSecretName;
    const [oldKey] = await loadSessionKeys(client, ns, secretName);
    const hana = { sub: 'hana-subject', username: 'hana@example.com' };
    await recordLogin(client, ns, [oldKey], { ...hana, groups: ['ml-team'], refreshToken: 'hana-refresh-token' });
    // Rotation, as docs/key-portal.md describes it: add a newer key entry; the portal loads both.
    const added = randomBytes(32);
    await admin.mergePatch(objectRef('v1', 'Secret', secretName, ns), { data: { 'key-20261204T090000Z': added.toString('base64') } });
    const ring = await loadSessionKeys(client, ns, secretName);
    expect(ring).toEqual([oldKey, added]);
    const seen: string[] = [];
    const answer = (sub: string, token: string) => {
      if (sub === hana.sub) seen.push(token);
      return Promise.resolve({ sub, username: sub, groups: ['ml-team'] });
    };
    const metrics = portalMetrics();
    expect(await round(t0, answer, { sessionKey: ring, metrics })).toMatchObject({ onOldKey: 0 });
    expect(await metrics.registry.getSingleMetricAsString('nls_portal_users_refresh_token_old_key')).toMatch(/ 0$/m);
    // The old key dropped: hana's token opens with the new key alone, and a cookie sealed with the old key does not (everyone logs in again).
    await admin.jsonPatch(objectRef('v1', 'Secret', secretName, ns), [{ op: 'remove', path: '/data/key' }]);
    const rotated = await loadSessionKeys(client, ns, secretName);
    expect(rotated).toEqual([added]);
    expect((await listStoredUsers(client, ns, rotated, secretsRole)).find((u) => u.sub === hana.sub)).toMatchObject({ refreshToken: 'hana-refresh-token', refreshTokenUnreadable: false });
    await round(hours(1), answer, { sessionKey: rotated });
    expect(seen).toEqual(['hana-refresh-token', 'hana-refresh-token']);
    expect(await isRefused(client, ns, hana.sub)).toBe(false);
  });
});

describe("the portal's rights (issue 29, Medium 6)", () => {
  const refused = { code: 403 };
  const secret = (name: string, type: string, extra: Partial<KubeObject['metadata']> = {}) =>
    ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: ns, ...extra }, type, data: { value: Buffer.from('planted').toString('base64') } }) as KubeObject;
  const configMap = (name: string, labels: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, labels }, data: { value: 'planted' } }) as KubeObject;
  const keySecret = () => objectRef('v1', 'Secret', desiredApiKeySecret(model).metadata.name, ns);

  it('mints, lists, reads the audit log and revokes through its own code with only the chart\'s rights', async () => {
    const ivan = { sub: 'ivan-subject', username: 'ivan@example.com' };
    await recordLogin(client, ns, sessionKey, { ...ivan, groups: ['ml-team'], refreshToken: 'ivan-refresh-token' });
    const key = await mintPortalKey(client, model, { ...ivan, description: 'ivan laptop', grant, expiresAt: expiresAt(), limits: DEFAULT_KEY_LIMITS });
    expect((await listKeys(client, model)).map((k) => k.clientId)).toContain(key.clientId);
    expect(await revokePortalKey(client, model, key.clientId, { actor: ivan.username, actorSubject: ivan.sub, reason: 'user' })).toBe(true);
    const audit = (await readAuditEntries(client, ns, {})).filter((e) => e.clientId === key.clientId).map((e) => e.action);
    expect(audit).toEqual(['mint', 'revoke']);
  });

  it('cannot read or list Secrets that are not named for it: provider credentials, the webhook\'s key, any other', async () => {
    await applyObject(secret('provider-credential', 'Opaque'));
    await applyObject({ ...secret('webhook-ca', 'kubernetes.io/tls'), data: { 'tls.crt': '', 'tls.key': '' } });
    for (const name of ['provider-credential', 'webhook-ca', 'no-such-secret']) await expect(client.get(objectRef('v1', 'Secret', name, ns))).rejects.toMatchObject(refused);
    await expect(client.list('v1', 'Secret', { namespace: ns })).rejects.toMatchObject(refused);
    await expect(client.list('v1', 'Secret', { namespace: ns, labelSelector: 'llm.nebari.dev/portal-user' })).rejects.toMatchObject(refused);
    // Nor can it widen its own Role: it may only read the operator's.
    await expect(client.mergePatch(objectRef('rbac.authorization.k8s.io/v1', 'Role', secretsRole, ns), { rules: [] })).rejects.toMatchObject(refused);
    // What it is given: the model's key Secret and its users' Secrets, by name.
    expect(await client.get(keySecret())).toBeDefined();
    expect(await client.get(objectRef('v1', 'Secret', userSecretName(alice.sub), ns))).toBeDefined();
    expect(await client.get(objectRef('v1', 'Secret', sessionSecretName, ns))).toBeDefined();
  });

  it('reads the user Secrets of an earlier release once the operator has named them, and the operator writes its Role only when the names change', async () => {
    const role = () => admin.get<KubeObject & { rules: [] }>(objectRef('rbac.authorization.k8s.io/v1', 'Role', secretsRole, ns));
    // A user Secret written before this release (by the portal of the time; here by an administrator).
    const legacy = { sub: 'legacy-subject', username: 'legacy@example.com' };
    await recordLogin(admin, ns, sessionKey, { ...legacy, groups: ['ml-team'], refreshToken: 'legacy-refresh-token' });
    await untilReadable(client, ns, userSecretName(legacy.sub));
    expect((await listStoredUsers(client, ns, sessionKey, secretsRole)).find((u) => u.sub === legacy.sub)).toMatchObject({ refreshToken: 'legacy-refresh-token' });
    const before = (await role())!;
    expect(secretNamesOfRole(before)).toEqual([...secretNamesOfRole(before)].sort());
    expect(secretNamesOfRole(before)).toEqual(expect.arrayContaining([desiredApiKeySecret(model).metadata.name, userSecretName(legacy.sub), userSecretName(alice.sub)]));
    expect(secretNamesOfRole(before)).not.toContain(sessionSecretName);
    // A new leader term (a restart) reads the Role and writes nothing when the names are the same.
    await roleKeeper.stop();
    roleKeeper = startRoleKeeper();
    await roleKeeper.readable(userSecretName(legacy.sub));
    expect((await role())!.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    // A user Secret deleted (the user forgotten) leaves the Role.
    await admin.delete(objectRef('v1', 'Secret', userSecretName(legacy.sub), ns));
    await waitFor('the Role without the deleted user', async () => !secretNamesOfRole(await role()).includes(userSecretName(legacy.sub)), { timeoutMs: 10_000 });
    expect(await readUserState(client, ns, legacy.sub)).toBeUndefined();
  });

  it('cannot create a token Secret for the operator\'s ServiceAccount, nor any Secret or ConfigMap that is not its own', async () => {
    const operatorToken = { annotations: { 'kubernetes.io/service-account.name': `${release}-nebari-llm-serving-operator` } };
    await expect(client.create(secret('operator-token', 'kubernetes.io/service-account-token', operatorToken))).rejects.toMatchObject(refused);
    // Not under a name of its own either, nor as any type but Opaque.
    const userName = { name: 'nls-portal-user-0123', labels: { 'llm.nebari.dev/portal-user': '0123' } };
    await expect(client.create(secret(userName.name, 'kubernetes.io/service-account-token', { ...operatorToken, labels: userName.labels }))).rejects.toMatchObject(refused);
    await expect(client.create(secret(userName.name, 'example.com/custom', { labels: userName.labels }))).rejects.toMatchObject(refused);
    await expect(client.create(secret('planted', 'Opaque'))).rejects.toThrow(/creates only Opaque Secrets that are its session Secret/);
    // A user Secret whose name is not the hash it is labelled with.
    await expect(client.create(secret('nls-portal-user-0123', 'Opaque', { labels: { 'llm.nebari.dev/portal-user': '4567' } }))).rejects.toMatchObject(refused);
    // Key objects are the operator's to create.
    const other = { ...model, name: 'no-such-model' };
    await expect(client.create(desiredApiKeySecret(other) as KubeObject)).rejects.toMatchObject(refused);
    await expect(client.create(desiredApiKeyMetadataConfigMap(other) as KubeObject)).rejects.toThrow(/the operator creates the key metadata ConfigMaps/);
    await expect(client.create(configMap('planted'))).rejects.toMatchObject(refused);
    for (const name of ['operator-token', 'planted', 'nls-portal-user-0123', desiredApiKeySecret(other).metadata.name]) expect(await admin.get(objectRef('v1', 'Secret', name, ns))).toBeUndefined();
  });

  it('cannot change or delete Secrets and ConfigMaps that are not its own, nor what makes its own what they are', async () => {
    await applyObject(secret('provider-credential', 'Opaque'));
    await applyObject({ ...secret('webhook-ca', 'kubernetes.io/tls'), data: { 'tls.crt': '', 'tls.key': '' } });
    await applyObject(configMap('operator-settings'));
    // Refused by RBAC now (no patch of Secrets by kind); the admission policy stays as a second fence.
    for (const name of ['provider-credential', 'webhook-ca']) {
      await expect(client.mergePatch(objectRef('v1', 'Secret', name, ns), { data: { value: Buffer.from('stolen').toString('base64') } })).rejects.toMatchObject(refused);
    }
    await expect(client.mergePatch(objectRef('v1', 'ConfigMap', 'operator-settings', ns), { data: { value: 'changed' } })).rejects.toMatchObject(refused);
    // Its writable objects stay what they are: no relabelling, no owner, never immutable.
    await expect(client.mergePatch(keySecret(), { metadata: { labels: { 'llm.nebari.dev/model': 'another-model' } } })).rejects.toThrow(/changes only data/);
    await expect(client.mergePatch(keySecret(), { immutable: true })).rejects.toMatchObject(refused);
    await expect(client.mergePatch(objectRef('v1', 'Secret', userSecretName(alice.sub), ns), { metadata: { labels: { 'llm.nebari.dev/portal-user': null } } })).rejects.toMatchObject(refused);
    // No deletes at all: key objects go with their model, by the operator.
    await expect(client.delete(keySecret())).rejects.toMatchObject(refused);
    await expect(client.delete(objectRef('v1', 'Secret', 'provider-credential', ns))).rejects.toMatchObject(refused);
    expect((await admin.get<KubeObject & { data: Record<string, string> }>(objectRef('v1', 'Secret', 'provider-credential', ns)))?.data.value).toBe(Buffer.from('planted').toString('base64'));
  });
});
