// Revocation when a user loses access, without a human: every NLS_PORTAL_GROUP_REFRESH_SECONDS,
// one replica (holding a Lease) refreshes each stored user's refresh token and reads their
// current groups. A key whose model their groups no longer grant is revoked (reason
// `user-lost-access`); a refused refresh (`invalid_grant`: user disabled, deleted or logged out
// at the issuer) is recorded on the user, and every round revokes all keys of every refused user
// (until they log in again), so no key minted around the refusal survives: the refusals are
// recorded before the keys are listed, and a mint re-checks refusal after its write
// (`mintPortalKey`). Each revocation is an audit entry, an Event on the model and a log line,
// none of which carries token or key material. The current groups are stored on the user, where
// every request of their sessions reads them (a demoted admin loses the admin views within a
// round), and a refusal ends all their sessions (user-tokens.ts).
// Fail closed (issue 29, Medium 7): a user the round cannot check — the issuer errs or is
// unreachable, or no readable refresh token is stored — is counted on their Secret; once that has
// lasted `failClosedAfterSeconds` they are marked refused like an `invalid_grant` (reason
// `user-refresh-failing`) and lose their keys. A token sealed with an older session key is
// re-sealed with the newest, so a rotated-out key can be dropped after one round.
import { KubeRest } from '../kube/rest';
import { EventRecorder } from '../runtime/events';
import { LeaderElector } from '../runtime/leader';
import { Logger } from '../runtime/log';
import { API_GROUP_VERSION_V1BETA1 } from '../api/common';
import { ModelKey, REFRESH_REFUSED_REASON, listAllKeys, modelGrant, ownedBy, revokePortalKey } from './keys';
import { PortalModel, listModels } from './models';
import { RefreshRefusedError, OidcUser } from './oidc';
import { PortalMetrics } from './metrics';
import { SessionKeys } from './session';
import { StoredUser, clearRefreshFailures, listStoredUsers, markRefused, recordRefreshFailure, resealRefreshToken, saveGroups, saveRefreshToken } from './user-tokens';

export { REFRESH_REFUSED_REASON };
export const LOST_ACCESS_REASON = 'user-lost-access';
/** Why a key was taken back because its owner's group refresh kept failing (fail closed). */
export const REFRESH_FAILING_REASON = 'user-refresh-failing';
/** Default of `portal.groupRefreshFailClosedSeconds`: a day of an unreachable issuer, then keys go. */
export const DEFAULT_FAIL_CLOSED_SECONDS = 86_400;

/**
 * Pure: the user's keys that `groups` no longer grant. Keys granted through groups or a public
 * model are judged by the model's current access; admin-granted keys and keys of models that are
 * gone (the operator deletes those) are left alone.
 */
export function keysLosingAccess(keys: readonly ModelKey[], models: readonly PortalModel[], sub: string, groups: readonly string[]): ModelKey[] {
  const byRef = new Map(models.map((m) => [`${m.ref.kind}/${m.ref.name}`, m]));
  return keys.filter((k) => {
    if (!ownedBy(k.record, { sub })) return false;
    if (k.record.grantedBy !== 'groups' && k.record.grantedBy !== 'public') return false;
    const model = byRef.get(`${k.model.kind}/${k.model.name}`);
    return model !== undefined && !modelGrant(model, groups).allowed;
  });
}

function sameGroups(stored: readonly string[] | undefined, fresh: readonly string[]): boolean {
  return stored !== undefined && stored.length === fresh.length && stored.every((g, i) => g === fresh[i]);
}

export interface RefreshDeps {
  readonly client: KubeRest;
  readonly namespace: string;
  readonly sessionKey: SessionKeys;
  /** The Role naming the Secrets the portal may read (NLS_PORTAL_SECRETS_ROLE): stored users are walked from it; without it they are listed. */
  readonly secretsRole?: string;
  readonly refresh: (refreshToken: string, sub: string) => Promise<OidcUser>;
  readonly log: Logger;
  readonly events: EventRecorder;
  /** How long a user's refreshes may fail (not refused) before they are treated as refused. */
  readonly failClosedAfterSeconds?: number;
  readonly metrics?: PortalMetrics;
  readonly now?: () => Date;
}

