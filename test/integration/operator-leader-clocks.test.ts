// Leader election with clocks that disagree and a slow API server: three LeaderElectors in this
// process against the real API server, each with its own clock (an hour ahead, an hour behind,
// right) and its own loopback proxy that can delay or hold its traffic. isLeader is sampled every
// 50 ms and checked at every start of a term: never two leaders. Fail-over still happens when the
// leader's API server turns slow, when only a candidate an hour behind can reach it, and at once
// after a graceful stop.
import { KubeConfig } from '@kubernetes/client-node';
import { createNamespace, kubeConfig, uniqueName } from '../support/cluster';
import { waitFor } from '../support/processes';
import { SlowProxy, startSlowProxy } from '../support/slow-proxy';
import { KubeRest } from '../../src/kube/rest';
import { LeaderElector } from '../../src/runtime/leader';
import { createLogger } from '../../src/runtime/log';

const ns = uniqueName('op-leader-clocks');
const timing = { leaseDurationMs: 6_000, renewDeadlineMs: 4_000, retryPeriodMs: 1_000 };
const HOUR = 3_600_000;

interface Candidate {
  name: string;
  elector: LeaderElector;
  proxy: SlowProxy;
  client: KubeRest;
}
const candidates: Candidate[] = [];
const logLines: string[] = [];
const started = Date.now();
const at = () => `${((Date.now() - started) / 1000).toFixed(2)} s`;

/** What the sampler saw: overlaps (must stay empty) and the succession of leaders. */
const seen = { samples: 0, overlaps: [] as string[], succession: [] as string[] };
const leadersNow = () => candidates.filter((c) => c.elector.isLeader).map((c) => c.name);
function sample(): void {
  seen.samples++;
  const leaders = leadersNow();
  if (leaders.length > 1) seen.overlaps.push(`${at()}: ${leaders.join(' and ')} lead at once (sample)`);
  if (leaders.length === 1 && leaders[0] !== seen.succession.at(-1)) seen.succession.push(leaders[0]);
}
let sampler: NodeJS.Timeout | undefined;

/** The admin kubeconfig with the server replaced by a proxy. */
function viaProxy(url: string): KubeConfig {
  const admin = kubeConfig();
  const cluster = admin.getCurrentCluster()!;
  const user = admin.getCurrentUser()!;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ ...cluster, server: url }],
    users: [user],
    contexts: [{ name: 'proxied', cluster: cluster.name, user: user.name }],
    currentContext: 'proxied',
  });
  return kc;
}

async function addCandidate(name: string, clockOffsetMs: number): Promise<Candidate> {
  const proxy = await startSlowProxy(new URL(kubeConfig().getCurrentCluster()!.server));
  const client = new KubeRest(viaProxy(proxy.url));
  // This node's clock, skewed; timers run in real time (only the reading is off).
  const clock = {
    now: () => Date.now() + clockOffsetMs,
    after: (ms: number, fn: () => void) => {
      const timer = setTimeout(fn, ms);
      return () => clearTimeout(timer);
    },
  };
  const options = { namespace: ns, name: 'clocks-leader', identity: name, ...timing, clock };
  const log = createLogger({ level: 'info', fields: { candidate: name }, write: (line) => logLines.push(`${at()} ${line}`) });
  const elector = new LeaderElector(client, options, log, {
    onStartedLeading: () => {
      const others = leadersNow().filter((n) => n !== name);
      if (others.length) seen.overlaps.push(`${at()}: ${name} started leading while ${others.join(' and ')} led`);
      sample();
    },
    onStoppedLeading: () => sample(),
  });
  const candidate = { name, elector, proxy, client };
  candidates.push(candidate);
  elector.start();
  return candidate;
}

const leader = () => candidates.find((c) => c.elector.isLeader);
/** Watches for `ms` that nothing changes: the sampler records any overlap or change of leader. */
const observeFor = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  await createNamespace(ns);
  sampler = setInterval(sample, 50);
});

