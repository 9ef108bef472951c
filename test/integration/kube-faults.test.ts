// The REST client and the informer against the real API server through a proxy that breaks the
// connection on purpose (test/support/fault-proxy.ts). A frozen, half-open watch is noticed within
// the idle bound and re-opened from its resourceVersion; outages (503, refused, reset) are ridden
// out with capped, jittered backoff and few attempts; a write that may have reached the server is
// never sent twice.
import { KubeRest, RetryReason, objectRef } from '../../src/kube/rest';
import { WatchIdleError } from '../../src/kube/watch';
import { Informer } from '../../src/kube/informer';
import { createLogger } from '../../src/runtime/log';
import { createNamespace, kubeConfig, rest, uniqueName } from '../support/cluster';
import { FaultProxy, startFaultProxy } from '../support/fault-proxy';
import { waitFor } from '../support/processes';

const admin = rest();
const ns = uniqueName('faults');
let proxy: FaultProxy;

beforeAll(async () => {
  proxy = await startFaultProxy(kubeConfig());
  await createNamespace(ns);
});

afterAll(async () => {
  await proxy?.close();
  await admin.delete(objectRef('v1', 'Namespace', ns));
  admin.close();
});

afterEach(() => proxy.setMode('forward'));

const configMap = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data: { a: '1' } });

/** A client through the proxy that records its retries. */
function proxiedClient(): { client: KubeRest; retries: RetryReason[] } {
  const client = new KubeRest(proxy.kubeConfig());
  const retries: RetryReason[] = [];
  client.metrics = { observeRetry: (_method, reason) => retries.push(reason) };
  return { client, retries };
}

describe('REST client retries', () => {
  test('a read answered 503 is retried with backoff until the server answers again', async () => {
    const { client, retries } = proxiedClient();
    await proxy.setMode('unavailable');
    const before = proxy.counts.unavailable;
    const listing = client.list('v1', 'ConfigMap', { namespace: ns });
    await waitFor('two 503 answers', async () => proxy.counts.unavailable - before >= 2, { intervalMs: 10, timeoutMs: 10_000 });
    await proxy.setMode('forward');
    await expect(listing).resolves.toMatchObject({ items: expect.any(Array) });
    expect(retries.every((r) => r === 'unavailable')).toBe(true);
    expect(retries.length).toBeGreaterThanOrEqual(2);
    client.close();
  });

  test('a read whose connection is refused, then reset, is retried', async () => {
    const { client, retries } = proxiedClient();
    await proxy.setMode('refuse');
    const reading = client.get(objectRef('v1', 'Namespace', ns));
    await waitFor('a retry after a refused connection', async () => retries.includes('not-connected'), { intervalMs: 10, timeoutMs: 10_000 });
    await proxy.setMode('reset');
    await waitFor('a retry after a reset connection', async () => retries.includes('connection'), { intervalMs: 10, timeoutMs: 10_000 });
    await proxy.setMode('forward');
    await expect(reading).resolves.toMatchObject({ metadata: { name: ns } });
    client.close();
  });

  test('a create answered 503 or cut by a reset is not sent again; a refused one is', async () => {
    const { client, retries } = proxiedClient();
    await client.resource('v1', 'ConfigMap'); // discovery (a GET, which would be retried) beforehand
    // The discovery connection is kept alive and the mode change cuts it; drop it, so each create
    // meets the new mode on a fresh connection rather than a reset on the stale one.
    await proxy.setMode('unavailable');
    client.closeIdleConnections();
    const unavailable = proxy.counts.unavailable;
    await expect(client.create(configMap('after-503'))).rejects.toMatchObject({ code: 503 });
    expect(proxy.counts.unavailable - unavailable).toBe(1);

    await proxy.setMode('reset');
    client.closeIdleConnections();
    const resets = proxy.counts.resets;
    await expect(client.create(configMap('after-reset'))).rejects.toMatchObject({ code: 'ECONNRESET' });
    expect(proxy.counts.resets - resets).toBe(1);
    expect(retries).toEqual([]);

    // Refused means no byte reached the server: sending it again is safe for any method.
    await proxy.setMode('refuse');
    const creating = client.create(configMap('after-refused'));
    await waitFor('a retry after a refused connection', async () => retries.includes('not-connected'), { intervalMs: 10, timeoutMs: 10_000 });
    await proxy.setMode('forward');
    await expect(creating).resolves.toMatchObject({ metadata: { name: 'after-refused' } });
    expect(await admin.get(objectRef('v1', 'ConfigMap', 'after-503', ns))).toBeUndefined();
    client.close();
  });
});

