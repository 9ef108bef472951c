import { WaitTimeout, waitUntil } from '../../../src/cli/lifecycle/wait';

describe('waitUntil', () => {
  test('reports each new status once and returns the final one', async () => {
    const statuses = ['0/1 ready', '0/1 ready', '1/1 ready'];
    const lines: string[] = [];
    let i = 0;
    const final = await waitUntil('rollout', async () => ({ done: i === 2, status: statuses[Math.min(i++, 2)] }), { timeoutMs: 5000, intervalMs: 1, report: (l) => lines.push(l) });
    expect(final).toBe('1/1 ready');
    expect(lines.map((l) => l.replace(/ \(\d+\.\d s\)$/, ''))).toEqual(['waiting: 0/1 ready', 'ok: 1/1 ready']);
  });

  test('a read that throws is reported as a status and retried, not fatal', async () => {
    let calls = 0;
    const lines: string[] = [];
    await waitUntil('secret', async () => {
      if (++calls === 1) throw new Error('connection refused');
      return { done: true, status: 'present' };
    }, { timeoutMs: 5000, intervalMs: 1, report: (l) => lines.push(l) });
    expect(lines[0]).toMatch(/^waiting: cannot read yet: connection refused/);
  });

  test('times out naming what it waited for and the last status', async () => {
    const wait = waitUntil('the serving CA', async () => ({ done: false, status: 'Secret has no ca.crt yet' }), { timeoutMs: 30, intervalMs: 5 });
    await expect(wait).rejects.toBeInstanceOf(WaitTimeout);
    await expect(wait).rejects.toThrow('timed out after 0 s waiting for the serving CA; last seen: Secret has no ca.crt yet');
  });
});
