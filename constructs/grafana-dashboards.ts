// The optional Grafana dashboards (constructs/dashboards/), one ConfigMap each, labelled for the
// Grafana dashboard sidecar as kube-prometheus-stack runs it (it loads every ConfigMap carrying
// its label, `grafana_dashboard: "1"` by default, and may put a dashboard in the folder an
// annotation names). The JSON is fixed at synth time: everything that differs between
// installations (data source, namespaces, jobs) is a dashboard variable, not a Helm value.
import { Construct } from 'constructs';
import { k8s } from 'cdk8s-plus-28';
import { buildDashboard, DASHBOARDS, type DashboardSpec } from './dashboards';
import { kubeObject } from './kube-object';
import { objectLabels } from './labels';
import { objectNames } from './names';
import { OPERATOR_COMPONENT } from './operator';
import { RenderContext } from './render-context';

export interface GrafanaDashboardsProps {
  /** How values and names are rendered. */
  readonly context: RenderContext;
}

/** The ConfigMap data key of a dashboard: the sidecar writes each key as a file. */
export const dashboardFile = (d: DashboardSpec) => `${d.id}.json`;

export class GrafanaDashboards extends Construct {
  constructor(scope: Construct, id: string, props: GrafanaDashboardsProps) {
    super(scope, id);
    const ctx = props.context;
    const names = objectNames(ctx);
    for (const d of DASHBOARDS) {
      kubeObject(k8s.KubeConfigMap, this, d.id, {
        metadata: {
          name: names.dashboard(d.id),
          namespace: ctx.namespace,
          labels: { ...objectLabels(ctx, OPERATOR_COMPONENT), ...ctx.merge('grafanaDashboards.labels') },
          // e.g. the sidecar's folder annotation (`grafana_folder: LLM serving`).
          ...ctx.block('annotations', 'grafanaDashboards.annotations'),
        },
        data: { [dashboardFile(d)]: JSON.stringify(buildDashboard(d), null, 2) },
      });
    }
  }
}
