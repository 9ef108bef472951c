// Which keys of a model the operator revokes without a human: expired keys, and keys granted
// through the model's access (public or a group) that the model no longer grants. Keys minted
// by an administrator (the CLI) and records written before ownership was recorded are never
// revoked for access; they expire only if they carry an expiry.
import { ApiKeyRecord } from './api-keys';
import { ModelWithAccess, accessGroups } from './access';

export type RevocationAction = 'expire' | 'access-revoked';

export interface KeyRevocation {
  readonly clientId: string;
  readonly action: RevocationAction;
  /** For the audit log, the Event and the log line: names no key material. */
  readonly reason: string;
}

/** Milliseconds since the epoch of a record's expiry; NaN for an unreadable one, undefined for none. */
export function expiryTime(record: ApiKeyRecord): number | undefined {
  if (record.expiresAt === undefined) return undefined;
  return Date.parse(record.expiresAt);
}

/** Whether the model still grants a key minted through its access. */
function stillGranted(model: ModelWithAccess, record: ApiKeyRecord): boolean {
  if (model.spec?.access?.public === true) return true;
  const current = new Set(accessGroups(model));
  return (record.groups ?? []).some((g) => current.has(g));
}

/** The keys to revoke now, in the records' order. An unreadable expiry counts as expired. */
export function keysToRevoke(model: ModelWithAccess, records: readonly ApiKeyRecord[], now: Date): KeyRevocation[] {
  const out: KeyRevocation[] = [];
  for (const r of records) {
    const expiry = expiryTime(r);
    if (expiry !== undefined && (isNaN(expiry) || expiry <= now.getTime())) {
      out.push({ clientId: r.clientId, action: 'expire', reason: isNaN(expiry!) ? `expiresAt "${r.expiresAt}" is not a date` : `expired at ${r.expiresAt}` });
    } else if ((r.grantedBy === 'groups' || r.grantedBy === 'public') && !stillGranted(model, r)) {
      const groups = r.groups ?? [];
      out.push({
        clientId: r.clientId,
        action: 'access-revoked',
        reason:
          groups.length > 0
            ? `the model no longer grants access to ${groups.length === 1 ? 'group' : 'groups'} ${groups.join(', ')}`
            : 'the model is no longer public',
      });
    }
  }
  return out;
}

/** The earliest expiry after `now` among the records, for requeueing the model then; undefined when none. */
export function nextExpiry(records: readonly ApiKeyRecord[], now: Date): Date | undefined {
  let earliest: number | undefined;
  for (const r of records) {
    const t = expiryTime(r);
    if (t !== undefined && !isNaN(t) && t > now.getTime() && (earliest === undefined || t < earliest)) earliest = t;
  }
  return earliest === undefined ? undefined : new Date(earliest);
}
