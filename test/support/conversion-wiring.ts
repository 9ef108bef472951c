// Conversion for a test control plane: our CRDs store v1beta1 and serve v1alpha1 through the
// conversion webhook, which in a cluster the operator serves and wires (src/webhook/conversion-crds.ts).
// Tests that create our objects without running the operator's webhook server still need it, so
// the control plane runs the operator's own pieces: the webhook server's /convert (the real
// conversion code, on 127.0.0.1) and the operator's injection of spec.conversion, triggered by a
// watch on CRDs so a CRD installed by helm, `nls` or a test is wired within milliseconds.
// `installCRDs` (cluster.ts) waits for it, so no test writes before conversion is in place.
import type { KubeConnection } from '../../src/kube/connection';
import { KubeRest } from '../../src/kube/rest';
import { CRD_NAMES } from '../../src/api';
import { issueCertificateAuthority, issueServingCertificate } from '../../src/webhook/certificates';
import { convertsThrough, kubernetesConversionCrds } from '../../src/webhook/conversion-crds';
import { silentLogger } from '../../src/webhook/log';
import { listenAdmissionServer } from '../../src/webhook/server';

export interface ConversionWiring {
  /** https://127.0.0.1:<port>/convert */
  readonly url: string;
  /** The CA the CRDs get as caBundle (PEM). */
  readonly caPem: string;
  /** Resolves once every one of our CRDs that exists converts through `url`. */
  wired(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

const crdsPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

export async function startConversionWiring(kubeConfig: KubeConnection): Promise<ConversionWiring> {
  const ca = issueCertificateAuthority({ commonName: 'nls-test-conversion-ca' });
  const serving = issueServingCertificate({ ca, dnsNames: [], ipAddresses: ['127.0.0.1'] });
  const server = await listenAdmissionServer({
    routes: new Map(),
    conversionPath: '/convert',
    certificate: { cert: serving.certPem, key: serving.keyPem },
    host: '127.0.0.1',
    port: 0,
    log: silentLogger,
  });
  const url = `https://127.0.0.1:${server.port}/convert`;
  const rest = new KubeRest(kubeConfig);
  const crds = kubernetesConversionCrds(rest, CRD_NAMES, { url });
  let stopped = false;
  let lastError: unknown;
  let lastChange = 0;

  const wire = async () => {
    try {
      if ((await crds.inject(ca.certPem)).length > 0) lastChange = Date.now();
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
  };

  // List, wire, then watch from the list's resourceVersion; any event on our CRDs wires again.
  const loop = async () => {
    while (!stopped) {
      try {
        const list = await rest.request<{ metadata: { resourceVersion: string } }>('GET', crdsPath);
        await wire();
        await new Promise<void>((resolve) => {
          void rest
            .open('GET', crdsPath, { query: { watch: 1, resourceVersion: list.metadata.resourceVersion, allowWatchBookmarks: false, timeoutSeconds: 300 } }, (res) => {
              let buffered = '';
              res.on('data', (chunk: Buffer) => {
                buffered += chunk.toString('utf8');
                const lines = buffered.split('\n');
                buffered = lines.pop() ?? '';
                if (lines.some((line) => CRD_NAMES.some((name) => line.includes(`"name":"${name}"`)))) void wire();
              });
              // However the stream ends (server closed it, restart, stop()), list and watch again.
              res.on('close', () => resolve());
              res.on('error', () => resolve());
            })
            .then((req) => {
              req.on('error', () => resolve());
              req.on('close', () => resolve());
              stopWatch = () => {
                req.destroy();
                resolve();
              };
              if (stopped) stopWatch();
            })
            .catch(() => resolve());
        });
      } catch {
        // The API server restarts in some tests: try again shortly.
      }
      if (!stopped) await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };
  let stopWatch = () => {};
  const running = loop();

  return {
    url,
    caPem: ca.certPem,
    async wired(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = await Promise.all(CRD_NAMES.map((name) => rest.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name } })));
        // The API server picks up a changed CRD asynchronously (its handler reloads the conversion
        // settings from a watch): give it a moment after our last change.
        if (found.every((crd) => !crd || convertsThrough(crd, { url })) && Date.now() - lastChange > 1000) return;
        if (Date.now() > deadline) throw new Error(`our CRDs do not convert through ${url} after ${timeoutMs} ms${lastError ? `: ${String(lastError)}` : ''}`);
        await wire();
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    async stop() {
      stopped = true;
      stopWatch();
      await running;
      await server.close();
      rest.close();
    },
  };
}