afterAll(async () => {
  if (sampler) clearInterval(sampler);
  for (const c of candidates) c.proxy.delayMs = 0;
  await Promise.all(candidates.map((c) => c.elector.stop()));
  for (const c of candidates) {
    c.client.close();
    await c.proxy.close();
  }
});

it('never has two leaders with skewed clocks and a slow API server, and still fails over', async () => {
  try {
    await scenario();
  } catch (err) {
    // The electors' own account of what happened is the first thing to read.
    console.log(`leader election log:\n${logLines.join('\n')}`);
    throw err;
  }
});

async function scenario(): Promise<void> {
  const leads = (c: Candidate) => async () => c.elector.isLeader;
  const behind = await addCandidate('behind', -HOUR);
  await waitFor('behind to lead', leads(behind), { timeoutMs: 15_000, intervalMs: 50 });
  const ahead = await addCandidate('ahead', HOUR);
  const exact = await addCandidate('exact', 0);

  // 1. A candidate an hour ahead does not take a Lease that is being renewed, however old its
  // renewTime looks on that candidate's clock (the others read it for longer than a lease).
  await observeFor(timing.leaseDurationMs + 2 * timing.retryPeriodMs);
  expect(seen.overlaps).toEqual([]);
  expect(seen.succession).toEqual(['behind']);
  expect(leader()?.name).toBe('behind');

  // 2. The leader's API server turns slow: each way takes 1.5 s, so a read and an update do not
  // fit in the 4 s renew deadline. It must step down before another candidate takes over.
  const slowAt = Date.now();
  behind.proxy.delayMs = 1_500;
  await waitFor('a fail-over away from the slow leader', async () => [ahead, exact].some((c) => c.elector.isLeader), { timeoutMs: 25_000, intervalMs: 50 });
  const slowHandover = Date.now() - slowAt;
  expect(seen.overlaps).toEqual([]);
  expect(behind.elector.isLeader).toBe(false);
  behind.proxy.delayMs = 0;

  // 3. Only the candidate an hour behind can reach the API server: it takes over once the
  // Lease has not changed for a lease duration on its own clock (every renewTime is at least an hour ahead of it).
  const partitionedAt = Date.now();
  ahead.proxy.delayMs = exact.proxy.delayMs = 120_000;
  await waitFor('behind to lead again', leads(behind), { timeoutMs: 25_000, intervalMs: 50 });
  const partitionHandover = Date.now() - partitionedAt;
  expect(seen.overlaps).toEqual([]);
  ahead.proxy.delayMs = exact.proxy.delayMs = 0;

  // 4. A graceful stop steps down, then releases the Lease: a standby leads at once.
  const stoppedAt = Date.now();
  await behind.elector.stop();
  await waitFor('a standby to lead after the release', async () => [ahead, exact].some((c) => c.elector.isLeader), { timeoutMs: 10_000, intervalMs: 50 });
  const releaseHandover = Date.now() - stoppedAt;
  sample();

  console.log(
    `leader election with clocks at -1 h, +1 h and 0: ${seen.samples} samples, ${seen.succession.length - 1} fail-overs ` +
      `(${seen.succession.join(' → ')}), ${seen.overlaps.length} overlaps; slow API server hand-over ${(slowHandover / 1000).toFixed(1)} s, ` +
      `partition hand-over ${(partitionHandover / 1000).toFixed(1)} s, release hand-over ${(releaseHandover / 1000).toFixed(1)} s ` +
      `(lease ${timing.leaseDurationMs / 1000} s, renew deadline ${timing.renewDeadlineMs / 1000} s)`,
  );
  expect(seen.overlaps).toEqual([]);
  expect(seen.samples).toBeGreaterThan(300);
  expect(seen.succession.length).toBeGreaterThanOrEqual(4);
  expect(seen.succession[2]).toBe('behind');
  expect(releaseHandover).toBeLessThan(3_000);
}
