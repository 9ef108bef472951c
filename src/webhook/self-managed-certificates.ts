// Self-managed mode: the operator is its own CA. One Secret holds CA, serving certificate and the
// rotation timestamps; every replica runs the same loop (read Secret -> next rotation step ->
// write with the read resourceVersion -> serve what the Secret holds -> inject the CA into our
// webhook configurations), so replicas agree without a leader: a replica that loses a write
// race gets 409, re-reads, and serves the winner's certificate. Nothing is ever served that
// is not stored in the Secret.
import * as k8s from '@kubernetes/client-node';
import {
  type RotationPolicy,
  type RotationStep,
  type ServingNames,
  type StoredCertificates,
  applyRotationStep,
  defaultRotationPolicy,
  nextRotationStep,
} from './certificate-rotation';
import { isIssuedBy, issueCertificateAuthority, issueServingCertificate, splitPemBundle } from './certificates';
import { KubeApiError, type KubeObject, type KubeRest, objectRef } from '../kube/rest';
import { type Logger, silentLogger } from './log';
import { describeApiError } from './lookups';
import type { ReadinessGate } from './readiness';
import type { ServingCertificate } from './server';
import type { WebhookConfigurations } from './webhook-configurations';

/** Annotations on the Secret recording when its parts last changed (the rotation clock). */
export const caBundleChangedAnnotation = 'llm.nebari.dev/ca-bundle-changed-at';
export const servingChangedAnnotation = 'llm.nebari.dev/serving-cert-changed-at';

export interface SelfManagedCertificatesOptions {
  readonly rest: KubeRest;
  readonly namespace: string;
  /** `<release>-webhook-server-cert`. */
  readonly secretName: string;
  /** The CA's common name, e.g. `<release>-webhook-ca`. */
  readonly caCommonName: string;
  readonly names: ServingNames;
  readonly configurations: WebhookConfigurations;
  readonly readiness: ReadinessGate;
  /** Called with every certificate the Secret starts holding; the server swaps it in. */
  readonly serve: (certificate: ServingCertificate) => void;
  readonly policy?: Partial<RotationPolicy>;
  /** How often each replica re-reads the Secret and the configurations. @default 10 s */
  readonly intervalMs?: number;
  readonly log?: Logger;
}

function decode(data: Record<string, string> | undefined, key: string): string {
  const value = data?.[key];
  return value ? Buffer.from(value, 'base64').toString('utf8') : '';
}

function date(value: string | undefined): Date | undefined {
  const parsed = value ? new Date(value) : undefined;
  return parsed && !Number.isNaN(parsed.getTime()) ? parsed : undefined;
}

/** Reads the certificates out of a Secret; undefined when it holds none. */
export function storedCertificatesFromSecret(secret: k8s.V1Secret | undefined): StoredCertificates | undefined {
  if (!secret) return undefined;
  const caBundle = decode(secret.data, 'ca.crt');
  if (!caBundle) return undefined;
  return {
    caBundle,
    caKey: decode(secret.data, 'ca.key'),
    tlsCrt: decode(secret.data, 'tls.crt'),
    tlsKey: decode(secret.data, 'tls.key'),
    caBundleChangedAt: date(secret.metadata?.annotations?.[caBundleChangedAnnotation]),
    servingChangedAt: date(secret.metadata?.annotations?.[servingChangedAnnotation]),
  };
}

/** Writes certificates into a Secret object, keeping whatever else it carries. */
export function secretWithCertificates(base: k8s.V1Secret, stored: StoredCertificates): k8s.V1Secret {
  const encode = (text: string) => Buffer.from(text).toString('base64');
  return {
    ...base,
    metadata: {
      ...base.metadata,
      annotations: {
        ...base.metadata?.annotations,
        ...(stored.caBundleChangedAt ? { [caBundleChangedAnnotation]: stored.caBundleChangedAt.toISOString() } : {}),
        ...(stored.servingChangedAt ? { [servingChangedAnnotation]: stored.servingChangedAt.toISOString() } : {}),
      },
    },
    data: {
      ...base.data,
      'ca.crt': encode(stored.caBundle),
      'ca.key': encode(stored.caKey),
      'tls.crt': encode(stored.tlsCrt),
      'tls.key': encode(stored.tlsKey),
    },
  };
}

/** The CA and serving-certificate loop of one replica. */
export class SelfManagedCertificates {
  private readonly policy: RotationPolicy;
  private readonly log: Logger;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private served = '';
  private forceCa = false;
  private forceServing = false;
  private stopped = false;

  constructor(private readonly options: SelfManagedCertificatesOptions) {
    this.policy = { ...defaultRotationPolicy, ...options.policy };
    this.log = options.log ?? silentLogger;
  }

