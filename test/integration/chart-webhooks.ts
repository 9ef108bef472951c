// The chart's own admission webhooks in front of an operator process on a test control plane, so
// objects are stored exactly as a user's are: the chart's ValidatingWebhookConfiguration and
// MutatingWebhookConfiguration (rules, match policy, failure policy as rendered), each webhook
// calling the operator's webhook server by URL on 127.0.0.1 instead of through its Service (a test
// control plane has no Service network). The operator runs in the chart's cert-manager mode: the
// test plays cert-manager, issuing the serving certificate into the directory the operator reads
// and putting its CA into the configurations, as cert-manager's CA injector does.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { admit } from '../../src/admission';
import { plainObjects } from '../../src/chart/render';
import { defaultValues } from '../../src/chart/values-schema';
import { KubeObject, KubeRest } from '../../src/kube/rest';
import { issueCertificateAuthority, issueServingCertificate } from '../../src/webhook/certificates';
import { waitUntilApiServerCalls } from '../support/webhook/webhook-env';

/** The chart's Deployment environment that names the webhook objects (configurations, Secret, Service). */
const WEBHOOK_ENV = ['NLS_RELEASE_NAME', 'NLS_WEBHOOK_SECRET', 'NLS_WEBHOOK_SERVICE', 'NLS_VALIDATING_WEBHOOK_CONFIGURATIONS', 'NLS_MUTATING_WEBHOOK_CONFIGURATIONS'];

type WebhookConfiguration = KubeObject & { webhooks: Array<{ clientConfig: { service?: { path?: string }; url?: string; caBundle?: string } }> };

export interface ChartWebhooks {
  /** Environment for startOperator: webhooks on, on a free port, cert-manager mode with the issued files. */
  readonly operatorEnv: Record<string, string>;
  /** Registers the chart's configurations calling `https://127.0.0.1:<port>`; resolves once the API server calls them. */
  register(port: number): Promise<void>;
  close(): Promise<void>;
}

/** The chart (default values) of `releaseName` in `namespace`: its webhook configurations and the operator's settings for them. */
export function chartWebhooks(kubeConfig: k8s.KubeConfig, releaseName: string, namespace: string): ChartWebhooks {
  const chart = plainObjects(defaultValues(), { releaseName, namespace }) as KubeObject[];
  const deployment = chart.find((o) => o.kind === 'Deployment') as KubeObject & { spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } } };
  const chartEnv = Object.fromEntries(deployment.spec.template.spec.containers[0].env.filter((e) => WEBHOOK_ENV.includes(e.name) && e.value !== undefined).map((e) => [e.name, e.value!]));
  const configurations = chart.filter((o) => o.kind === 'ValidatingWebhookConfiguration' || o.kind === 'MutatingWebhookConfiguration') as WebhookConfiguration[];

  const certDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-chart-webhooks-'));
  const ca = issueCertificateAuthority({ commonName: 'nls-test-cert-manager-ca' });
  const serving = issueServingCertificate({ ca, dnsNames: [], ipAddresses: ['127.0.0.1'] });
  fs.writeFileSync(path.join(certDir, 'tls.crt'), serving.certPem);
  fs.writeFileSync(path.join(certDir, 'tls.key'), serving.keyPem);
  fs.writeFileSync(path.join(certDir, 'ca.crt'), ca.certPem);
  const client = new KubeRest(kubeConfig);

  return {
    operatorEnv: {
      ...chartEnv,
      NLS_WEBHOOKS: 'true',
      NLS_WEBHOOK_PORT: '0',
      NLS_CERT_MODE: 'cert-manager',
      NLS_CERT_DIR: certDir,
      // The control plane converts through the test wiring (conversion-wiring.ts).
      NLS_CONVERSION_CRDS: '',
    },
    async register(port: number) {
      for (const configuration of configurations) {
        const byUrl = structuredClone(configuration);
        for (const webhook of byUrl.webhooks) {
          webhook.clientConfig = { url: `https://127.0.0.1:${port}${webhook.clientConfig.service?.path ?? ''}`, caBundle: Buffer.from(ca.certPem).toString('base64') };
        }
        await client.create(byUrl);
      }
      await waitUntilApiServerCalls(kubeConfig, namespace);
    },
    async close() {
      for (const configuration of configurations) await client.delete(configuration).catch(() => undefined);
      client.close();
      fs.rmSync(certDir, { recursive: true, force: true });
    },
  };
}

/** The port of the operator's webhook server, from its "webhook server listening" log line. */
export function webhookPort(line: string): number {
  const port = /"port":(\d+)/.exec(line)?.[1];
  if (!port) throw new Error(`no port in the operator's log line: ${line}`);
  return Number(port);
}

/**
 * `model` as the API server stores it through the chart's webhooks (CRD defaults, the mutating
 * webhook's defaults), computed by the offline admission, which admission-differential.test.ts
 * keeps equal to a real API server with the real webhook server; uid and namespace kept.
 */
export async function asStored<T extends { metadata: { namespace?: string; uid?: string } }>(model: T): Promise<T> {
  const namespace = model.metadata.namespace ?? 'default';
  const result = await admit(model as unknown as Record<string, unknown>, { operatorNamespace: namespace });
  // The provider's refusals come after the API server stored the object: the translation under test reports them.
  const refused = result.problems.filter((p) => p.source !== 'provider');
  if (refused.length > 0) throw new Error(`the API server would refuse the test's model: ${refused.map((p) => p.message).join('; ')}`);
  return { ...(result.object as unknown as T), metadata: { ...(result.object.metadata as T['metadata']), uid: model.metadata.uid } };
}
