// The portal's view of the key store (contract 1: src/api-keys/key-store.ts, audit-log.ts and
// src/translate/keys/access.ts). Everything the portal does to keys goes through here, so the
// pages and the refresh loop never touch Secrets directly.
import { ApiKeyRecord, ModelRef } from '../translate/keys/api-keys';
import { AccessGrant, grantingGroups } from '../translate/keys/access';
import { KubeRest } from '../kube/rest';
import { MintedKey, listKeys, mintKey, revokeKey } from '../api-keys/key-store';
import { AuditEntry, AuditFilter, readAuditEntries } from '../api-keys/audit-log';
import { PortalModel } from './models';

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
}

export async function mintPortalKey(client: KubeRest, model: ModelRef, req: MintRequest): Promise<MintedKey> {
  return mintKey(client, model, req.username, req.description, {
    waitMs: 30_000,
    subject: req.sub,
    groups: req.grant.groups,
    grantedBy: req.grant.grantedBy,
    expiresAt: req.expiresAt,
    ...(req.tier ? { tier: req.tier } : {}),
    source: 'portal',
    actor: req.username,
  });
}

/** Every key of the given models. */
export async function listAllKeys(client: KubeRest, models: readonly PortalModel[]): Promise<ModelKey[]> {
  const perModel = await Promise.all(models.map(async (m) => (await listKeys(client, m.ref)).map((record) => ({ model: m.ref, record }))));
  return perModel.flat();
}

export async function revokePortalKey(client: KubeRest, model: ModelRef, clientId: string, opts: { actor: string; reason: string; action?: 'revoke' | 'access-revoked' }): Promise<boolean> {
  return revokeKey(client, model, clientId, { waitMs: 30_000, actor: opts.actor, reason: opts.reason, action: opts.action ?? 'revoke' });
}

export async function readAudit(client: KubeRest, namespace: string, filter: AuditFilter): Promise<AuditEntry[]> {
  return readAuditEntries(client, namespace, filter);
}
