import { jitteredBackoff } from '../../../src/kube/backoff';
import { KubeApiError, RequestTimeoutError, retryReason } from '../../../src/kube/rest';

describe('jitteredBackoff', () => {
  const policy = { baseDelayMs: 100, maxDelayMs: 1000 };

  it('doubles a ceiling up to the cap and puts each delay between half the ceiling and the ceiling', () => {
    const attempts = [1, 2, 3, 4, 5, 6];
    expect(attempts.map((n) => jitteredBackoff(n, policy, () => 0))).toEqual([50, 100, 200, 400, 500, 500]);
    expect(attempts.map((n) => jitteredBackoff(n, policy, () => 0.999999))).toEqual([100, 200, 400, 800, 1000, 1000]);
    expect(jitteredBackoff(3, policy, () => 0.5)).toBe(300);
  });

  it('spreads clients that failed together', () => {
    const randoms = [0.1, 0.4, 0.7, 0.95];
    const delays = randoms.map((r) => jitteredBackoff(4, policy, () => r));
    expect(new Set(delays).size).toBe(randoms.length);
    for (const d of delays) {
      expect(d).toBeGreaterThanOrEqual(400);
      expect(d).toBeLessThanOrEqual(800);
    }
  });

  it('stays capped for huge attempt numbers and treats attempt 0 as the first', () => {
    expect(jitteredBackoff(10_000, policy, () => 0.999999)).toBe(1000);
    expect(jitteredBackoff(0, policy, () => 0.999999)).toBe(100);
  });
});

describe('retryReason', () => {
  const status = (code: number) => new KubeApiError(code, '', '', `status ${code}`);
  const netError = (code: string) => Object.assign(new Error(code), { code });

  it('repeats any method after a 429: the server did not handle the request', () => {
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) expect(retryReason(method, status(429))).toBe('throttled');
  });

  it('repeats any method when the connection was never made', () => {
    for (const code of ['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']) {
      expect(retryReason('POST', netError(code))).toBe('not-connected');
      expect(retryReason('GET', netError(code))).toBe('not-connected');
    }
  });

  it('repeats reads, and only reads, after a 5xx (but 501) or a connection that broke mid-request', () => {
    for (const code of [500, 502, 503, 504]) {
      expect(retryReason('GET', status(code))).toBe('unavailable');
      expect(retryReason('HEAD', status(code))).toBe('unavailable');
      for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) expect(retryReason(method, status(code))).toBeUndefined();
    }
    expect(retryReason('GET', status(501))).toBeUndefined();
    for (const code of ['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ECONNABORTED']) {
      expect(retryReason('GET', netError(code))).toBe('connection');
      expect(retryReason('POST', netError(code))).toBeUndefined();
      expect(retryReason('DELETE', netError(code))).toBeUndefined();
    }
  });

  it('never repeats answers that will not change, our own timeout, or unknown errors', () => {
    for (const code of [400, 401, 403, 404, 409, 410, 422]) expect(retryReason('GET', status(code))).toBeUndefined();
    expect(retryReason('GET', new RequestTimeoutError('GET', '/api/v1', 1000))).toBeUndefined();
    expect(retryReason('GET', new SyntaxError('Unexpected end of JSON input'))).toBeUndefined();
    expect(retryReason('GET', undefined)).toBeUndefined();
  });
});
