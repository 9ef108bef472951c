// Webhook certificates against the real API server, which verifies every call with the caBundle
// it read from our configurations: self-managed CA creation and injection, rotation of the
// serving certificate and of the CA under a steady stream of admission requests (zero failures),
// several replicas sharing one Secret, and cert-manager mode serving mounted files.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { type WebhookServer, startWebhookServer } from '../../src/webhook';
import { isIssuedBy, issueCertificateAuthority, issueServingCertificate, splitPemBundle } from '../../src/webhook/certificates';
import { installCRDs, kubeConfig, uniqueName } from '../support/cluster';
import { collectionPath, kubeRequest } from '../support/webhook/kube-raw';
import {
  crdDirectory,
  createNamespace,
  recordingLogger,
  selectorLabel,
  startWebhookEnvironment,
  waitUntil,
  waitUntilApiServerCalls,
  webhookEntries,
} from '../support/webhook/webhook-env';

const admin = kubeConfig();
const core = admin.makeApiClient(k8s.CoreV1Api);
const admission = admin.makeApiClient(k8s.AdmissionregistrationV1Api);

beforeAll(() => installCRDs([crdDirectory]));

async function secretData(namespace: string, name: string): Promise<Record<string, string>> {
  const secret = await core.readNamespacedSecret({ namespace, name });
  return Object.fromEntries(Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
}

async function caBundles(names: string[]): Promise<string[]> {
  const bundles: string[] = [];
  for (const name of names) {
    for (const read of [() => admission.readValidatingWebhookConfiguration({ name }), () => admission.readMutatingWebhookConfiguration({ name })]) {
      const found = await read().catch(() => undefined);
      for (const webhook of found?.webhooks ?? []) bundles.push(Buffer.from(webhook.clientConfig.caBundle ?? '', 'base64').toString('utf8'));
    }
  }
  return bundles;
}

/**
 * Dry-run LLMModel creates through the API server (each one calls our mutating and validating
 * webhooks over TLS) at a fixed concurrency until `stop()`, or by itself after 120 s or 20,000
 * requests; every non-201 is a failure.
 */
function steadyStream(namespace: string, concurrency = 4) {
  let running = true;
  let total = 0;
  const failures: string[] = [];
  const deadline = Date.now() + 120_000;
  const worker = async (w: number) => {
    for (let i = 0; running && Date.now() < deadline && total < 20_000; i++) {
      const response = await kubeRequest(admin, 'POST', `${collectionPath(namespace, 'llmmodels')}?dryRun=All`, {
        apiVersion: 'llm.nebari.dev/v1alpha1',
        kind: 'LLMModel',
        metadata: { name: `stream-${w}-${i}` },
        spec: { model: { name: 'Qwen/Qwen3-0.6B', source: 'huggingface' }, resources: { gpu: { count: 1 } }, access: { public: true } },
      }).catch((error: Error) => ({ status: 0, body: { message: error.message } }));
      total++;
      if (response.status !== 201) failures.push(`${response.status} ${String(response.body.message)}`);
    }
  };
  const workers = Array.from({ length: concurrency }, (_, w) => worker(w));
  return {
    /** Waits until `n` more requests have completed: traffic did flow through this phase. */
    async more(n: number, phase: string) {
      const target = total + n;
      await waitUntil(`${n} admission requests ${phase}`, () => total >= target);
    },
    async stop() {
      running = false;
      await Promise.all(workers);
      return { total, failures };
    },
  };
}

describe('self-managed certificates (one replica)', () => {
  it('creates the Secret, injects the CA, and rotates serving certificate and CA under load with zero failed requests', async () => {
    const id = uniqueName('wh-cert');
    const env = await startWebhookEnvironment({
      kubeConfig: admin,
      id,
      server: { rotationPolicy: { propagationMs: 1500 }, checkIntervalMs: 200 },
    });
    let stream: ReturnType<typeof steadyStream> | undefined;
    try {
      const stored = await secretData(env.operatorNamespace, env.secretName);
      expect(Object.keys(stored).sort()).toEqual(['ca.crt', 'ca.key', 'tls.crt', 'tls.key']);
      expect(splitPemBundle(stored['ca.crt'])).toHaveLength(1);
      expect(env.server.servedCertificate()).toBe(stored['tls.crt']);
      expect(isIssuedBy(stored['tls.crt'], stored['ca.crt'])).toBe(true);
      expect(await caBundles([env.validatingName, env.mutatingName])).toEqual(Array(6).fill(stored['ca.crt']));
      expect(env.server.ready()).toBe(true);

      const port = env.server.port;
      stream = steadyStream(env.operatorNamespace);
      await stream.more(20, 'before the rotation');

      // Serving certificate only: the CA is already trusted, so the swap is immediate.
      await env.server.rotateCertificates();
      const afterServing = await secretData(env.operatorNamespace, env.secretName);
      expect(afterServing['tls.crt']).not.toBe(stored['tls.crt']);
      expect(afterServing['ca.crt']).toBe(stored['ca.crt']);
      await waitUntil('the new serving certificate to be served', () => env.server.servedCertificate() === afterServing['tls.crt']);
      await stream.more(20, 'with the new serving certificate');

      // CA: introduce (bundle holds both), switch serving, retire the old CA.
      await env.server.rotateCertificates({ ca: true });
      const introduced = await secretData(env.operatorNamespace, env.secretName);
      expect(splitPemBundle(introduced['ca.crt'])).toEqual([expect.any(String), stored['ca.crt']]);
      const newCa = splitPemBundle(introduced['ca.crt'])[0];
      await waitUntil(
        'the old CA to be retired',
        async () => {
          const now = await secretData(env.operatorNamespace, env.secretName);
          return now['ca.crt'] === newCa && env.server.servedCertificate() === now['tls.crt'] && isIssuedBy(now['tls.crt'], newCa);
        },
        30_000,
      );
      await waitUntil('every webhook to trust only the new CA', async () => (await caBundles([env.validatingName, env.mutatingName])).every((b) => b === newCa));
      await waitUntil('readiness', () => env.server.ready());
      await stream.more(20, 'with only the new CA trusted');

      const { total, failures } = await stream.stop();
      console.log(`rotation under load: ${total} admission requests through the API server, ${failures.length} failed`);
      expect(failures).toEqual([]);
      expect(total).toBeGreaterThan(50);
      expect(env.server.port).toBe(port);
    } finally {
      await stream?.stop();
      await env.close();
    }
  });
});

describe('self-managed certificates (three replicas, one Secret)', () => {
  it('agree on one certificate when started together and follow a CA rotation started by one of them', async () => {
    const id = uniqueName('wh-repl');
    const namespace = `${id}-system`;
    const secretName = `${id}-webhook-server-cert`;
    const configuration = `${id}-validating`;
    await createNamespace(admin, namespace, { 'nebari.dev/managed': 'true', [selectorLabel]: id });
    const replicas: WebhookServer[] = await Promise.all(
      [0, 1, 2].map(() =>
        startWebhookServer({
          kubeConfig: admin,
          env: { POD_NAMESPACE: namespace, NLS_RELEASE_NAME: id },
          settings: { port: 0, secretName, webhookConfigurations: { validating: [configuration], mutating: [] } },
          host: '127.0.0.1',
          extraIpAddresses: ['127.0.0.1'],
          checkIntervalMs: 200,
          rotationPolicy: { propagationMs: 1500 },
          log: recordingLogger([]),
        }),
      ),
    );
    let stream: ReturnType<typeof steadyStream> | undefined;
    try {
      const stored = await secretData(namespace, secretName);
      expect(replicas.map((r) => r.servedCertificate())).toEqual(Array(3).fill(stored['tls.crt']));

      // Every admission request calls all three replicas, one webhook each.
      const webhooks = replicas.map((replica, index) => ({
        ...webhookEntries('validate', replica.port, id, ['LLMModel'])[0],
        name: `replica-${index}.${id}.test.llm.nebari.dev`,
      }));
      await admission.createValidatingWebhookConfiguration({ body: { metadata: { name: configuration }, webhooks: webhooks as k8s.V1ValidatingWebhook[] } });
      await waitUntil('all replicas ready', () => replicas.every((r) => r.ready()));
      await waitUntilApiServerCalls(admin, namespace);

      stream = steadyStream(namespace);
      await stream.more(30, 'before the rotation');
      await replicas[0].rotateCertificates({ ca: true });
      const newCa = splitPemBundle((await secretData(namespace, secretName))['ca.crt'])[0];
      await waitUntil(
        'every replica to serve a certificate of the new CA, and the old CA to be retired',
        async () => {
          const now = await secretData(namespace, secretName);
          return now['ca.crt'] === newCa && replicas.every((r) => r.servedCertificate() === now['tls.crt']);
        },
        30_000,
      );
      await waitUntil('all replicas ready', () => replicas.every((r) => r.ready()));
      await stream.more(30, 'after the rotation');
      const { total, failures } = await stream.stop();
      console.log(`three-replica CA rotation: ${total} admission requests (each calling 3 replicas), ${failures.length} failed`);
      expect(failures).toEqual([]);
      expect(total).toBeGreaterThan(50);
    } finally {
      await stream?.stop();
      await admission.deleteValidatingWebhookConfiguration({ name: configuration }).catch(() => undefined);
      await Promise.all(replicas.map((r) => r.close()));
    }
  });
});

describe('cert-manager mode', () => {
  it('serves the mounted certificate, is ready only while the injected CA matches it, and reloads renewed files', async () => {
    const id = uniqueName('wh-cm');
    const namespace = `${id}-system`;
    const configuration = `${id}-validating`;
    await createNamespace(admin, namespace, { 'nebari.dev/managed': 'true', [selectorLabel]: id });
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-cm-certs-'));
    const firstCa = issueCertificateAuthority({ commonName: 'cert-manager-ca-1' });
    const secondCa = issueCertificateAuthority({ commonName: 'cert-manager-ca-2' });
    const write = (ca: { certPem: string; keyPem: string }) => {
      const serving = issueServingCertificate({ ca, dnsNames: [`${id}-webhook.${namespace}.svc`], ipAddresses: ['127.0.0.1'] });
      // Written to a new directory and swapped in by rename, as the kubelet does.
      const staging = fs.mkdtempSync(path.join(directory, '..data-'));
      fs.writeFileSync(path.join(staging, 'tls.crt'), serving.certPem);
      fs.writeFileSync(path.join(staging, 'tls.key'), serving.keyPem);
      fs.writeFileSync(path.join(staging, 'ca.crt'), ca.certPem);
      for (const file of ['tls.crt', 'tls.key', 'ca.crt']) fs.renameSync(path.join(staging, file), path.join(directory, file));
      return serving.certPem;
    };
    const firstServing = write(firstCa);
    const server = await startWebhookServer({
      kubeConfig: admin,
      env: { POD_NAMESPACE: namespace, NLS_RELEASE_NAME: id, NLS_CERT_MODE: 'cert-manager', NLS_CERT_DIR: directory },
      settings: { port: 0, webhookConfigurations: { validating: [configuration], mutating: [] } },
      host: '127.0.0.1',
      checkIntervalMs: 200,
      log: recordingLogger([]),
    });
    const setCaBundle = async (pem: string) => {
      const current = await admission.readValidatingWebhookConfiguration({ name: configuration });
      for (const webhook of current.webhooks ?? []) webhook.clientConfig.caBundle = Buffer.from(pem).toString('base64');
      await admission.replaceValidatingWebhookConfiguration({ name: configuration, body: current });
    };
    try {
      expect(server.servedCertificate()).toBe(firstServing);
      // As cert-manager's CA injector would: the configuration carries the CA of the mounted Secret.
      const webhooks = webhookEntries('validate', server.port, id).map((w) => ({ ...w, clientConfig: { ...w.clientConfig, caBundle: Buffer.from(firstCa.certPem).toString('base64') } }));
      await admission.createValidatingWebhookConfiguration({ body: { metadata: { name: configuration }, webhooks: webhooks as k8s.V1ValidatingWebhook[] } });
      await waitUntil('ready with the injected CA', () => server.ready());
      await waitUntilApiServerCalls(admin, namespace);

      // Renewal by a new CA: until the injector catches up, the served certificate is not trusted.
      const secondServing = write(secondCa);
      await waitUntil('the renewed files to be served', () => server.servedCertificate() === secondServing);
      await waitUntil('not ready while caBundle holds the old CA', () => !server.ready());
      expect(server.readinessReason()).toContain('caBundle does not verify the served certificate');
      await setCaBundle(secondCa.certPem);
      await waitUntil('ready again once the new CA is injected', () => server.ready());
      await waitUntilApiServerCalls(admin, namespace);
      expect(await caBundles([configuration])).toEqual(Array(3).fill(secondCa.certPem));
      // cert-manager owns caBundle in this mode: the server never wrote it.
      const response = await kubeRequest(admin, 'POST', collectionPath(namespace, 'llmmodels'), {
        apiVersion: 'llm.nebari.dev/v1alpha1',
        kind: 'LLMModel',
        metadata: { name: 'served-by-cert-manager-cert' },
        spec: { model: { name: 'm', source: 'huggingface' }, resources: { gpu: { count: 0 } }, access: { public: true } },
      });
      expect(response).toMatchObject({ status: 201 });
      await expect(server.rotateCertificates()).rejects.toThrow('certificates are managed by cert-manager');
    } finally {
      await admission.deleteValidatingWebhookConfiguration({ name: configuration }).catch(() => undefined);
      await server.close();
      fs.rmSync(directory, { recursive: true, force: true });
    }
  });
});
