// A small builder for the chart's Grafana dashboards (constructs/dashboards/*.ts): the dashboard,
// its template variables and its panels, typed with Grafana's own dashboard model
// (`@grafana/schema`, type-only, so nothing of Grafana is bundled). Every panel reads Prometheus
// through the `datasource` variable, so one dashboard works with whichever Prometheus data source
// the Grafana has. Legends use Grafana's `__auto` rather than `{{label}}` templates: the JSON is
// written into a Helm template, where `{{` would be evaluated by Helm.
import type { Dashboard, Panel, VariableModel } from '@grafana/schema';

/** A PromQL query of a panel, with the series name shown in its legend. */
export interface Query {
  readonly expr: string;
  /** Legend text; `__auto` (Grafana names the series by its labels) when absent. */
  readonly legend?: string;
}

/** What a panel shows and how its numbers read. */
export interface PanelSpec {
  readonly title: string;
  readonly description: string;
  /** Grafana unit id (`reqps`, `s`, `percentunit`, `short`, `dateTimeFromNow`...). */
  readonly unit: string;
  readonly queries: readonly Query[];
  /** `timeseries` (default) for rates over time, `stat` for one current number per series. */
  readonly type?: 'timeseries' | 'stat';
}

/** One dashboard of the chart: its stable uid (Grafana keeps links and stars by it) and content. */
export interface DashboardSpec {
  /** Stable across releases; 8 to 40 characters (Grafana's limit). */
  readonly uid: string;
  /** File name stem in the ConfigMap (`<id>.json`) and suffix of the ConfigMap's name. */
  readonly id: string;
  readonly title: string;
  readonly description: string;
  /** Template variables besides `datasource` (which every dashboard has). */
  readonly variables: readonly VariableModel[];
  readonly panels: readonly PanelSpec[];
}

/** The data source variable every panel and query variable reads through. */
export const DATASOURCE = { type: 'prometheus', uid: '${datasource}' } as const;

/** Grafana 11/12 dashboard JSON model version these dashboards are written in. */
export const SCHEMA_VERSION = 39;

const PANEL_WIDTH = 12;
const PANEL_HEIGHT = 8;

/**
 * A query variable listing the values of `label` on `metric` (Grafana's `label_values`), with an
 * "All" option matching any value, so every query can filter with `label=~"$name"`.
 */
export function labelVariable(name: string, label: string, metric: string, title: string): VariableModel {
  return {
    name,
    label: title,
    type: 'query',
    datasource: DATASOURCE,
    query: { query: `label_values(${metric}, ${label})`, refId: `${name}-values` },
    // 2: refresh the values when the time range changes (new keys, models and pods appear).
    refresh: 2,
    includeAll: true,
    allValue: '.*',
    multi: true,
    current: { text: 'All', value: '$__all' },
    // 1: values sorted alphabetically.
    sort: 1,
  };
}

/** The whole dashboard: a `datasource` variable, the spec's variables, panels two to a row. */
export function buildDashboard(spec: DashboardSpec): Dashboard {
  const datasource: VariableModel = { name: 'datasource', label: 'Data source', type: 'datasource', query: 'prometheus' };
  return {
    uid: spec.uid,
    title: spec.title,
    description: spec.description,
    tags: ['nebari-llm-serving'],
    editable: true,
    // 1: a shared crosshair across the panels.
    graphTooltip: 1,
    schemaVersion: SCHEMA_VERSION,
    time: { from: 'now-6h', to: 'now' },
    refresh: '1m',
    templating: { list: [datasource, ...spec.variables] },
    panels: spec.panels.map((p, i) => buildPanel(p, i)),
  };
}

function buildPanel(spec: PanelSpec, index: number): Panel {
  return {
    id: index + 1,
    type: spec.type ?? 'timeseries',
    title: spec.title,
    description: spec.description,
    datasource: DATASOURCE,
    gridPos: { x: (index % 2) * PANEL_WIDTH, y: Math.floor(index / 2) * PANEL_HEIGHT, w: PANEL_WIDTH, h: PANEL_HEIGHT },
    fieldConfig: { defaults: { unit: spec.unit }, overrides: [] },
    options: {},
    targets: spec.queries.map((q, i) => ({
      refId: String.fromCharCode(65 + i),
      datasource: DATASOURCE,
      expr: q.expr,
      legendFormat: q.legend ?? '__auto',
      ...(spec.type === 'stat' ? { instant: true } : { range: true }),
    })),
  };
}

/**
 * `expr` with a fixed label added, so two queries of one panel (p50 and p99, say) stay apart in the
 * legend without a `{{label}}` legend template.
 */
export function withLabel(expr: string, label: string, value: string): string {
  return `label_replace(${expr}, "${label}", "${value}", "", "")`;
}