describe('informer', () => {
  /** An informer on this file's ConfigMaps through the proxy, with its log lines and watch errors. */
  function proxiedInformer(opts: { watchIdleTimeoutMs?: number; backoff?: { baseDelayMs: number; maxDelayMs: number } }) {
    const { client } = proxiedClient();
    const lines: Record<string, unknown>[] = [];
    const errors: unknown[] = [];
    const log = createLogger({ level: 'debug', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
    const informer = new Informer(client, { apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, onWatchError: (err) => errors.push(err), ...opts }, log);
    const stop = async () => {
      await informer.stop();
      client.close();
    };
    return { informer, lines, errors, stop };
  }

  test('a frozen (half-open) watch is re-opened within the idle bound and sees what was created meanwhile', async () => {
    // Far below the 150 s default so the test is quick; healthy watches are cut too at this bound
    // (no bookmark comes that often), which does not matter here.
    const idleMs = 3000;
    const { informer, errors, stop } = proxiedInformer({ watchIdleTimeoutMs: idleMs });
    try {
      informer.start();
      await waitFor('the informer synced', async () => informer.hasSynced);
      await admin.create(configMap('before-freeze'));
      await waitFor('before-freeze in the cache', async () => !!informer.get(ns, 'before-freeze'), { intervalMs: 20 });

      proxy.freeze();
      const frozenAt = Date.now();
      const idleBefore = errors.filter((e) => e instanceof WatchIdleError).length;
      await admin.create(configMap('during-freeze'));
      // Without the idle bound the frozen watch never ends: the server's close is frozen too.
      await waitFor('during-freeze in the cache', async () => !!informer.get(ns, 'during-freeze'), { intervalMs: 20, timeoutMs: idleMs + 10_000 });
      const seconds = (Date.now() - frozenAt) / 1000;
      console.log(`half-open watch: ${proxy.counts.frozen} connection(s) frozen; object created meanwhile seen ${seconds.toFixed(2)} s after the freeze (idle bound ${idleMs / 1000} s)`);
      expect(proxy.counts.frozen).toBeGreaterThan(0);
      expect(errors.filter((e) => e instanceof WatchIdleError).length).toBeGreaterThan(idleBefore);
      expect(informer.get(ns, 'before-freeze')).toBeDefined();
    } finally {
      await stop();
    }
  });

  test('after a period of 503 answers and refused connections it recovers, with capped jittered backoff and few attempts', async () => {
    const backoff = { baseDelayMs: 200, maxDelayMs: 1600 };
    const { informer, lines, stop } = proxiedInformer({ backoff, watchIdleTimeoutMs: 60_000 });
    let earlierFailures = 0;
    const failures = () => lines.filter((l) => l.msg === 'watch failed; reconnecting').slice(earlierFailures);
    try {
      informer.start();
      await waitFor('the informer synced', async () => informer.hasSynced);
      await admin.create(configMap('before-outage'));
      await waitFor('before-outage in the cache', async () => !!informer.get(ns, 'before-outage'), { intervalMs: 20 });

      earlierFailures = failures().length;
      const answered503 = proxy.counts.unavailable;
      const outageStarted = Date.now();
      await proxy.setMode('unavailable');
      await admin.create(configMap('during-outage'));
      // Long enough for the backoff to reach its cap (attempt 4) and the informer to list again.
      await waitFor('5 failed attempts while the server answers 503', async () => failures().length >= 5, { timeoutMs: 30_000 });
      await proxy.setMode('refuse');
      await waitFor('2 more failed attempts while connections are refused', async () => failures().length >= 7, { timeoutMs: 30_000 });
      await proxy.setMode('forward');
      const restoredAt = Date.now();
      await waitFor('during-outage in the cache', async () => !!informer.get(ns, 'during-outage'), { intervalMs: 20, timeoutMs: 20_000 });
      const recovery = (Date.now() - restoredAt) / 1000;
      const outage = (restoredAt - outageStarted) / 1000;

      const delays = failures().map((l) => l.delayMs as number);
      const ceilings = delays.map((_, i) => Math.min(backoff.maxDelayMs, backoff.baseDelayMs * 2 ** i));
      const requests503 = proxy.counts.unavailable - answered503;
      console.log(
        `outage of ${outage.toFixed(1)} s: ${delays.length} informer attempts failed (delays ${delays.join(', ')} ms), ` +
          `${requests503} requests answered 503 (list retries included); recovered ${recovery.toFixed(2)} s after the server came back`,
      );
      // Each delay lies between half its ceiling and the ceiling, which doubles up to the cap...
      delays.forEach((d, i) => {
        expect(d).toBeGreaterThanOrEqual(ceilings[i] / 2);
        expect(d).toBeLessThanOrEqual(ceilings[i]);
      });
      // ...and is jittered: not the same fraction of its ceiling every time.
      expect(new Set(delays.map((d, i) => (d / ceilings[i]).toFixed(3))).size).toBeGreaterThan(1);
      // A client without backoff makes hundreds of attempts a second; this one stays within a few
      // per second of outage (list retries inside the REST client included).
      expect(requests503).toBeGreaterThanOrEqual(3);
      expect(requests503).toBeLessThanOrEqual(Math.ceil(outage * 3) + 5);
      // Back within the longest delay in force (the informer's cap, or a list retry's 2 s) and a
      // list; generous for a loaded machine, far below an uncapped backoff's.
      expect(recovery).toBeLessThan(10);
    } finally {
      await stop();
    }
  });
});
