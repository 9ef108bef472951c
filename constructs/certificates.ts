// cert-manager mode: a self-signed Issuer (unless an existing issuer is named) and the webhook's
// serving Certificate; the webhook configurations carry the CA-injection annotation.
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { namespacedMeta } from './labels';
import { objectNames } from './names';
import { cond, RenderContext } from './render-context';

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
    new ApiObject(this, 'Resource', {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: namespacedMeta(ctx, objectNames(ctx).selfSignedIssuer, 'webhook') as never,
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
    new ApiObject(this, 'Resource', {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: namespacedMeta(ctx, names.webhookCertificate, 'webhook') as never,
      spec: {
        secretName: names.webhookSecret,
        dnsNames: [`${names.webhookService}.${ctx.namespace}.svc`, `${names.webhookService}.${ctx.namespace}.svc.cluster.local`],
        issuerRef: { name: issuerName, kind: ctx.value('webhook.certificates.certManager.issuerRef.kind'), group: 'cert-manager.io' },
        duration: ctx.value('webhook.certificates.certManager.duration'),
        renewBefore: ctx.value('webhook.certificates.certManager.renewBefore'),
        privateKey: { algorithm: 'ECDSA', size: 256, rotationPolicy: 'Always' },
        usages: ['server auth', 'digital signature', 'key encipherment'],
      },
    });
  }
}
