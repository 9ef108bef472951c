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
import { KubeRest } from '../kube/rest';
import { EventRecorder } from '../runtime/events';
import { LeaderElector } from '../runtime/leader';
import { Logger } from '../runtime/log';
import { API_GROUP_VERSION_V1BETA1 } from '../api/common';
import { ModelKey, REFRESH_REFUSED_REASON, listAllKeys, modelGrant, ownedBy, revokePortalKey } from './keys';
import { PortalModel, listModels } from './models';
import { RefreshRefusedError, OidcUser } from './oidc';
import { StoredUser, listStoredUsers, markRefused, saveGroups, saveRefreshToken } from './user-tokens';

export { REFRESH_REFUSED_REASON };
export const LOST_ACCESS_REASON = 'user-lost-access';

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
  readonly sessionKey: Buffer;
  readonly refresh: (refreshToken: string, sub: string) => Promise<OidcUser>;
  readonly log: Logger;
  readonly events: EventRecorder;
}

export interface RoundResult {
  readonly users: number;
  readonly revoked: number;
  readonly failed: number;
}

/**
 * Rotated refresh tokens not yet saved (the save failed), by subject: issuers that rotate refresh
 * tokens refuse the old one, and using it next round would revoke all of the user's keys.
 */
const unsaved = new Map<string, string>();

/** One pass over every stored user. */
export async function refreshRound(deps: RefreshDeps): Promise<RoundResult> {
  const users = await listStoredUsers(deps.client, deps.namespace, deps.sessionKey);
  if (users.length === 0) return { users: 0, revoked: 0, failed: 0 };
  const refused: StoredUser[] = users.filter((u) => u.refused);
  const current: Array<{ user: StoredUser; groups: readonly string[] }> = [];
  let failed = 0;
  for (const user of users) {
    if (user.refused || !user.refreshToken) continue;
    try {
      // A rotated token that could not be saved last round is the valid one; the stored one is spent.
      const fresh = await deps.refresh(unsaved.get(user.sub) ?? user.refreshToken, user.sub);
      if (fresh.refreshToken && fresh.refreshToken !== user.refreshToken) {
        unsaved.set(user.sub, fresh.refreshToken);
        await saveRefreshToken(deps.client, deps.namespace, deps.sessionKey, { sub: user.sub, username: fresh.username, refreshToken: fresh.refreshToken });
      }
      unsaved.delete(user.sub);
      if (!sameGroups(user.groups, fresh.groups)) {
        await saveGroups(deps.client, deps.namespace, user.sub, fresh.groups).catch((err) =>
          deps.log.warn('could not store the user\'s current groups; their sessions keep the previous ones until the next round', { user: user.username, err }),
        );
      }
      current.push({ user, groups: fresh.groups });
    } catch (err) {
      if (!(err instanceof RefreshRefusedError)) {
        failed++;
        deps.log.warn('group refresh failed; keeping the user\'s keys until the next round', { user: user.username, err });
        continue;
      }
      await markRefused(deps.client, deps.namespace, user.sub);
      refused.push(user);
    }
  }
  // Listed only now, after every refusal is recorded: a key minted before a refusal was written is
  // in this list, and a mint that finishes after it sees the refusal and takes its key back.
  const models = await listModels(deps.client, deps.namespace);
  const keys = await listAllKeys(deps.client, models);
  const doomed = [
    ...refused.flatMap((user) => keys.filter((k) => ownedBy(k.record, user)).map((key) => ({ key, user, reason: REFRESH_REFUSED_REASON }))),
    ...current.flatMap(({ user, groups }) => keysLosingAccess(keys, models, user.sub, groups).map((key) => ({ key, user, reason: LOST_ACCESS_REASON }))),
  ];
  let revoked = 0;
  for (const { key: k, user, reason } of doomed) {
    const model = models.find((m) => m.ref.kind === k.model.kind && m.ref.name === k.model.name);
    const done = await revokePortalKey(deps.client, k.model, k.record.clientId, { actor: 'portal', reason, action: 'access-revoked' });
    if (!done) continue;
    revoked++;
    deps.log.info('revoked key: owner lost access', { model: `${k.model.kind}/${k.model.name}`, clientId: k.record.clientId, owner: user.username, reason });
    await deps.events.record(
      { apiVersion: API_GROUP_VERSION_V1BETA1, kind: k.model.kind, metadata: { name: k.model.name, namespace: k.model.namespace, uid: model?.uid } },
      'Normal',
      'ApiKeyAccessRevoked',
      `revoked key ${k.record.clientId} of ${user.username}: ${reason}`,
    );
  }
  return { users: users.length, revoked, failed };
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
      onStartedLeading: () => this.schedule(0),
      onStoppedLeading: () => clearTimeout(this.timer),
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
