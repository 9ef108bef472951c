// Optional Prometheus Operator ServiceMonitor scraping the operator's metrics Service.
import { Construct } from 'constructs';
import { ServiceMonitor } from '../imports/servicemonitors-monitoring.coreos.com';
import { kubeObject } from './kube-object';
import { objectLabels, selectorLabels } from './labels';
import { objectNames } from './names';
import { OPERATOR_COMPONENT } from './operator';
import { helmValue, RenderContext } from './render-context';

export interface OperatorServiceMonitorProps {
  /** How values and names are rendered. */
  readonly context: RenderContext;
}

export class OperatorServiceMonitor extends Construct {
  constructor(scope: Construct, id: string, props: OperatorServiceMonitorProps) {
    super(scope, id);
    const ctx = props.context;
    kubeObject(ServiceMonitor, this, 'Resource', {
      metadata: {
        name: objectNames(ctx).serviceMonitor,
        namespace: ctx.namespace,
        labels: { ...objectLabels(ctx, OPERATOR_COMPONENT), ...ctx.merge('serviceMonitor.labels') },
      },
      spec: {
        selector: { matchLabels: selectorLabels(ctx, OPERATOR_COMPONENT) },
        namespaceSelector: { matchNames: [ctx.namespace] },
        endpoints: [{ port: 'metrics', path: '/metrics', interval: helmValue<string>(ctx.value('serviceMonitor.interval')) }],
      },
    });
  }
}
