import { WorkQueue, backoffDelay } from '../../../../src/operator/runtime/queue';

describe('backoffDelay', () => {
  it('doubles from the base delay up to the ceiling', () => {
    const opts = { baseDelayMs: 100, maxDelayMs: 1000 };
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelay(n, opts))).toEqual([100, 200, 400, 800, 1000, 1000]);
  });
});

describe('WorkQueue', () => {
  it('deduplicates keys waiting in the queue', async () => {
    const q = new WorkQueue();
    q.add('ns/a');
    q.add('ns/a');
    q.add('ns/b');
    expect(q.depth).toBe(2);
    expect(await q.get()).toBe('ns/a');
    expect(await q.get()).toBe('ns/b');
  });

  it('never hands the same key to two workers and re-queues a key added while it is processed', async () => {
    const q = new WorkQueue();
    q.add('ns/a');
    const first = await q.get();
    q.add('ns/a');
    expect(q.depth).toBe(0);
    q.done(first!);
    expect(q.depth).toBe(1);
    expect(await q.get()).toBe('ns/a');
  });

  it('hands a key to a waiting worker immediately', async () => {
    const q = new WorkQueue();
    const waiting = q.get();
    q.add('ns/x');
    await expect(waiting).resolves.toBe('ns/x');
  });

  it('retries with growing per-key backoff and resets on forget', () => {
    const q = new WorkQueue({ baseDelayMs: 10, maxDelayMs: 100 });
    expect(q.addRateLimited('ns/a')).toBe(10);
    expect(q.addRateLimited('ns/a')).toBe(20);
    expect(q.addRateLimited('ns/b')).toBe(10);
    q.forget('ns/a');
    expect(q.failureCount('ns/a')).toBe(0);
    q.shutDown();
  });

  it('delivers delayed keys after the delay, keeping the earliest pending delay', async () => {
    const q = new WorkQueue();
    q.addAfter('ns/a', 500);
    q.addAfter('ns/a', 20);
    const started = Date.now();
    expect(await q.get()).toBe('ns/a');
    expect(Date.now() - started).toBeLessThan(400);
  });

  it('returns undefined to waiting workers on shutdown', async () => {
    const q = new WorkQueue();
    const waiting = q.get();
    q.shutDown();
    await expect(waiting).resolves.toBeUndefined();
    q.add('ns/a');
    expect(q.depth).toBe(0);
  });
});
