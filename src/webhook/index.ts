// The webhook server as the operator starts it: one call that reads the environment contract,
// obtains a serving certificate (self-managed or mounted from cert-manager), listens, and keeps
// certificates, CA injection and readiness up to date until closed.
import { CONVERSION_WEBHOOK_PATH } from '../api/crd';
import type { KubeConnection } from '../kube/connection';
import { admissionRoutes } from './admission';
import { combinedConfigurations, kubernetesConversionCrds } from './conversion-crds';
import { agentDeploymentAdmission } from './agentdeployment';
import type { RotationPolicy } from './certificate-rotation';
import { serviceDnsNames } from './certificates';
import { llmModelAdmission } from './llmmodel';
import { KubeRest } from '../kube/rest';
import { type Logger, jsonLogger } from './log';
import { type ClusterLookups, kubernetesLookups } from './lookups';
import { type ModelCache, startModelCache } from './model-cache';
import { MountedCertificates, readMountedCa } from './mounted-certificates';
import { passthroughModelAdmission } from './passthroughmodel';
import { ReadinessGate } from './readiness';
import { SelfManagedCertificates } from './self-managed-certificates';
import { type AdmissionServer, type AdmissionServerOptions, type ServingCertificate, listenAdmissionServer } from './server';
import { type WebhookSettings, webhookSettingsFromEnv } from './settings';
import { kubernetesWebhookConfigurations } from './webhook-configurations';

export { webhookPath } from './admission';
export type { WebhookSettings } from './settings';

/** Every kind this server admits, in path order. */
export const admittedKinds = [llmModelAdmission, passthroughModelAdmission, agentDeploymentAdmission] as const;

export interface WebhookServerOptions {
  /** Credentials for lookups, the Secret and the webhook configurations. */
  readonly kubeConfig: KubeConnection;
  /** The environment contract (POD_NAMESPACE, NLS_*). @default process.env */
  readonly env?: NodeJS.ProcessEnv;
  /** Overrides of what the environment says (tests use port 0 and loopback). */
  readonly settings?: Partial<WebhookSettings>;
  /** @default '0.0.0.0' */
  readonly host?: string;
  /** Extra IP SANs of the self-managed serving certificate (tests call https://127.0.0.1). */
  readonly extraIpAddresses?: readonly string[];
  /** Rotation timing of self-managed certificates. */
  readonly rotationPolicy?: Partial<RotationPolicy>;
  /** How often certificates, CA injection and readiness are re-checked. @default 10 s (5 s for mounted files) */
  readonly checkIntervalMs?: number;
  /** The operator's logger. @default JSON lines on stderr at NLS_LOG_LEVEL */
  readonly log?: Logger;
  /** Cluster reads of the rules. @default the API server through `kubeConfig`, models from watches (model-cache.ts) */
  readonly lookups?: ClusterLookups;
  /** Tests: our CRDs call this URL (https://127.0.0.1:<port>/convert) instead of the webhook Service. */
  readonly conversionUrl?: string;
  /** Told how long each ConversionReview took (tests record latency with it). */
  readonly onConversion?: (durationMs: number, objects: number) => void;
  /** Told about each answered admission review (the operator's metrics). */
  readonly onAdmission?: AdmissionServerOptions['onAdmission'];
}

export interface WebhookServer {
  readonly port: number;
  /** True only while the served certificate is trusted by every webhook configuration of ours. */
  ready(): boolean;
  /** Why `ready()` says what it says. */
  readinessReason(): string;
  /** The PEM certificate new connections get. */
  servedCertificate(): string;
  /** Self-managed mode: rotate the serving certificate now, or start a CA rotation. */
  rotateCertificates(what?: { ca?: boolean }): Promise<void>;
  close(): Promise<void>;
}