export interface RoundResult {
  readonly users: number;
  readonly revoked: number;
  /** Users whose refresh failed this round for a reason other than a refusal (including those failed closed). */
  readonly failed: number;
  /** Users marked refused this round because their refreshes kept failing. */
  readonly failedClosed: number;
  readonly refused: number;
  readonly unreadable: number;
  readonly withoutRefreshToken: number;
  /** Tokens still sealed with an older session key after the round. */
  readonly onOldKey: number;
}

/**
 * Rotated refresh tokens not yet saved (the save failed), by subject: issuers that rotate refresh
 * tokens refuse the old one, and using it next round would revoke all of the user's keys.
 */
const unsaved = new Map<string, string>();

/** Why the round could not check a user, or undefined when it could. */
type Failure = { readonly cause: string; readonly err?: unknown };

/** One pass over every stored user. */
export async function refreshRound(deps: RefreshDeps): Promise<RoundResult> {
  const now = deps.now?.() ?? new Date();
  const failClosedMs = (deps.failClosedAfterSeconds ?? DEFAULT_FAIL_CLOSED_SECONDS) * 1000;
  const users = await listStoredUsers(deps.client, deps.namespace, deps.sessionKey, deps.secretsRole);
  // A key of a refused user found in a later round is revoked for the reason the user was refused.
  const refused: Array<{ user: StoredUser; reason: string }> = users
    .filter((u) => u.refused)
    .map((user) => ({ user, reason: user.refusedBy === 'fail-closed' ? REFRESH_FAILING_REASON : REFRESH_REFUSED_REASON }));
  const current: Array<{ user: StoredUser; groups: readonly string[] }> = [];
  let failed = 0;
  let failedClosed = 0;
  let onOldKey = 0;
  let unreadable = 0;
  let withoutRefreshToken = 0;
  for (const user of users) {
    if (user.refused) continue;
    if (user.refreshToken && user.refreshTokenOnOldKey) {
      await resealRefreshToken(deps.client, deps.namespace, deps.sessionKey, user.sub, user.refreshToken).catch((err) => {
        onOldKey++;
        deps.log.warn('could not re-seal the user\'s refresh token with the newest session key; retrying next round', { user: user.username, err });
      });
    }
    let failure: Failure | undefined;
    // A rotated token that could not be saved last round is the valid one; the stored one is spent.
    const token = unsaved.get(user.sub) ?? user.refreshToken;
    if (!token) {
      failure = { cause: user.refreshTokenUnreadable ? 'no session key opens the stored refresh token' : 'no refresh token is stored (the issuer gave none at login)' };
    } else {
      try {
        const fresh = await deps.refresh(token, user.sub);
        if (fresh.refreshToken && fresh.refreshToken !== user.refreshToken) {
          unsaved.set(user.sub, fresh.refreshToken);
          await saveRefreshToken(deps.client, deps.namespace, deps.sessionKey, { sub: user.sub, username: fresh.username, refreshToken: fresh.refreshToken });
        } else if (user.refreshFailures > 0) {
          await clearRefreshFailures(deps.client, deps.namespace, user.sub);
        }
        unsaved.delete(user.sub);
        if (!sameGroups(user.groups, fresh.groups)) {
          await saveGroups(deps.client, deps.namespace, user.sub, fresh.groups).catch((err) =>
            deps.log.warn('could not store the user\'s current groups; their sessions keep the previous ones until the next round', { user: user.username, err }),
          );
        }
        current.push({ user, groups: fresh.groups });
        continue;
      } catch (err) {
        if (err instanceof RefreshRefusedError) {
          await markRefused(deps.client, deps.namespace, user.sub);
          refused.push({ user, reason: REFRESH_REFUSED_REASON });
          continue;
        }
        failure = { cause: 'the refresh at the issuer failed', err };
      }
    }
    failed++;
    const since = user.refreshFailingSince ?? now;
    const failures = user.refreshFailures + 1;
    if (now.getTime() - since.getTime() >= failClosedMs) {
      // Fail closed: nobody could confirm this user's access for the whole period.
      const why = `group refresh failing since ${since.toISOString()} (${failures} rounds): ${failure.cause}`;
      await markRefused(deps.client, deps.namespace, user.sub, now, why);
      refused.push({ user, reason: REFRESH_FAILING_REASON });
      failedClosed++;
      deps.metrics?.failedClosed.inc();
      deps.log.error('group refresh kept failing; treating the user as refused and revoking their keys (fail closed)', { user: user.username, since: since.toISOString(), failures, cause: failure.cause, err: failure.err });
      continue;
    }
    if (user.refreshTokenUnreadable) unreadable++;
    else if (!user.refreshToken) withoutRefreshToken++;
    await recordRefreshFailure(deps.client, deps.namespace, user.sub, since, failures).catch((err) =>
      deps.log.warn('could not record the failed group refresh', { user: user.username, err }),
    );
    const closesAt = new Date(since.getTime() + failClosedMs).toISOString();
    deps.log.warn('group refresh failed; keeping the user\'s keys until it has failed for the fail-closed period', { user: user.username, failures, since: since.toISOString(), closesAt, cause: failure.cause, err: failure.err });
  }
  // Listed only now, after every refusal is recorded: a key minted before a refusal was written is
  // in this list, and a mint that finishes after it sees the refusal and takes its key back.
  const models = await listModels(deps.client, deps.namespace);
  const keys = await listAllKeys(deps.client, models);
  const doomed = [
    ...refused.flatMap(({ user, reason }) => keys.filter((k) => ownedBy(k.record, user)).map((key) => ({ key, user, reason }))),
    ...current.flatMap(({ user, groups }) => keysLosingAccess(keys, models, user.sub, groups).map((key) => ({ key, user, reason: LOST_ACCESS_REASON }))),
  ];
  let revoked = 0;
  for (const { key: k, user, reason } of doomed) {
    const model = models.find((m) => m.ref.kind === k.model.kind && m.ref.name === k.model.name);
    const done = await revokePortalKey(deps.client, k.model, k.record.clientId, { actor: 'portal', reason, action: 'access-revoked' });
    if (!done) continue;
    revoked++;
    deps.metrics?.keysRevoked.inc({ reason });
    deps.log.info('revoked key: owner lost access', { model: `${k.model.kind}/${k.model.name}`, clientId: k.record.clientId, owner: user.username, reason });
    await deps.events.record(
      { apiVersion: API_GROUP_VERSION_V1BETA1, kind: k.model.kind, metadata: { name: k.model.name, namespace: k.model.namespace, uid: model?.uid } },
      'Normal',
      'ApiKeyAccessRevoked',
      `revoked key ${k.record.clientId} of ${user.username}: ${reason}`,
    );
  }
  const result: RoundResult = { users: users.length, revoked, failed, failedClosed, refused: refused.length, unreadable, withoutRefreshToken, onOldKey };
  if (deps.metrics) {
    const m = deps.metrics;
    m.users.set(result.users);
    m.refused.set(result.refused);
    m.failing.set(result.failed - result.failedClosed);
    m.unreadable.set(result.unreadable);
    m.withoutRefreshToken.set(result.withoutRefreshToken);
    m.onOldKey.set(result.onOldKey);
    m.lastRound.set(Date.now() / 1000);
  }
  return result;
}

