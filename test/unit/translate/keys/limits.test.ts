import { DEFAULT_KEY_LIMITS, KeyLimitError, keyCountRefusal, keyLimitsFromEnv, liveKeysOf, mintRateRefusal, recentMintsOf } from '../../../../src/translate/keys/limits';
import { ApiKeyRecord } from '../../../../src/translate/keys/api-keys';
import { AuditEntry } from '../../../../src/translate/keys/audit';

const now = new Date('2030-01-01T12:00:00.000Z');
const model = { kind: 'LLMModel' as const, name: 'llama', namespace: 'llm' };
const rec = (clientId: string, createdBy: string, extra: Partial<ApiKeyRecord> = {}): ApiKeyRecord => ({ clientId, createdBy, createdAt: '2030-01-01T00:00:00.000Z', ...extra });
const mint = (at: string, owner: string, extra: Partial<AuditEntry> = {}): AuditEntry => ({ at, action: 'mint', actor: owner, model: { kind: 'LLMModel', name: 'llama' }, clientId: `${owner}-${at}`, owner, ...extra });

describe('per-user key limits', () => {
  it('counts only the owner\'s live keys: by username or OIDC subject, not expired, not with an unreadable expiry', () => {
    const records = [
      rec('a', 'alice'),
      rec('b', 'alice', { expiresAt: '2030-01-02T00:00:00.000Z' }),
      rec('c', 'alice', { expiresAt: '2030-01-01T12:00:00.000Z' }), // expires exactly now
      rec('d', 'alice', { expiresAt: 'tomorrow' }),
      rec('e', 'alice-renamed', { subject: 'sub-a' }),
      rec('f', 'bob'),
    ];
    expect(liveKeysOf(records, { user: 'alice' }, now).map((r) => r.clientId)).toEqual(['a', 'b']);
    expect(liveKeysOf(records, { user: 'alice', subject: 'sub-a' }, now).map((r) => r.clientId)).toEqual(['a', 'b', 'e']);
  });

  it('counts the owner\'s mints of the last hour only, from mint entries', () => {
    const entries = [
      mint('2030-01-01T10:59:59.000Z', 'alice'), // more than an hour ago
      mint('2030-01-01T11:00:00.000Z', 'alice'), // exactly an hour ago: outside
      mint('2030-01-01T11:30:00.000Z', 'alice'),
      mint('2030-01-01T11:10:00.000Z', 'other', { subject: 'sub-a' }),
      { ...mint('2030-01-01T11:40:00.000Z', 'alice'), action: 'revoke' as const },
      mint('2030-01-01T11:50:00.000Z', 'bob'),
    ];
    expect(recentMintsOf(entries, { user: 'alice', subject: 'sub-a' }, now).map((e) => e.at)).toEqual(['2030-01-01T11:10:00.000Z', '2030-01-01T11:30:00.000Z']);
  });

  it('refuses at the limit, naming the limit, its chart value and the fix', () => {
    const limits = { keysPerUserPerModel: 2, mintsPerUserPerHour: 2 };
    expect(keyCountRefusal(model, { user: 'alice' }, 1, limits)).toBeUndefined();
    const tooMany = keyCountRefusal(model, { user: 'alice' }, 2, limits)!;
    expect(tooMany).toBeInstanceOf(KeyLimitError);
    expect(tooMany.limit).toBe('keysPerUserPerModel');
    expect(tooMany.message).toBe('alice already has 2 live API keys for LLMModel llama (limit 2 per user per model, chart value portal.keyLimits.keysPerUserPerModel); revoke a key you no longer use, or ask an administrator to raise the limit');
    const mints = [mint('2030-01-01T11:10:00.000Z', 'alice'), mint('2030-01-01T11:30:00.000Z', 'alice'), mint('2030-01-01T11:45:00.000Z', 'alice')];
    expect(mintRateRefusal({ user: 'alice' }, mints.slice(0, 1), limits)).toBeUndefined();
    const tooFast = mintRateRefusal({ user: 'alice' }, mints, limits)!;
    expect(tooFast.limit).toBe('mintsPerUserPerHour');
    // Two of the three must leave the window for one more mint to fit: the second one leaves at 12:30.
    expect(tooFast.message).toBe('alice minted 3 API keys in the last hour (limit 2 per user per hour, chart value portal.keyLimits.mintsPerUserPerHour); wait until 2030-01-01T12:30:00.000Z, or ask an administrator');
  });

  it('reads the limits from the environment, defaulting to 10 keys and 20 mints', () => {
    expect(DEFAULT_KEY_LIMITS).toEqual({ keysPerUserPerModel: 10, mintsPerUserPerHour: 20 });
    expect(keyLimitsFromEnv({})).toEqual(DEFAULT_KEY_LIMITS);
    expect(keyLimitsFromEnv({ NLS_PORTAL_KEYS_PER_USER_PER_MODEL: ' 3 ', NLS_PORTAL_MINTS_PER_USER_PER_HOUR: '50' })).toEqual({ keysPerUserPerModel: 3, mintsPerUserPerHour: 50 });
    expect(() => keyLimitsFromEnv({ NLS_PORTAL_KEYS_PER_USER_PER_MODEL: '2001' })).toThrow('NLS_PORTAL_KEYS_PER_USER_PER_MODEL: "2001" is not a whole number between 1 and 2000; set the chart value portal.keyLimits.keysPerUserPerModel');
  });
});
