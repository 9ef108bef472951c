import { checkStateChange, isStateChange } from '../../../src/portal/csrf';

const origin = 'https://keys.example.com';
const token = 'session-token-0123456789abcdef';

describe('checkStateChange', () => {
  test.each([
    [{ origin, token }, true],
    [{ origin: null, secFetchSite: 'same-origin', token }, true],
    [{ origin: 'https://evil.example.com', token }, false],
    [{ origin: 'https://keys.example.com.evil.example', token }, false],
    [{ origin: 'http://keys.example.com', token }, false],
    [{ origin: null, secFetchSite: 'cross-site', token }, false],
    [{ origin: null, secFetchSite: 'same-site', token }, false],
    [{ origin: null, secFetchSite: null, token }, false],
    [{ origin, token: null }, false],
    [{ origin, token: '' }, false],
    [{ origin, token: token + 'x' }, false],
    [{ origin, token: 'session-token-0123456789abcdeX' }, false],
  ])('%j -> %s', (req, ok) => {
    expect(checkStateChange(req, origin, token).ok).toBe(ok);
  });

  it('says why it refuses', () => {
    expect(checkStateChange({ origin: 'https://evil.example.com', token }, origin, token)).toEqual({ ok: false, reason: 'cross-site request refused: Origin https://evil.example.com is not https://keys.example.com' });
    expect(checkStateChange({ origin }, origin, token)).toMatchObject({ reason: expect.stringMatching(/CSRF token is missing/) });
  });

  it('treats every method but GET, HEAD and OPTIONS as a state change', () => {
    expect(['POST', 'DELETE', 'PUT', 'PATCH', 'post'].map(isStateChange)).toEqual([true, true, true, true, true]);
    expect(['GET', 'HEAD', 'OPTIONS'].map(isStateChange)).toEqual([false, false, false]);
  });
});
