// Two operator replicas with Lease leader election: exactly one reconciles (the other sends no
// write at all), and killing the leader hands over within the lease duration.
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
  expect(handover).toBeLessThan(6_000 + 3_000);
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
