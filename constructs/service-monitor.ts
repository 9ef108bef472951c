// Optional Prometheus Operator ServiceMonitor scraping the operator's metrics Service.
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { objectLabels, selectorLabels } from './labels';
import { objectNames } from './names';
import { OPERATOR_COMPONENT } from './operator';
import { RenderContext } from './render-context';

export interface OperatorServiceMonitorProps {
  /** How values and names are rendered. */
  readonly context: RenderContext;
}

export class OperatorServiceMonitor extends Construct {
  constructor(scope: Construct, id: string, props: OperatorServiceMonitorProps) {
    super(scope, id);
    const ctx = props.context;
    new ApiObject(this, 'Resource', {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'ServiceMonitor',
      metadata: {
        name: objectNames(ctx).serviceMonitor,
        namespace: ctx.namespace,
        labels: { ...objectLabels(ctx, OPERATOR_COMPONENT), ...ctx.merge('serviceMonitor.labels') },
      } as never,
      spec: {
        selector: { matchLabels: selectorLabels(ctx, OPERATOR_COMPONENT) },
        namespaceSelector: { matchNames: [ctx.namespace] },
        endpoints: [{ port: 'metrics', path: '/metrics', interval: ctx.value('serviceMonitor.interval') }],
      },
    });
  }
}
