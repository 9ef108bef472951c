import { randomBytes } from 'node:crypto';
import { SESSION_MAX_SECONDS, loadSessionKeys, newSession, seal, unseal, unsealWith } from '../../../src/portal/session';
import { MemoryKube } from '../api-keys/memory-kube';

const key = randomBytes(32);

describe('sealed cookies', () => {
  const session = newSession({ sub: 'u-1', username: 'alice', groups: ['team-a'], generation: 'g-1' }, 1_000_000);

  it('round-trips a session, which lasts at most 8 hours and carries a random CSRF token', () => {
    const sealed = seal(key, 'session', session);
    expect(unseal(key, 'session', sealed, 1_000_000)).toEqual(session);
    expect(session.exp).toBe(1_000_000 + SESSION_MAX_SECONDS);
    expect(session.csrf).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(newSession({ sub: 'u-1', username: 'alice', groups: [], generation: 'g-1' }, 0, 99 * 3600).exp).toBe(SESSION_MAX_SECONDS);
    expect(newSession({ sub: 'u-1', username: 'alice', groups: [], generation: 'g-1' }).csrf).not.toBe(session.csrf);
  });

  it('does not reveal the payload', () => {
    const sealed = seal(key, 'session', session);
    expect(Buffer.from(sealed, 'base64url').toString('latin1')).not.toContain('alice');
    expect(seal(key, 'session', session)).not.toBe(sealed); // fresh IV each time
  });

  it('refuses an expired, tampered, truncated, foreign-key or other-purpose value', () => {
    const sealed = seal(key, 'session', session);
    expect(unseal(key, 'session', sealed, session.exp)).toBeUndefined();
    const raw = Buffer.from(sealed, 'base64url');
    for (const i of [0, 13, 30, raw.length - 1]) {
      const t = Buffer.from(raw);
      t[i] ^= 1;
      expect(unseal(key, 'session', t.toString('base64url'), 1_000_000)).toBeUndefined();
    }
    expect(unseal(key, 'session', sealed.slice(0, 30), 1_000_000)).toBeUndefined();
    expect(unseal(randomBytes(32), 'session', sealed, 1_000_000)).toBeUndefined();
    expect(unseal(key, 'login', sealed, 1_000_000)).toBeUndefined();
    expect(unseal(key, 'session', undefined)).toBeUndefined();
    expect(unseal(key, 'session', 'not base64 at all!')).toBeUndefined();
  });

  it('refuses a payload without an expiry', () => {
    expect(unseal(key, 'x', seal(key, 'x', { sub: 'a' } as never))).toBeUndefined();
  });
});

// Issue 29, Medium 7: rotating the session key must not make stored refresh tokens unreadable.
describe('session key ring', () => {
  const [k1, k2, k3] = [randomBytes(32), randomBytes(32), randomBytes(32)];

  it('seals with the newest key and opens with every key of the ring, saying which were sealed with an older one', () => {
    const before = seal([k1], 'refresh-token', { token: 't', exp: 2e9 });
    const after = seal([k1, k2], 'refresh-token', { token: 't', exp: 2e9 });
    expect(unseal(k2, 'refresh-token', after)).toEqual({ token: 't', exp: 2e9 });
    expect(unseal(k1, 'refresh-token', after)).toBeUndefined();
    expect(unsealWith([k1, k2], 'refresh-token', before)).toEqual({ payload: { token: 't', exp: 2e9 }, newest: false });
    expect(unsealWith([k1, k2], 'refresh-token', after)).toEqual({ payload: { token: 't', exp: 2e9 }, newest: true });
    // Once the old key is dropped, what only it sealed no longer opens.
    expect(unseal([k2, k3], 'refresh-token', before)).toBeUndefined();
  });

  const secret = (data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'nls-portal-session', namespace: 'llm' }, data }) as never;

  it('loads the keys of the session Secret oldest first by entry name, ignoring other entries', async () => {
    const kube = new MemoryKube();
    await kube.put(secret({ 'key-20261204T0900Z': k3.toString('base64'), key: k1.toString('base64'), 'key-20260101T0000Z': k2.toString('base64'), note: 'rotated by ops' }));
    expect(await loadSessionKeys(kube, 'llm', 'nls-portal-session')).toEqual([k1, k2, k3]);
  });

  it('creates the Secret with one key when missing', async () => {
    const kube = new MemoryKube();
    const keys = await loadSessionKeys(kube, 'llm', 'nls-portal-session');
    expect(keys).toHaveLength(1);
    expect(keys[0]).toHaveLength(32);
    expect(await loadSessionKeys(kube, 'llm', 'nls-portal-session')).toEqual(keys);
  });

  it('names the entry that is not a 32-byte key, and the Secret without any key', async () => {
    const kube = new MemoryKube();
    await kube.put(secret({ key: k1.toString('base64'), 'key-2026': Buffer.from('short').toString('base64') }));
    await expect(loadSessionKeys(kube, 'llm', 'nls-portal-session')).rejects.toThrow('Secret llm/nls-portal-session: data.key-2026 must hold 32 bytes (base64)');
    const empty = new MemoryKube();
    await empty.put(secret({ note: 'x' }));
    await expect(loadSessionKeys(empty, 'llm', 'nls-portal-session')).rejects.toThrow(/no session key; add an entry key-<UTC timestamp>/);
  });
});