  /** Runs rounds until the Secret holds a usable certificate, serves it, then keeps polling. */
  async start(): Promise<void> {
    // Retries until it works (e.g. RBAC fixed, API server back): the pod stays unready meanwhile.
    for (let attempt = 0; ; attempt++) {
      if (this.stopped) throw new Error('stopped before a certificate was available');
      try {
        await this.reconcile();
      } catch (error) {
        this.log.warn('webhook certificates not ready yet', { error: String(error), attempt });
      }
      if (this.served) break;
      await new Promise((resolve) => setTimeout(resolve, Math.min(200 * 2 ** attempt, 5000)));
    }
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  /** Starts a rotation now: of the CA (three steps over `propagationMs` each) or of the serving certificate. */
  async rotate(what: { ca?: boolean } = {}): Promise<void> {
    if (what.ca) this.forceCa = true;
    else this.forceServing = true;
    await this.reconcile();
  }

  /** One round, serialised: concurrent callers wait for the round in flight and run another. */
  reconcile(): Promise<void> {
    const previous = this.running ?? Promise.resolve();
    const round = previous.catch(() => undefined).then(() => this.round());
    this.running = round;
    return round;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.reconcile()
        .catch((error: unknown) => this.log.warn('webhook certificate round failed', { error: String(error) }))
        .finally(() => this.schedule());
    }, this.options.intervalMs ?? 10_000);
    this.timer.unref();
  }

  private async readSecret(): Promise<k8s.V1Secret | undefined> {
    try {
      return (await this.options.rest.get(objectRef('v1', 'Secret', this.options.secretName, this.options.namespace))) as k8s.V1Secret | undefined;
    } catch (error) {
      throw new Error(`reading Secret ${this.options.namespace}/${this.options.secretName}: ${describeApiError(error)}`);
    }
  }

  // Returns false when another writer got there first (the round re-reads and tries again).
  private async writeSecret(current: k8s.V1Secret | undefined, stored: StoredCertificates): Promise<boolean> {
    const { namespace, secretName } = this.options;
    try {
      if (current) {
        // `current` carries the resourceVersion read, so a concurrent writer yields 409.
        await this.options.rest.replace(secretWithCertificates(current, stored) as KubeObject);
      } else {
        const fresh: k8s.V1Secret = {
          apiVersion: 'v1',
          kind: 'Secret',
          type: 'kubernetes.io/tls',
          metadata: { name: secretName, namespace, labels: { 'app.kubernetes.io/name': 'nebari-llm-serving', 'app.kubernetes.io/component': 'webhook' } },
        };
        await this.options.rest.create(secretWithCertificates(fresh, stored) as KubeObject);
      }
      return true;
    } catch (error) {
      if (error instanceof KubeApiError && error.code === 409) return false;
      throw new Error(`writing Secret ${namespace}/${secretName}: ${describeApiError(error)}`);
    }
  }

  private async round(): Promise<void> {
    const { names, caCommonName, configurations } = this.options;
    const issuer = {
      issueCa: () => issueCertificateAuthority({ commonName: caCommonName, validityMs: this.policy.caValidityMs }),
      issueServing: (ca: { certPem: string; keyPem: string }) =>
        issueServingCertificate({ ca, dnsNames: names.dnsNames, ipAddresses: names.ipAddresses, validityMs: this.policy.servingValidityMs }),
    };
    // A few steps may follow one another at once (create, or a forced serving rotation).
    for (let steps = 0; steps < 5; steps++) {
      const secret = await this.readSecret();
      const stored = storedCertificatesFromSecret(secret);
      const trust = await configurations.read();
      const signingCa = stored ? splitPemBundle(stored.caBundle)[0] : undefined;
      const signingCaInjected =
        signingCa !== undefined && trust.every((c) => c.webhooks.every((w) => splitPemBundle(w.caBundle).includes(signingCa)));
      const step: RotationStep = nextRotationStep({
        stored,
        now: new Date(),
        names,
        policy: this.policy,
        signingCaInjected,
        forceCa: this.forceCa,
        forceServing: this.forceServing,
      });

      if (step.action === 'none') {
        if (!stored) return;
        this.load(stored);
        const injected = await configurations.inject(stored.caBundle);
        if (injected.length > 0) this.log.info('injected webhook CA bundle', { configurations: injected });
        this.options.readiness.observe(injected.length > 0 ? await configurations.read() : trust, this.served);
        return;
      }
      const next = applyRotationStep(stored, step, issuer, new Date());
      if (await this.writeSecret(secret, next)) {
        this.log.info('webhook certificates changed', { step: step.action, reason: step.reason });
        if (step.action === 'introduce-ca') this.forceCa = false;
        if (step.action === 'issue-serving') this.forceServing = false;
      }
    }
  }

  private load(stored: StoredCertificates): void {
    if (stored.tlsCrt === this.served) return;
    // Never serve a certificate no bundle CA signed; the next round re-issues it instead.
    if (!splitPemBundle(stored.caBundle).some((ca) => isIssuedBy(stored.tlsCrt, ca))) return;
    this.options.serve({ cert: stored.tlsCrt, key: stored.tlsKey });
    this.served = stored.tlsCrt;
  }

  /** The PEM serving certificate currently served ('' before the first). */
  servedCertificate(): string {
    return this.served;
  }
}