/** Runs `refreshRound` every `intervalSeconds` while this replica holds the Lease. */
export class GroupRefresher {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private readonly elector: LeaderElector;

  constructor(
    private readonly deps: RefreshDeps,
    private readonly intervalSeconds: number,
    lease: { namespace: string; name: string; identity: string },
  ) {
    this.elector = new LeaderElector(deps.client, lease, deps.log, {
      onStartedLeading: () => {
        deps.metrics?.leader.set(1);
        this.schedule(0);
      },
      onStoppedLeading: () => {
        clearTimeout(this.timer);
        // The new leader reports the users; stale numbers here would be counted twice.
        const m = deps.metrics;
        if (m) for (const g of [m.leader, m.users, m.refused, m.failing, m.unreadable, m.withoutRefreshToken, m.onOldKey]) g.set(0);
      },
    });
  }

  start(): void {
    this.elector.start();
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    await this.running;
    await this.elector.stop();
  }

  private schedule(delayMs: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      if (!this.elector.isLeader) return;
      const started = Date.now();
      this.running = refreshRound(this.deps)
        .then((r) => this.deps.log.info('group refresh round done', { ...r, seconds: (Date.now() - started) / 1000 }))
        .catch((err) => this.deps.log.warn('group refresh round failed', { err }))
        .finally(() => {
          if (this.elector.isLeader) this.schedule(this.intervalSeconds * 1000);
        });
    }, delayMs);
  }
}
