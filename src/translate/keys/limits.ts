// Per-user limits on minting (issue 29, Medium 8), as pure rules: how many live keys one user may
// hold on one model, and how many keys one user may mint per hour. Without them one user could
// take a model's whole key budget (MAX_KEYS_PER_MODEL, or the 256 rate-limit rules of quotas,
// past which the model's translation fails for everyone), multiply their quota with many keys and
// grow the append-only audit log. Both counts come from data the mint path keeps anyway: live keys
// from the metadata ConfigMap, mints from the audit log's `mint` entries.
import { ApiKeyRecord, ModelRef } from './api-keys';
import { AuditEntry } from './audit';
import { expiryTime } from './revocation';

export interface KeyLimits {
  /** Live (not revoked, not expired) keys one user may hold on one model. */
  readonly keysPerUserPerModel: number;
  /** Keys one user may mint per hour, over every model of the namespace. */
  readonly mintsPerUserPerHour: number;
}

/**
 * The chart's defaults (`portal.keyLimits`): 10 keys cover a user's laptop, CI jobs and a few
 * services, with room to rotate; 25 users at that limit still fit in the 256 quota rules of a
 * model. 20 mints an hour is two full rotations of those 10 keys, far above what a person
 * does by hand, and bounds one user's mint entries in the audit log to 480 a day.
 */
export const DEFAULT_KEY_LIMITS: KeyLimits = { keysPerUserPerModel: 10, mintsPerUserPerHour: 20 };

/** The window of `mintsPerUserPerHour`. */
export const MINT_WINDOW_MS = 3_600_000;

/** Chart values of the limits, named in every refusal. */
export const KEY_LIMIT_VALUES: Readonly<Record<keyof KeyLimits, string>> = {
  keysPerUserPerModel: 'portal.keyLimits.keysPerUserPerModel',
  mintsPerUserPerHour: 'portal.keyLimits.mintsPerUserPerHour',
};

/** Whom a limit counts: the username and, for portal users, their OIDC subject. */
export interface KeyOwner {
  readonly user: string;
  readonly subject?: string;
}

/** A key or audit entry counts for the owner by username or by OIDC subject (a renamed user is still counted). */
function isOwner(owner: KeyOwner, createdBy: string, subject: string | undefined): boolean {
  return createdBy === owner.user || (owner.subject !== undefined && subject === owner.subject);
}

/** The owner's keys that still work at `now`: an unreadable expiry counts as expired, as the operator treats it. */
export function liveKeysOf(records: readonly ApiKeyRecord[], owner: KeyOwner, now: Date): ApiKeyRecord[] {
  return records.filter((r) => {
    if (!isOwner(owner, r.createdBy, r.subject)) return false;
    const expiry = expiryTime(r);
    return expiry === undefined || (!isNaN(expiry) && expiry > now.getTime());
  });
}

/** The owner's mints in the hour before `now`, oldest first. */
export function recentMintsOf(entries: readonly AuditEntry[], owner: KeyOwner, now: Date): AuditEntry[] {
  const since = now.getTime() - MINT_WINDOW_MS;
  return entries
    .filter((e) => e.action === 'mint' && isOwner(owner, e.owner, e.subject) && Date.parse(e.at) > since && Date.parse(e.at) <= now.getTime())
    .sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
}

/** A mint refused by a per-user limit; `limit` names which. */
export class KeyLimitError extends Error {
  constructor(
    readonly limit: keyof KeyLimits,
    message: string,
  ) {
    super(message);
  }
}

/** The refusal when the owner already holds `live` keys on the model (undefined: below the limit). */
export function keyCountRefusal(model: ModelRef, owner: KeyOwner, live: number, limits: KeyLimits): KeyLimitError | undefined {
  if (live < limits.keysPerUserPerModel) return undefined;
  return new KeyLimitError(
    'keysPerUserPerModel',
    `${owner.user} already has ${live} live API keys for ${model.kind} ${model.name} (limit ${limits.keysPerUserPerModel} per user per model, chart value ${KEY_LIMIT_VALUES.keysPerUserPerModel}); revoke a key you no longer use, or ask an administrator to raise the limit`,
  );
}

/** The refusal when the owner minted too many keys in the last hour (undefined: below the limit). */
export function mintRateRefusal(owner: KeyOwner, recentMints: readonly AuditEntry[], limits: KeyLimits): KeyLimitError | undefined {
  if (recentMints.length < limits.mintsPerUserPerHour) return undefined;
  // The oldest mint of the window that must leave it for one more to fit.
  const freed = new Date(Date.parse(recentMints[recentMints.length - limits.mintsPerUserPerHour].at) + MINT_WINDOW_MS);
  return new KeyLimitError(
    'mintsPerUserPerHour',
    `${owner.user} minted ${recentMints.length} API keys in the last hour (limit ${limits.mintsPerUserPerHour} per user per hour, chart value ${KEY_LIMIT_VALUES.mintsPerUserPerHour}); wait until ${freed.toISOString()}, or ask an administrator`,
  );
}

/** Environment variables of the limits (the chart sets them on the portal; `nls keys mint` reads them there). */
export const KEY_LIMIT_ENV: Readonly<Record<keyof KeyLimits, string>> = {
  keysPerUserPerModel: 'NLS_PORTAL_KEYS_PER_USER_PER_MODEL',
  mintsPerUserPerHour: 'NLS_PORTAL_MINTS_PER_USER_PER_HOUR',
};

/** Bounds of the values (the chart schema has the same). */
export const KEY_LIMIT_MAX: Readonly<Record<keyof KeyLimits, number>> = { keysPerUserPerModel: 2000, mintsPerUserPerHour: 10_000 };

/**
 * The limits from environment variables; unset means the default. Throws for a value that is not
 * a whole number from 1 to its maximum, naming the variable.
 */
export function keyLimitsFromEnv(env: Readonly<Record<string, string | undefined>>): KeyLimits {
  const read = (name: keyof KeyLimits): number => {
    const raw = env[KEY_LIMIT_ENV[name]]?.trim();
    if (!raw) return DEFAULT_KEY_LIMITS[name];
    if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > KEY_LIMIT_MAX[name]) {
      throw new Error(`${KEY_LIMIT_ENV[name]}: "${raw}" is not a whole number between 1 and ${KEY_LIMIT_MAX[name]}; set the chart value ${KEY_LIMIT_VALUES[name]}`);
    }
    return Number(raw);
  };
  return { keysPerUserPerModel: read('keysPerUserPerModel'), mintsPerUserPerHour: read('mintsPerUserPerHour') };
}
