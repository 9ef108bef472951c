// The key audit log on Kubernetes: append-only ConfigMaps in the models' namespace (format and
// sharding: src/translate/keys/audit.ts). An append adds one data entry under a fresh random key
// with a merge patch, so concurrent appenders never conflict and never overwrite each other; the
// chart's ValidatingAdmissionPolicy refuses any update that changes or removes an entry.
import { randomBytes } from 'node:crypto';
import {
  AUDIT_ENTRY_RANDOM_BYTES,
  AuditEntry,
  AuditFilter,
  LABEL_KEY_AUDIT,
  LABEL_KEY_AUDIT_DAY,
  auditDay,
  auditEntryKey,
  auditShardLabels,
  dataSize,
  filterAuditEntries,
  parseAuditEntry,
  pickAuditShard,
  serializeAuditEntry,
} from '../translate/keys/audit';
import { KubeRest, KubeObject, isConflict, isNotFound, objectRef } from '../kube/rest';
import { retryTransient } from './retry';

export type { AuditEntry, AuditFilter } from '../translate/keys/audit';

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

/** Field manager of audit entries. */
export const auditFieldManager = 'nls-key-audit';

async function addEntry(client: KubeRest, namespace: string, name: string, key: string, value: string): Promise<void> {
  await client.request('PATCH', `/api/v1/namespaces/${namespace}/configmaps/${name}`, {
    query: { fieldManager: auditFieldManager },
    body: { data: { [key]: value } },
    contentType: 'application/merge-patch+json',
  });
}

/**
 * Append one entry to the audit log of `namespace`. Retries transient failures for `waitMs`; a
 * shard that vanished meanwhile (an administrator deleted it) is picked again.
 */
export async function appendAuditEntry(client: KubeRest, namespace: string, entry: AuditEntry, opts: { waitMs?: number } = {}): Promise<void> {
  const deadline = Date.now() + (opts.waitMs ?? 30_000);
  const at = new Date(entry.at);
  const day = auditDay(isNaN(at.getTime()) ? new Date() : at);
  const key = auditEntryKey(isNaN(at.getTime()) ? new Date() : at, randomBytes(AUDIT_ENTRY_RANDOM_BYTES));
  const value = serializeAuditEntry(entry);
  // Names of the day taken by ConfigMaps that are not our shards (not labelled for this day): never
  // appended to, whoever made them, so the log cannot be diverted where it is neither guarded nor read.
  const foreign = new Set<string>();
  await retryTransient(deadline, async () => {
    for (;;) {
      const shards = await client.list<ConfigMap>('v1', 'ConfigMap', { namespace, labelSelector: `${LABEL_KEY_AUDIT}=true,${LABEL_KEY_AUDIT_DAY}=${day}` });
      const taken = [...foreign].map((name) => ({ name, size: Number.POSITIVE_INFINITY }));
      const pick = pickAuditShard(day, [...shards.items.map((s) => ({ name: s.metadata.name, size: dataSize(s.data) })), ...taken]);
      if (pick.create) {
        try {
          // Created with the entry in it: one write when the shard is new.
          await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: pick.name, namespace, labels: auditShardLabels(day) }, data: { [key]: value } } as KubeObject, { fieldManager: auditFieldManager });
          return;
        } catch (err) {
          if (!isConflict(err)) throw err;
        }
        // Someone else created it first: append only if it is one of ours.
        const existing = await client.get<ConfigMap>(objectRef('v1', 'ConfigMap', pick.name, namespace));
        const labels = existing?.metadata.labels ?? {};
        if (existing && (labels[LABEL_KEY_AUDIT] !== 'true' || labels[LABEL_KEY_AUDIT_DAY] !== day)) {
          foreign.add(pick.name);
          continue;
        }
      }
      try {
        await addEntry(client, namespace, pick.name, key, value);
        return;
      } catch (err) {
        if (!isNotFound(err) || Date.now() >= deadline) throw err;
      }
    }
  });
}

/** Entries of the audit log of `namespace` matching the filter, oldest first. */
export async function readAuditEntries(client: KubeRest, namespace: string, filter: AuditFilter = {}): Promise<AuditEntry[]> {
  const shards = await client.list<ConfigMap>('v1', 'ConfigMap', { namespace, labelSelector: `${LABEL_KEY_AUDIT}=true` });
  const since = filter.since ? auditDay(filter.since) : undefined;
  const entries: AuditEntry[] = [];
  for (const shard of shards.items) {
    const day = shard.metadata.labels?.[LABEL_KEY_AUDIT_DAY];
    if (since && day && day < since) continue; // a whole day before `since`
    for (const v of Object.values(shard.data ?? {})) {
      const e = parseAuditEntry(v);
      if (e) entries.push(e);
    }
  }
  return filterAuditEntries(entries, filter);
}
