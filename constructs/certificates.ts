// cert-manager mode: a self-signed Issuer (unless an existing issuer is named) and the webhook's
// serving Certificate; the webhook configurations carry the CA-injection annotation.
import { Construct } from 'constructs';
import {
  Certificate,
  CertificateSpecPrivateKeyAlgorithm,
  CertificateSpecPrivateKeyRotationPolicy,
  CertificateSpecUsages,
} from '../imports/certificates-cert-manager.io';
import { Issuer } from '../imports/issuers-cert-manager.io';
import { kubeObject } from './kube-object';
import { namespacedMeta } from './labels';
import { objectNames } from './names';
import { cond, helmValue, RenderContext } from './render-context';

export interface WebhookCertificateProps {
  /** How values and names are rendered. */
  readonly context: RenderContext;
}

/** True when the chart should create its own self-signed Issuer. */
export const createsIssuer = cond.and(cond.eq('webhook.certificates.mode', 'cert-manager'), cond.not(cond.truthy('webhook.certificates.certManager.issuerRef.name')));

export class SelfSignedIssuer extends Construct {
  constructor(scope: Construct, id: string, props: WebhookCertificateProps) {
    super(scope, id);
    const ctx = props.context;
    kubeObject(Issuer, this, 'Resource', {
      metadata: namespacedMeta(ctx, objectNames(ctx).selfSignedIssuer, 'webhook'),
      spec: { selfSigned: {} },
    });
  }
}

export class WebhookCertificate extends Construct {
  constructor(scope: Construct, id: string, props: WebhookCertificateProps) {
    super(scope, id);
    const ctx = props.context;
    const names = objectNames(ctx);
    const issuerName = ctx.helper('issuerName', (v) => (v as { webhook: { certificates: { certManager: { issuerRef: { name: string } } } } }).webhook.certificates.certManager.issuerRef.name || names.selfSignedIssuer);
    kubeObject(Certificate, this, 'Resource', {
      metadata: namespacedMeta(ctx, names.webhookCertificate, 'webhook'),
      spec: {
        secretName: names.webhookSecret,
        dnsNames: [`${names.webhookService}.${ctx.namespace}.svc`, `${names.webhookService}.${ctx.namespace}.svc.cluster.local`],
        issuerRef: { name: issuerName, kind: helmValue<string>(ctx.value('webhook.certificates.certManager.issuerRef.kind')), group: 'cert-manager.io' },
        duration: helmValue<string>(ctx.value('webhook.certificates.certManager.duration')),
        renewBefore: helmValue<string>(ctx.value('webhook.certificates.certManager.renewBefore')),
        privateKey: { algorithm: CertificateSpecPrivateKeyAlgorithm.ECDSA, size: 256, rotationPolicy: CertificateSpecPrivateKeyRotationPolicy.ALWAYS },
        usages: [CertificateSpecUsages.SERVER_AUTH, CertificateSpecUsages.DIGITAL_SIGNATURE, CertificateSpecUsages.KEY_ENCIPHERMENT],
      },
    });
  }
}
