// Optional Prometheus Operator ServiceMonitors scraping the operator's metrics Service and, with
// the portal enabled, the portal Service's `metrics` port (issue 29, Medium 7).
import { Construct } from 'constructs';
import { ServiceMonitor } from '../imports/servicemonitors-monitoring.coreos.com';
import { kubeObject } from './kube-object';
import { objectLabels, selectorLabels } from './labels';
import { objectNames } from './names';
import { OPERATOR_COMPONENT } from './operator';
import { PORTAL_COMPONENT } from './portal';
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

/** The portal's metrics (users failing group refresh, keys revoked); same interval and labels as the operator's. */
export class PortalServiceMonitor extends Construct {
  constructor(scope: Construct, id: string, props: OperatorServiceMonitorProps) {
    super(scope, id);
    const ctx = props.context;
    kubeObject(ServiceMonitor, this, 'Resource', {
      metadata: {
        name: objectNames(ctx).portal,
        namespace: ctx.namespace,
        labels: { ...objectLabels(ctx, PORTAL_COMPONENT), ...ctx.merge('serviceMonitor.labels') },
      },
      spec: {
        selector: { matchLabels: selectorLabels(ctx, PORTAL_COMPONENT) },
        namespaceSelector: { matchNames: [ctx.namespace] },
        endpoints: [{ port: 'metrics', path: '/metrics', interval: helmValue<string>(ctx.value('serviceMonitor.interval')) }],
      },
    });
  }
}
