// `nls wait-webhooks` (what the chart's install hook runs) against the real API server: while the
// configured webhook cannot be called it waits, naming the API server's answer, and it returns as
// soon as the real webhook server answers; out of time it exits 5; without RBAC it stops at once.
// The configurations are scoped to this file's namespaces (shared control plane).
import * as net from 'node:net';
import * as k8s from '@kubernetes/client-node';
import { waitWebhooks } from '../../src/cli/lifecycle/wait-webhooks';
import { KubeRest } from '../../src/kube/rest';
import { installCRDs, kubeConfig, uniqueName } from '../support/cluster';
import { waitFor } from '../support/processes';
import { type WebhookEnvironment, crdDirectory, impersonating, startWebhookEnvironment, webhookEntries } from '../support/webhook/webhook-env';

const admin = kubeConfig();
let env: WebhookEnvironment;
let deadPort: number;

/** A loopback port nothing listens on (the API server's call is refused, as before kube-proxy routes a Service). */
async function unusedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Points both configurations of the environment at `port` (the server injects its CA into them). */
async function pointWebhooksAt(port: number): Promise<void> {
  const admission = admin.makeApiClient(k8s.AdmissionregistrationV1Api);
  const only = ['PassthroughModel'];
  await admission.deleteValidatingWebhookConfiguration({ name: env.validatingName }).catch(() => undefined);
  await admission.deleteMutatingWebhookConfiguration({ name: env.mutatingName }).catch(() => undefined);
  await admission.createValidatingWebhookConfiguration({ body: { metadata: { name: env.validatingName }, webhooks: webhookEntries('validate', port, env.id, only) as k8s.V1ValidatingWebhook[] } });
  await admission.createMutatingWebhookConfiguration({ body: { metadata: { name: env.mutatingName }, webhooks: webhookEntries('mutate', port, env.id, only) as k8s.V1MutatingWebhook[] } });
}

/** Until the API server has loaded the configurations, a probe may bypass them: wait for the refusal. */
async function untilApiServerCallsDeadPort(): Promise<void> {
  const rest = new KubeRest(admin);
  const probe = { apiVersion: 'llm.nebari.dev/v1alpha1', kind: 'PassthroughModel', metadata: { name: 'p', namespace: env.operatorNamespace }, spec: {} };
  try {
    await waitFor(
      'the API server to call the configured dead webhook',
      async () => (await rest.create(probe, { dryRun: true }).then(() => '', (e: Error) => e.message)).includes('failed calling webhook'),
      { timeoutMs: 30_000, intervalMs: 100 },
    );
  } finally {
    rest.close();
  }
}

beforeAll(async () => {
  await installCRDs([crdDirectory]);
  env = await startWebhookEnvironment({ kubeConfig: admin, id: uniqueName('wh-wait'), register: false });
  deadPort = await unusedPort();
}, 60_000);
afterAll(() => env?.close());

test('waits while the webhook cannot be called and returns once the real server answers', async () => {
  await pointWebhooksAt(deadPort);
  await untilApiServerCallsDeadPort();
  const lines: string[] = [];
  const rest = new KubeRest(admin);
  try {
    const waiting = waitWebhooks(rest, { namespace: env.operatorNamespace, timeoutMs: 60_000, intervalMs: 200 }, (l) => lines.push(l));
    // Let it see the refused call first, then bring the webhook up.
    await waitFor('wait-webhooks to report the refused call', async () => lines.some((l) => l.startsWith('waiting')), { timeoutMs: 30_000, intervalMs: 100 });
    await pointWebhooksAt(env.server.port);
    expect(await waiting).toBe(0);
  } finally {
    rest.close();
  }
  expect(lines[0]).toMatch(/^waiting \(\d+\.\d s\): .*failed calling webhook/);
  expect(lines.at(-1)).toMatch(/^the API server reaches the admission webhooks \(after \d+\.\d s\)$/);
  // The probe went through the real server (and, a dry run, was never stored).
  expect(env.calls).toContain('/mutate-passthroughmodel');
  const stored = await new KubeRest(admin).list('llm.nebari.dev/v1alpha1', 'PassthroughModel', { namespace: env.operatorNamespace });
  expect(stored.items).toEqual([]);
}, 90_000);

test('exits 5 when the webhook stays unreachable, with the last answer', async () => {
  await pointWebhooksAt(deadPort);
  await untilApiServerCallsDeadPort();
  const rest = new KubeRest(admin);
  const lines: string[] = [];
  try {
    expect(await waitWebhooks(rest, { namespace: env.operatorNamespace, timeoutMs: 1500, intervalMs: 300 }, (l) => lines.push(l))).toBe(5);
  } finally {
    rest.close();
  }
  expect(lines.at(-1)).toMatch(/^error: the API server did not reach the admission webhooks within 1\.5 s; last answer: .*failed calling webhook/);
}, 90_000);

test('a caller without create on PassthroughModels stops at once with exit 1, naming the right', async () => {
  const rest = new KubeRest(impersonating(admin, 'nobody-at-all'));
  const lines: string[] = [];
  const started = Date.now();
  try {
    expect(await waitWebhooks(rest, { namespace: env.operatorNamespace, timeoutMs: 60_000, intervalMs: 200 }, (l) => lines.push(l))).toBe(1);
  } finally {
    rest.close();
  }
  expect(Date.now() - started).toBeLessThan(30_000);
  expect(lines.join('\n')).toMatch(/cannot create resource "passthroughmodels".*\n.*needs create on llm\.nebari\.dev passthroughmodels in /);
});
