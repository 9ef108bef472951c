import { WorkQueue, backoffDelay } from '../../../../src/operator/runtime/queue';
import { ManualClock } from './manual-clock';

/** Settles a promise's state without waiting on time: 'pending' if it has not resolved yet. */
async function peek<T>(p: Promise<T>): Promise<T | 'pending'> {
  return Promise.race([p, new Promise<'pending'>((resolve) => setImmediate(() => resolve('pending')))]);
}

describe('backoffDelay', () => {
  it('doubles from the base delay up to the ceiling', () => {
    const opts = { baseDelayMs: 100, maxDelayMs: 1000 };
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelay(n, opts))).toEqual([100, 200, 400, 800, 1000, 1000]);
  });

  it('defaults to 200 ms doubling up to five minutes, without overflowing', () => {
    expect(backoffDelay(1)).toBe(200);
    expect(backoffDelay(12)).toBe(300_000);
    expect(backoffDelay(10_000)).toBe(300_000);
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

  it('never hands the same key to two workers and re-queues a key added while it is processed, once', async () => {
    const q = new WorkQueue();
    const first = q.get();
    const second = q.get();
    q.add('ns/a');
    expect(await first).toBe('ns/a');
    q.add('ns/a');
    q.add('ns/a');
    // In flight: the second worker does not get it, however often it is added.
    expect(await peek(second)).toBe('pending');
    expect(q.depth).toBe(0);
    expect(q.inFlight).toBe(1);
    q.done('ns/a');
    expect(await second).toBe('ns/a');
    q.done('ns/a');
    expect(q.depth).toBe(0);
    expect(q.inFlight).toBe(0);
  });

  it('hands a key to a waiting worker immediately, oldest waiter first', async () => {
    const q = new WorkQueue();
    const w1 = q.get();
    const w2 = q.get();
    q.add('ns/x');
    q.add('ns/y');
    await expect(w1).resolves.toBe('ns/x');
    await expect(w2).resolves.toBe('ns/y');
  });

  it('retries a failing key after a doubling, capped delay, and not before', () => {
    const clock = new ManualClock();
    const q = new WorkQueue({ baseDelayMs: 10, maxDelayMs: 25, clock });
    expect([1, 2, 3, 4].map(() => q.addRateLimited('ns/a'))).toEqual([10, 20, 25, 25]);
    expect(q.failureCount('ns/a')).toBe(4);
    // Only the earliest of the pending delays counts; the key arrives once, at 10 ms.
    clock.advance(9);
    expect(q.depth).toBe(0);
    clock.advance(1);
    expect(q.depth).toBe(1);
    clock.advance(100);
    expect(q.depth).toBe(1);
    expect(q.addRateLimited('ns/b')).toBe(10);
    q.forget('ns/a');
    expect(q.failureCount('ns/a')).toBe(0);
    expect(q.addRateLimited('ns/a')).toBe(10);
  });

  it('keeps the earliest pending delay: a later one does not postpone it, a sooner one replaces it', () => {
    const clock = new ManualClock();
    const q = new WorkQueue({ clock });
    q.addAfter('ns/a', 500);
    q.addAfter('ns/a', 900);
    q.addAfter('ns/a', 20);
    expect(clock.pending).toBe(1);
    clock.advance(19);
    expect(q.depth).toBe(0);
    clock.advance(1);
    expect(q.depth).toBe(1);
    clock.advance(1000);
    expect(q.depth).toBe(1);
  });

  it('does not duplicate a delayed key that is already queued, and re-queues one that is in flight', async () => {
    const clock = new ManualClock();
    const q = new WorkQueue({ clock });
    q.addAfter('ns/a', 50);
    q.add('ns/a');
    clock.advance(50);
    expect(q.depth).toBe(1);
    const key = await q.get();
    q.addAfter('ns/a', 10);
    clock.advance(10);
    expect(q.depth).toBe(0);
    q.done(key!);
    expect(q.depth).toBe(1);
  });

  it('adds at once for a delay of zero or less', () => {
    const q = new WorkQueue({ clock: new ManualClock() });
    q.addAfter('ns/a', 0);
    q.addAfter('ns/b', -5);
    expect(q.depth).toBe(2);
  });

  it('reports the depth as it changes', async () => {
    const depths: number[] = [];
    const q = new WorkQueue({ onDepth: (d) => depths.push(d) });
    q.add('ns/a');
    q.add('ns/b');
    await q.get();
    expect(depths).toEqual([1, 2, 1]);
  });

  it('on shutdown answers waiting and later workers with undefined and drops pending and new keys', async () => {
    const clock = new ManualClock();
    const q = new WorkQueue({ clock });
    q.add('ns/busy');
    const busy = await q.get();
    q.add('ns/busy'); // added while in flight
    q.addAfter('ns/later', 100);
    const waiting = q.get();
    q.shutDown();
    await expect(waiting).resolves.toBeUndefined();
    expect(clock.pending).toBe(0);
    clock.advance(1000);
    q.add('ns/new');
    q.done(busy!);
    expect(q.depth).toBe(0);
    await expect(q.get()).resolves.toBeUndefined();
  });
});
