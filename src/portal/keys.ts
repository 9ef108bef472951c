// The portal's view of the key store (contract 1: src/api-keys/key-store.ts, audit-log.ts and
// src/translate/keys/access.ts). Everything the portal does to keys goes through here, so the
// pages and the refresh loop never touch Secrets directly.
import { ApiKeyRecord, ModelRef } from '../translate/keys/api-keys';
import { AccessGrant, grantingGroups } from '../translate/keys/access';
import { KubeRest } from '../kube/rest';
import { MintedKey, listKeys, mintKey, revokeKey } from '../api-keys/key-store';
import { AuditEntry, AuditFilter, readAuditEntries } from '../api-keys/audit-log';
import { KeyLimits } from '../translate/keys/limits';
import { PortalModel } from './models';
import { isRefused } from './user-tokens';

/** Why a key was taken back because the issuer refused its owner (the group refresh uses it too). */
export const REFRESH_REFUSED_REASON = 'user-refresh-refused';

/** The issuer refused the user's refresh while their key was being written: the key was taken back. */
export class MintRefusedError extends Error {}

export interface ModelKey {
  readonly model: ModelRef;
  readonly record: ApiKeyRecord;
}

/** The access rule for a portal model (the internal endpoint's rule). */
export function modelGrant(model: Pick<PortalModel, 'access'>, userGroups: readonly string[]): AccessGrant {
  return grantingGroups({ spec: { access: model.access } }, userGroups);
}

/** Is `record` owned by this user? Keys with a recorded OIDC subject by subject; older (CLI) keys are never a portal user's. */
export function ownedBy(record: ApiKeyRecord, user: { sub: string }): boolean {
  return record.subject !== undefined && record.subject === user.sub;
}

export interface MintRequest {
  readonly sub: string;
  readonly username: string;
  readonly description: string;
  readonly grant: AccessGrant;
  readonly expiresAt: Date;
  readonly tier?: string;
  /** Per-user limits (the portal's `portal.keyLimits`). */
  readonly limits: KeyLimits;
}

/**
 * Mints a key for a portal user, then checks once more, after the write, that the issuer has not
 * refused them meanwhile: the group refresh records a refusal before it lists keys, so a key
 * written before the refusal is in its list, and one written after it is taken back here.
 */
export async function mintPortalKey(client: KubeRest, model: ModelRef, req: MintRequest): Promise<MintedKey> {
  const minted = await mintKey(client, model, req.username, req.description, {
    waitMs: 30_000,
    subject: req.sub,
    groups: req.grant.groups,
    grantedBy: req.grant.grantedBy,
    expiresAt: req.expiresAt,
    ...(req.tier ? { tier: req.tier } : {}),
    source: 'portal',
    actor: req.username,
    actorSubject: req.sub,
    limits: req.limits,
    // The operator creates every model's key objects; the portal's RBAC and admission policy
    // allow it to write to them, never to create (or delete) them.
    createKeyObjects: false,
  });
  // Fail closed: when the refusal cannot be read, the key is taken back too.
  const refused = await isRefused(client, model.namespace, req.sub).catch(() => true);
  if (refused) {
    await revokePortalKey(client, model, minted.clientId, { actor: 'portal', reason: REFRESH_REFUSED_REASON, action: 'access-revoked' });
    throw new MintRefusedError('your login is no longer valid at the identity provider; log out and log in again');
  }
  return minted;
}

/** Every key of the given models. */
export async function listAllKeys(client: KubeRest, models: readonly PortalModel[]): Promise<ModelKey[]> {
  const perModel = await Promise.all(models.map(async (m) => (await listKeys(client, m.ref)).map((record) => ({ model: m.ref, record }))));
  return perModel.flat();
}

export async function revokePortalKey(client: KubeRest, model: ModelRef, clientId: string, opts: { actor: string; actorSubject?: string; reason: string; action?: 'revoke' | 'access-revoked' }): Promise<boolean> {
  return revokeKey(client, model, clientId, { waitMs: 30_000, actor: opts.actor, ...(opts.actorSubject ? { actorSubject: opts.actorSubject } : {}), reason: opts.reason, action: opts.action ?? 'revoke' });
}

export async function readAudit(client: KubeRest, namespace: string, filter: AuditFilter): Promise<AuditEntry[]> {
  return readAuditEntries(client, namespace, filter);
}
