import { randomBytes } from 'node:crypto';
import { SESSION_MAX_SECONDS, newSession, seal, unseal } from '../../../src/portal/session';

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
