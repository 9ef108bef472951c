// Ingress to the operator pods: the webhook port from the configured peers (from anywhere by
// default: the API server's address is not known in advance) and the metrics port likewise. Egress stays open: the operator
// talks to the API server, whose address is cluster-specific.
import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { kubeObject } from './kube-object';
import { namespacedMeta, selectorLabels } from './labels';
import { METRICS_PORT, WEBHOOK_PORT, objectNames } from './names';
import { OPERATOR_COMPONENT } from './operator';
import { RenderContext } from './render-context';

export interface OperatorNetworkPolicyProps {
  /** How values and names are rendered. */
  readonly context: RenderContext;
}

export class OperatorNetworkPolicy extends Construct {
  constructor(scope: Construct, id: string, props: OperatorNetworkPolicyProps) {
    super(scope, id);
    const ctx = props.context;
    kubeObject(k8s.KubeNetworkPolicy, this, 'Resource', {
      metadata: namespacedMeta(ctx, objectNames(ctx).networkPolicy, OPERATOR_COMPONENT),
      spec: {
        podSelector: { matchLabels: selectorLabels(ctx, OPERATOR_COMPONENT) },
        policyTypes: ['Ingress'],
        ingress: [
          { ports: [{ port: k8s.IntOrString.fromNumber(WEBHOOK_PORT), protocol: 'TCP' }], ...ctx.block('from', 'networkPolicy.webhookFrom') },
          { ports: [{ port: k8s.IntOrString.fromNumber(METRICS_PORT), protocol: 'TCP' }], ...ctx.block('from', 'networkPolicy.metricsFrom') },
        ],
      },
    });
  }
}
