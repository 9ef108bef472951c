import {
  AUDIT_SHARD_ROLL_BYTES,
  AuditEntry,
  auditDay,
  auditEntryKey,
  auditShardIndex,
  auditShardName,
  dataSize,
  filterAuditEntries,
  parseAuditEntry,
  pickAuditShard,
  serializeAuditEntry,
} from '../../../../src/translate/keys/audit';

const entry = (at: string, extra: Partial<AuditEntry> = {}): AuditEntry => ({
  at,
  action: 'mint',
  actor: 'alice',
  model: { kind: 'LLMModel', name: 'm1' },
  clientId: 'c1',
  owner: 'alice',
  ...extra,
});

describe('audit shards', () => {
  it('names one shard per UTC day, with an index past the first', () => {
    expect(auditDay(new Date('2026-12-02T23:59:59Z'))).toBe('20261202');
    expect(auditShardName('20261202', 0)).toBe('nls-key-audit-20261202');
    expect(auditShardName('20261202', 3)).toBe('nls-key-audit-20261202-3');
    expect(auditShardIndex('nls-key-audit-20261202-3', '20261202')).toBe(3);
    expect(auditShardIndex('nls-key-audit-20261202', '20261202')).toBe(0);
    expect(auditShardIndex('nls-key-audit-20261202-03', '20261202')).toBeUndefined();
    expect(auditShardIndex('nls-key-audit-20261203', '20261202')).toBeUndefined();
  });

  it('appends to the highest shard until the roll size, then creates the next', () => {
    const day = '20261202';
    expect(pickAuditShard(day, [])).toEqual({ name: 'nls-key-audit-20261202', create: true });
    expect(pickAuditShard(day, [{ name: auditShardName(day, 0), size: AUDIT_SHARD_ROLL_BYTES }, { name: auditShardName(day, 1), size: 10 }])).toEqual({ name: 'nls-key-audit-20261202-1', create: false });
    expect(pickAuditShard(day, [{ name: auditShardName(day, 1), size: AUDIT_SHARD_ROLL_BYTES }, { name: auditShardName(day, 0), size: 5 }])).toEqual({ name: 'nls-key-audit-20261202-2', create: true });
    expect(pickAuditShard(day, [{ name: 'unrelated', size: 0 }])).toEqual({ name: 'nls-key-audit-20261202', create: true });
  });

  it('counts data size in bytes of keys and values', () => {
    expect(dataSize({ ab: 'cdé' })).toBe(2 + 4);
    expect(dataSize(undefined)).toBe(0);
  });
});

describe('audit entries', () => {
  it('keys sort by time and are valid ConfigMap data keys', () => {
    const k = auditEntryKey(new Date('2026-12-02T06:22:50.123Z'), new Uint8Array(6).fill(0xab));
    expect(k).toBe('20261202T062250123Z-abababababab');
    expect(k).toMatch(/^[-._a-zA-Z0-9]+$/);
    expect(() => auditEntryKey(new Date(), new Uint8Array(2))).toThrow('need 6 random bytes');
  });

  it('round-trips, scrubs anything shaped like a key and bounds free text', () => {
    const e = entry('2026-12-02T06:00:00.000Z', { action: 'revoke', subject: 'sub-1', reason: 'pasted sk-AAAAAAAAAAAAAAAAAAAAAAAA by mistake ' + 'x'.repeat(400) });
    const json = serializeAuditEntry(e);
    expect(json).not.toContain('sk-AAAA');
    const back = parseAuditEntry(json)!;
    expect(back.reason!.startsWith('pasted sk-[redacted] by mistake')).toBe(true);
    expect(back.reason!.length).toBe(300);
    expect({ ...back, reason: undefined }).toEqual({ ...e, reason: undefined });
  });

  it('skips stored values that are not entries', () => {
    expect(parseAuditEntry('nope')).toBeUndefined();
    expect(parseAuditEntry(JSON.stringify({ ...entry('t'), action: 'delete' }))).toBeUndefined();
    expect(parseAuditEntry(JSON.stringify({ ...entry('t'), model: { kind: 'AgentDeployment', name: 'a' } }))).toBeUndefined();
  });

  it('filters by model, by user as owner or actor, and by time, oldest first', () => {
    const es = [
      entry('2026-12-02T08:00:00Z', { clientId: 'late' }),
      entry('2026-12-01T08:00:00Z', { clientId: 'early', model: { kind: 'PassthroughModel', name: 'm2' } }),
      entry('2026-12-02T07:00:00Z', { clientId: 'op', actor: 'operator', owner: 'bob', action: 'expire' }),
    ];
    expect(filterAuditEntries(es).map((e) => e.clientId)).toEqual(['early', 'op', 'late']);
    expect(filterAuditEntries(es, { model: 'm1' }).map((e) => e.clientId)).toEqual(['op', 'late']);
    expect(filterAuditEntries(es, { user: 'bob' }).map((e) => e.clientId)).toEqual(['op']);
    expect(filterAuditEntries(es, { user: 'operator' }).map((e) => e.clientId)).toEqual(['op']);
    expect(filterAuditEntries(es, { since: new Date('2026-12-02T07:30:00Z') }).map((e) => e.clientId)).toEqual(['late']);
  });
});
