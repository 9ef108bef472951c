// The key audit log as pure data: entry format, shard names and filters. The log is append-only:
// each entry is one data key of a ConfigMap labelled `llm.nebari.dev/key-audit: "true"`, written
// once under a fresh key (timestamp + random suffix) and never changed; a ValidatingAdmissionPolicy
// in the chart refuses updates that change or remove an entry. One shard per UTC day, rolling to
// `-1`, `-2`, … before the ConfigMap size limit (1 MiB). Entries never hold key material.
import { ModelKind } from './api-keys';

export const LABEL_KEY_AUDIT = 'llm.nebari.dev/key-audit';
/** The shard's UTC day (YYYYMMDD), so appenders list only today's shards. */
export const LABEL_KEY_AUDIT_DAY = 'llm.nebari.dev/key-audit-day';
export const AUDIT_CONFIGMAP_PREFIX = 'nls-key-audit-';
/** A shard takes no new entries past this size; the rest of 1 MiB absorbs concurrent appends (an entry is under 2 KiB). */
export const AUDIT_SHARD_ROLL_BYTES = 512 * 1024;
/** Random bytes in an entry key: concurrent appends never share a key. */
export const AUDIT_ENTRY_RANDOM_BYTES = 6;
const MAX_FIELD = 300;

export type AuditAction = 'mint' | 'revoke' | 'expire' | 'access-revoked';
export const AUDIT_ACTIONS: readonly AuditAction[] = ['mint', 'revoke', 'expire', 'access-revoked'];

export interface AuditEntry {
  /** ISO 8601. */
  readonly at: string;
  readonly action: AuditAction;
  /** Who did it: a username, `operator`, or `portal` for the portal's own revocations. */
  readonly actor: string;
  /** The actor's OIDC `sub` when a portal user did it: names can change, the subject cannot. */
  readonly actorSubject?: string;
  readonly model: { readonly kind: ModelKind; readonly name: string };
  readonly clientId: string;
  /** The key's owner (its record's createdBy). */
  readonly owner: string;
  readonly subject?: string;
  readonly reason?: string;
}

export interface AuditFilter {
  /** Model name. */
  readonly model?: string;
  /** Owner or actor. */
  readonly user?: string;
  /** Only entries at or after this time. */
  readonly since?: Date;
}

/** YYYYMMDD of a time in UTC. */
export function auditDay(at: Date): string {
  return at.toISOString().slice(0, 10).replace(/-/g, '');
}

/** Name of a day's shard: index 0 has no suffix. */
export function auditShardName(day: string, index: number): string {
  return `${AUDIT_CONFIGMAP_PREFIX}${day}${index > 0 ? `-${index}` : ''}`;
}

/** The index of a shard name of `day`; undefined for any other name. */
export function auditShardIndex(name: string, day: string): number | undefined {
  const base = auditShardName(day, 0);
  if (name === base) return 0;
  const m = name.startsWith(base + '-') ? /^[1-9][0-9]*$/.exec(name.slice(base.length + 1)) : null;
  return m ? Number(m[0]) : undefined;
}

/** Bytes a ConfigMap's data counts against its size limit (approximately: keys plus values). */
export function dataSize(data: Record<string, string> | undefined): number {
  let n = 0;
  for (const [k, v] of Object.entries(data ?? {})) n += Buffer.byteLength(k) + Buffer.byteLength(v);
  return n;
}

/**
 * The shard to append to, given the day's shards (name → data size): the highest index while it is
 * under the roll size, else the next index. `create` says the shard does not exist yet.
 */
export function pickAuditShard(day: string, shards: ReadonlyArray<{ name: string; size: number }>): { name: string; create: boolean } {
  let top: { index: number; size: number } | undefined;
  for (const s of shards) {
    const index = auditShardIndex(s.name, day);
    if (index !== undefined && (!top || index > top.index)) top = { index, size: s.size };
  }
  if (!top) return { name: auditShardName(day, 0), create: true };
  if (top.size < AUDIT_SHARD_ROLL_BYTES) return { name: auditShardName(day, top.index), create: false };
  return { name: auditShardName(day, top.index + 1), create: true };
}

/** The data key of an entry: sortable by time, unique by its random suffix. */
export function auditEntryKey(at: Date, random: Uint8Array): string {
  if (random.length < AUDIT_ENTRY_RANDOM_BYTES) throw new Error(`auditEntryKey: need ${AUDIT_ENTRY_RANDOM_BYTES} random bytes, got ${random.length}`);
  const stamp = at.toISOString().replace(/[-:]/g, '').replace('.', '');
  return `${stamp}-${Buffer.from(random.subarray(0, AUDIT_ENTRY_RANDOM_BYTES)).toString('hex')}`;
}

const clip = (s: string) => (s.length > MAX_FIELD ? s.slice(0, MAX_FIELD - 1) + '…' : s);
const SK = /sk-[A-Za-z0-9_-]{8,}/g;

/** The stored JSON of an entry; free-text fields are bounded and scrubbed of anything shaped like a key. */
export function serializeAuditEntry(entry: AuditEntry): string {
  const text = (s: string) => clip(s.replace(SK, 'sk-[redacted]'));
  return JSON.stringify({
    at: entry.at,
    action: entry.action,
    actor: text(entry.actor),
    ...(entry.actorSubject ? { actorSubject: text(entry.actorSubject) } : {}),
    model: { kind: entry.model.kind, name: entry.model.name },
    clientId: entry.clientId,
    owner: text(entry.owner),
    ...(entry.subject ? { subject: text(entry.subject) } : {}),
    ...(entry.reason ? { reason: text(entry.reason) } : {}),
  });
}

/** Parse a stored entry; undefined for anything that is not one (such entries are skipped when reading). */
export function parseAuditEntry(json: string): AuditEntry | undefined {
  try {
    const v = JSON.parse(json) as Partial<AuditEntry>;
    if (!v || typeof v !== 'object' || typeof v.at !== 'string' || !AUDIT_ACTIONS.includes(v.action as AuditAction)) return undefined;
    if (typeof v.actor !== 'string' || typeof v.clientId !== 'string' || typeof v.owner !== 'string') return undefined;
    if (!v.model || (v.model.kind !== 'LLMModel' && v.model.kind !== 'PassthroughModel') || typeof v.model.name !== 'string') return undefined;
    return {
      at: v.at,
      action: v.action as AuditAction,
      actor: v.actor,
      ...(typeof v.actorSubject === 'string' ? { actorSubject: v.actorSubject } : {}),
      model: { kind: v.model.kind, name: v.model.name },
      clientId: v.clientId,
      owner: v.owner,
      ...(typeof v.subject === 'string' ? { subject: v.subject } : {}),
      ...(typeof v.reason === 'string' ? { reason: v.reason } : {}),
    };
  } catch {
    return undefined;
  }
}

/** Entries matching the filter, oldest first. */
export function filterAuditEntries(entries: readonly AuditEntry[], filter: AuditFilter = {}): AuditEntry[] {
  const since = filter.since?.getTime();
  return entries
    .filter((e) => (filter.model === undefined || e.model.name === filter.model) && (filter.user === undefined || e.owner === filter.user || e.actor === filter.user) && (since === undefined || Date.parse(e.at) >= since))
    .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
}

/** Labels of a shard. */
export function auditShardLabels(day: string): Record<string, string> {
  return {
    'app.kubernetes.io/managed-by': 'nebari-llm-serving',
    'app.kubernetes.io/part-of': 'nebari-llm-serving',
    [LABEL_KEY_AUDIT]: 'true',
    [LABEL_KEY_AUDIT_DAY]: day,
  };
}
