import { ApiKeyRecord } from '../../../../src/translate/keys/api-keys';
import { keysToRevoke, nextExpiry } from '../../../../src/translate/keys/revocation';

const now = new Date('2026-06-01T12:00:00Z');
const rec = (clientId: string, extra: Partial<ApiKeyRecord> = {}): ApiKeyRecord => ({ clientId, createdBy: 'alice', createdAt: '2026-05-01T00:00:00Z', ...extra });
const model = (access?: { public?: boolean; groups?: string[] }) => ({ spec: { access } });

describe('keysToRevoke', () => {
  it('expires keys at or past their expiry, and keeps keys that expire later or never', () => {
    const records = [
      rec('past', { expiresAt: '2026-06-01T11:59:59Z' }),
      rec('exact', { expiresAt: '2026-06-01T12:00:00.000Z' }),
      rec('future', { expiresAt: '2026-06-01T12:00:01Z' }),
      rec('old-record'),
    ];
    expect(keysToRevoke(model({ public: true }), records, now)).toEqual([
      { clientId: 'past', action: 'expire', reason: 'expired at 2026-06-01T11:59:59Z' },
      { clientId: 'exact', action: 'expire', reason: 'expired at 2026-06-01T12:00:00.000Z' },
    ]);
  });

  it('treats an unreadable expiry as expired', () => {
    expect(keysToRevoke(model(), [rec('x', { expiresAt: 'soon' })], now)).toEqual([{ clientId: 'x', action: 'expire', reason: 'expiresAt "soon" is not a date' }]);
  });

  it('revokes group-granted keys whose recorded groups all left spec.access.groups', () => {
    const records = [
      rec('a-only', { grantedBy: 'groups', groups: ['team-a'] }),
      rec('a-and-b', { grantedBy: 'groups', groups: ['team-a', 'team-b'] }),
      rec('b-only', { grantedBy: 'groups', groups: ['team-b'] }),
      rec('a-and-c', { grantedBy: 'groups', groups: ['team-a', 'team-c'] }),
    ];
    expect(keysToRevoke(model({ groups: ['team-b'] }), records, now)).toEqual([
      { clientId: 'a-only', action: 'access-revoked', reason: 'the model no longer grants access to group team-a' },
      { clientId: 'a-and-c', action: 'access-revoked', reason: 'the model no longer grants access to groups team-a, team-c' },
    ]);
  });

  it('revokes keys granted by public access once the model is private and no recorded group grants', () => {
    const records = [rec('pub', { grantedBy: 'public', groups: [] }), rec('pub-with-group', { grantedBy: 'public', groups: ['team-a'] })];
    expect(keysToRevoke(model({ public: true }), records, now)).toEqual([]);
    expect(keysToRevoke(model({ groups: ['team-a'] }), records, now)).toEqual([{ clientId: 'pub', action: 'access-revoked', reason: 'the model is no longer public' }]);
  });

  it('never revokes admin, CLI or old records for access, even when the model grants no one', () => {
    const records = [rec('admin', { grantedBy: 'admin', source: 'cli' }), rec('cli-unrecorded', { source: 'cli' }), rec('old')];
    expect(keysToRevoke(model(), records, now)).toEqual([]);
    expect(keysToRevoke({}, records, now)).toEqual([]);
  });

  it('expiry wins over access revocation for one key (one action per key)', () => {
    expect(keysToRevoke(model(), [rec('both', { grantedBy: 'groups', groups: ['g'], expiresAt: '2026-01-01T00:00:00Z' })], now)).toEqual([
      { clientId: 'both', action: 'expire', reason: 'expired at 2026-01-01T00:00:00Z' },
    ]);
  });
});

describe('nextExpiry', () => {
  it('is the earliest expiry after now, ignoring past, unreadable and missing ones', () => {
    const records = [rec('a', { expiresAt: '2026-06-03T00:00:00Z' }), rec('b', { expiresAt: '2026-06-02T00:00:00Z' }), rec('c', { expiresAt: '2026-05-01T00:00:00Z' }), rec('d', { expiresAt: 'x' }), rec('e')];
    expect(nextExpiry(records, now)).toEqual(new Date('2026-06-02T00:00:00Z'));
  });
  it('is undefined without future expiries', () => {
    expect(nextExpiry([rec('e'), rec('c', { expiresAt: '2026-05-01T00:00:00Z' })], now)).toBeUndefined();
  });
});
