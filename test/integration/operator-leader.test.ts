// Two operator replicas with Lease leader election: exactly one reconciles (the other sends no
// write at all), and killing the leader hands over within the lease duration. Losing the Lease
// stops reconciling but not the process: its webhooks keep serving and it competes again.
import { applyObject, createNamespace, getObject, kubeConfig, kubeconfigPath, uniqueName } from '../support/cluster';
import { waitFor } from '../support/processes';
import { KubeRest } from '../../src/kube/rest';
import { OperatorProcess, installGatewayCRDs, installOwnCRDs, isReadyAtGeneration, passthroughModel, providerCredential, startOperator } from './operator-support';

const ns = uniqueName('op-leader');
const lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'nls-leader-test-operator-leader', namespace: ns } };
const timing = { NLS_LEASE_DURATION_SECONDS: '6', NLS_RENEW_DEADLINE_SECONDS: '4', NLS_RETRY_PERIOD_SECONDS: '1' };
let client: KubeRest;
const replicas: OperatorProcess[] = [];

const model = async (name: string) => getObject({ apiVersion: 'llm.nebari.dev/v1alpha1', kind: 'PassthroughModel', metadata: { name, namespace: ns } });
/** Non-GET API requests a replica sent (Lease renewals are PUTs, so they are left out). */
function writes(metrics: string): number {
  return [...metrics.matchAll(/nls_api_requests_total\{code="\d+",method="(PATCH|POST|DELETE)"\} (\d+)/g)].reduce((sum, m) => sum + Number(m[2]), 0);
}

beforeAll(async () => {
  await installOwnCRDs();
  await installGatewayCRDs();
  await createNamespace(ns);
  await applyObject(providerCredential(ns));
  client = new KubeRest(kubeConfig());
});

afterAll(async () => {
  for (const r of replicas) if (r.child.exitCode === null) await r.kill();
  client?.close();
});

it('lets only the leader write, and fails over when the leader is killed', async () => {
  const start = (name: string) => {
    const r = startOperator({ kubeconfigPath: kubeconfigPath(), namespace: ns, name, releaseName: 'nls-leader-test', leaderElection: true, env: timing });
    replicas.push(r);
    return r;
  };
  const a = start('replica-a');
  await a.waitForLine(/became leader/);
  const b = start('replica-b');
  await b.waitForLine(/serving health and metrics/);
  expect((await getObject(lease))?.spec.holderIdentity).toBe('replica-a');

  for (let i = 0; i < 5; i++) await applyObject(passthroughModel(ns, `lead-${i}`));
  for (let i = 0; i < 5; i++) await waitFor(`lead-${i} Ready`, async () => isReadyAtGeneration(await model(`lead-${i}`)));
  expect(writes(await a.metrics())).toBeGreaterThan(0);
  expect(writes(await b.metrics())).toBe(0);
  expect(await b.metrics()).toContain('nls_leader 0');
  expect(b.lines.some((l) => l.includes('became leader'))).toBe(false);
  // The standby is still ready (it serves webhooks), and healthy.
  expect((await fetch(`http://127.0.0.1:${b.healthPort}/readyz`)).status).toBe(200);

  const killedAt = Date.now();
  await a.kill();
  await b.waitForLine(/became leader/, 30_000);
  const handover = Date.now() - killedAt;
  // The standby counts the lease from when it saw the last renewal (up to one jittered retry after
  // it was written) and notices expiry at its next retry: at most 6 + 2 × 1.2 s, plus slack.
  expect(handover).toBeLessThan(6_000 + 2 * 1_200 + 1_500);
  expect((await getObject(lease))?.spec.holderIdentity).toBe('replica-b');
  await applyObject(passthroughModel(ns, 'after-failover'));
  await waitFor('after-failover Ready', async () => isReadyAtGeneration(await model('after-failover')));
  console.log(`leader fail-over after SIGKILL took ${(handover / 1000).toFixed(1)} s (lease 6 s)`);

  // A graceful stop releases the Lease, so a new standby takes over at once.
  const c = start('replica-c');
  await c.waitForLine(/serving health and metrics/);
  const stoppedAt = Date.now();
  expect(await b.stop()).toBe(0);
  await c.waitForLine(/became leader/, 30_000);
  expect(Date.now() - stoppedAt).toBeLessThan(4_000);
});

it('a replica that loses the Lease keeps serving webhooks, stops reconciling and leads again later; standbys are ready', async () => {
  const leaseName = 'nls-lease-loss-operator-leader';
  const start = (name: string) => {
    const r = startOperator({
      kubeconfigPath: kubeconfigPath(),
      namespace: ns,
      name,
      releaseName: 'nls-lease-loss',
      leaderElection: true,
      env: { ...timing, NLS_WEBHOOKS: 'true', NLS_WEBHOOK_PORT: '0' },
    });
    replicas.push(r);
    return r;
  };
  const ready = async (r: OperatorProcess) => (await fetch(`http://127.0.0.1:${r.healthPort}/readyz`)).status === 200;
  const a = start('loss-a');
  await a.waitForLine(/became leader/);
  const b = start('loss-b');
  await b.waitForLine(/webhook server listening/);
  // Readiness is about serving webhooks: the standby is ready too.
  await waitFor('both replicas ready', async () => (await ready(a)) && (await ready(b)));

  // Someone else takes the Lease (as after a network partition): a must step down.
  const leaseRef = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: leaseName, namespace: ns } };
  // Retried: the leader's own renewals make an update conflict now and then.
  await waitFor('the intruder to take the Lease', async () => {
    const current = await getObject(leaseRef);
    await client.request('PUT', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/${leaseName}`, {
      body: { ...current, spec: { ...current.spec, holderIdentity: 'intruder', renewTime: new Date().toISOString().replace('Z', '000Z'), leaseDurationSeconds: 6 } },
    });
    return true;
  });
  await a.waitForLine(/lost the leader lease/, 15_000);
  expect(await a.metrics()).toContain('nls_leader 0');
  // Still alive and still serving webhooks while not leading.
  expect(a.child.exitCode).toBeNull();
  expect(await ready(a)).toBe(true);

  // The intruder never renews: after its lease expires one of the two leads again and reconciles.
  await waitFor('a replica to lead again', async () => ['loss-a', 'loss-b'].includes((await getObject(leaseRef))?.spec.holderIdentity), { timeoutMs: 30_000 });
  await applyObject(passthroughModel(ns, 'after-lease-loss'));
  await waitFor('after-lease-loss Ready', async () => isReadyAtGeneration(await model('after-lease-loss')));
  expect(a.child.exitCode).toBeNull();
  expect(await ready(a)).toBe(true);
});