export async function startWebhookServer(options: WebhookServerOptions): Promise<WebhookServer> {
  const settings: WebhookSettings = { ...webhookSettingsFromEnv(options.env ?? process.env), ...options.settings };
  const log = options.log ?? jsonLogger(settings.logLevel);
  const readiness = new ReadinessGate();
  // One keep-alive pool for every lookup: admission must answer within the API server's timeout.
  const rest = new KubeRest(options.kubeConfig);
  const admissionConfigurations = kubernetesWebhookConfigurations(rest, settings.webhookConfigurations);
  // Our CRDs convert through this server: the operator points their spec.conversion at its own
  // Service with its CA (both certificate modes), and readiness waits for it like for the
  // admission configurations. Until the pod is ready the fail-closed admission webhooks refuse
  // every write of our kinds, so nothing is stored while conversion is not in place.
  const conversionCrds = kubernetesConversionCrds(
    rest,
    settings.conversionCrds,
    options.conversionUrl ? { url: options.conversionUrl } : { name: settings.serviceName, namespace: settings.namespace },
  );
  const configurations = combinedConfigurations(admissionConfigurations, conversionCrds);

  // The listener needs a certificate to start; later ones are swapped in through `serve`.
  const current: { server?: AdmissionServer; first?: ServingCertificate } = {};
  const serve = (certificate: ServingCertificate) => {
    if (current.server) current.server.setCertificate(certificate);
    else current.first = certificate;
  };

  let stopCertificates: () => void;
  let rotate: (what: { ca?: boolean }) => Promise<void>;
  let trustTimer: NodeJS.Timeout | undefined;
  if (settings.certMode === 'self-managed') {
    const certificates = new SelfManagedCertificates({
      rest,
      namespace: settings.namespace,
      secretName: settings.secretName,
      caCommonName: `${settings.serviceName}-ca`,
      names: { dnsNames: serviceDnsNames(settings.serviceName, settings.namespace), ipAddresses: options.extraIpAddresses ?? [] },
      configurations,
      readiness,
      serve,
      policy: options.rotationPolicy,
      intervalMs: options.checkIntervalMs,
      log,
    });
    await certificates.start();
    stopCertificates = () => certificates.stop();
    rotate = (what) => certificates.rotate(what);
  } else {
    const mounted = new MountedCertificates({ directory: settings.certDir, serve, intervalMs: options.checkIntervalMs, log });
    await mounted.start();
    // cert-manager's CA injector owns the admission configurations' caBundle; the CRDs' conversion
    // block is ours in this mode too, with the CA cert-manager mounts as ca.crt.
    const checkTrust = async () => {
      try {
        const ca = await readMountedCa(settings.certDir);
        if (ca) await conversionCrds.inject(ca);
        else if (settings.conversionCrds.length > 0) log.warn('no ca.crt in the mounted certificate Secret; the CRDs cannot trust the conversion webhook', { directory: settings.certDir });
        readiness.observe(await configurations.read(), mounted.servedCertificate());
      } catch (error) {
        log.warn('reading webhook configurations for readiness failed', { error: String(error) });
      }
    };
    await checkTrust();
    let watching = true;
    const scheduleTrust = () => {
      if (!watching) return;
      trustTimer = setTimeout(() => void checkTrust().finally(scheduleTrust), options.checkIntervalMs ?? 5000);
      trustTimer.unref();
    };
    scheduleTrust();
    stopCertificates = () => {
      watching = false;
      mounted.stop();
      if (trustTimer) clearTimeout(trustTimer);
      trustTimer = undefined;
    };
    rotate = async () => {
      throw new Error('certificates are managed by cert-manager (NLS_CERT_MODE=cert-manager); renew the Certificate instead');
    };
  }

  if (!current.first) throw new Error('no serving certificate was obtained');
  // Given lookups (tests, offline) are used as they are; otherwise models come from watches of the
  // operator namespace, and everything else (and every refusal) from the API server.
  const liveLookups = options.lookups ?? kubernetesLookups(rest);
  const modelCache: ModelCache | undefined = options.lookups ? undefined : startModelCache(rest, { namespace: settings.namespace, live: liveLookups, log });
  const routes = admissionRoutes(admittedKinds, {
    operatorNamespace: settings.namespace,
    agentNamespaces: settings.agentNamespaces,
    lookups: modelCache?.lookups ?? liveLookups,
    liveLookups,
    admitted: modelCache?.admitted,
    allowedImages: settings.allowedImages,
  });
  let listening: AdmissionServer;
  try {
    listening = await listenAdmissionServer({
      routes,
      conversionPath: CONVERSION_WEBHOOK_PATH,
      onConversion: options.onConversion,
      onAdmission: options.onAdmission,
      certificate: current.first,
      host: options.host,
      port: settings.port,
      ...(settings.clientCa ? { clientCa: settings.clientCa } : {}),
      log,
    });
  } catch (error) {
    stopCertificates();
    await modelCache?.stop();
    rest.close();
    throw error;
  }
  current.server = listening;
  log.info('webhook server listening', { port: listening.port, certMode: settings.certMode, paths: [...routes.keys(), CONVERSION_WEBHOOK_PATH] });

  return {
    port: listening.port,
    ready: () => readiness.ready(),
    readinessReason: () => readiness.reason(),
    servedCertificate: () => listening.servedCertificate(),
    rotateCertificates: (what = {}) => rotate(what),
    async close() {
      readiness.fail('shutting down');
      stopCertificates();
      await listening.close();
      await modelCache?.stop();
      rest.close();
    },
  };
}
