// The chart's Grafana dashboards (grafanaDashboards.enabled) as the plain rendering gives them:
// off by default; when on, one ConfigMap per dashboard labelled for the Grafana sidecar, with
// JSON that Grafana's own dashboard model (the `Dashboard` type of @grafana/schema) accepts, and
// panels that each query Prometheus through the `datasource` variable.
import * as path from 'path';
import ts from 'typescript';
import { DASHBOARDS } from '../../../constructs/dashboards';
import { type AnyObject, render } from './fixtures';

const dashboardMaps = (objects: AnyObject[]) => objects.filter((o) => o.kind === 'ConfigMap' && String(o.metadata.name).includes('-dashboard-'));
const enabled = () => dashboardMaps(render((v) => { v.grafanaDashboards.enabled = true; }));
/** Every dashboard's JSON as written into its ConfigMap, by ConfigMap name. */
const dashboardsOf = (maps: AnyObject[]) => maps.map((m) => {
  const files = Object.keys(m.data);
  expect(files).toHaveLength(1);
  return { map: m.metadata.name as string, file: files[0], dashboard: JSON.parse(m.data[files[0]]) as AnyObject };
});
/** Variables Grafana itself provides, usable in any query. */
const BUILT_IN = new Set(['__rate_interval', '__range', '__interval']);

describe('Grafana dashboards (grafanaDashboards.enabled)', () => {
  test('are not rendered by default', () => {
    expect(dashboardMaps(render())).toEqual([]);
  });

  test('one ConfigMap per dashboard, labelled for the sidecar, with the folder annotation when given', () => {
    const maps = enabled();
    expect(maps.map((m) => m.metadata.name)).toEqual([
      'nebari-llm-serving-dashboard-gateway-overview',
      'nebari-llm-serving-dashboard-usage',
      'nebari-llm-serving-dashboard-serving-engines',
      'nebari-llm-serving-dashboard-operator',
      'nebari-llm-serving-dashboard-portal',
    ]);
    for (const m of maps) {
      expect(m.metadata.labels.grafana_dashboard).toBe('1');
      expect(m.metadata.labels['app.kubernetes.io/instance']).toBe('nebari-llm-serving');
      expect(m.metadata.annotations).toBeUndefined();
    }
    const custom = dashboardMaps(render((v) => {
      v.grafanaDashboards.enabled = true;
      v.grafanaDashboards.labels = { dashboards: 'llm' };
      v.grafanaDashboards.annotations = { grafana_folder: 'LLM serving' };
    }, { releaseName: 'r1', namespace: 'ns1' }));
    expect(custom.map((m) => [m.metadata.namespace, m.metadata.labels.dashboards, m.metadata.annotations])).toEqual(
      DASHBOARDS.map(() => ['ns1', 'llm', { grafana_folder: 'LLM serving' }]),
    );
    expect(custom[0].metadata.name).toBe('r1-nebari-llm-serving-dashboard-gateway-overview');
  });

  test('uids are unique, stable and within Grafana\'s 8 to 40 characters', () => {
    const uids = dashboardsOf(enabled()).map((d) => d.dashboard.uid);
    expect(uids).toEqual(['nls-gateway-overview', 'nls-usage', 'nls-serving-engines', 'nls-operator', 'nls-portal']);
    for (const uid of uids) expect(uid).toMatch(/^[a-zA-Z0-9_-]{8,40}$/);
  });

  test('every panel queries Prometheus through the datasource variable, with PromQL using only declared variables', () => {
    for (const { map, dashboard } of dashboardsOf(enabled())) {
      const variables = dashboard.templating.list as AnyObject[];
      expect(variables[0]).toMatchObject({ name: 'datasource', type: 'datasource', query: 'prometheus' });
      const declared = new Set(variables.map((v) => v.name as string));
      const panels = dashboard.panels as AnyObject[];
      expect(panels.length).toBeGreaterThan(0);
      expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length);
      for (const p of panels) {
        const where = `${map}: panel "${p.title}"`;
        expect(`${where}: ${p.datasource.uid}`).toBe(`${where}: \${datasource}`);
        expect(p.targets.length).toBeGreaterThan(0);
        for (const t of p.targets) {
          expect(t.expr).toMatch(/\S/);
          expect(t.datasource).toEqual({ type: 'prometheus', uid: '${datasource}' });
          const used = [...(t.expr as string).matchAll(/\$(\w+)/g)].map((m) => m[1]).filter((v) => !BUILT_IN.has(v));
          expect(`${where}: ${used.filter((v) => !declared.has(v)).join(', ')}`).toBe(`${where}: `);
        }
      }
      // Query variables read through the data source too.
      for (const v of variables.slice(1)) expect(v.datasource).toEqual({ type: 'prometheus', uid: '${datasource}' });
    }
  });

  test('no `{{` in any dashboard: the JSON sits in a Helm template', () => {
    for (const m of enabled()) expect(JSON.stringify(m.data)).not.toContain('{{');
  });

  // Grafana publishes its dashboard model as TypeScript types (@grafana/schema), not as a JSON
  // schema file, so each rendered JSON is type-checked against `Dashboard` by the TypeScript
  // compiler: excess-property and type checks on every typed level (dashboard, panels, grid
  // positions, field config, template variables, time range). Panel targets and options are
  // plugin-defined (`Record<string, unknown>` in the model) and are checked by the tests above.
  test('every dashboard\'s JSON type-checks as Grafana\'s Dashboard model (@grafana/schema)', () => {
    const dashboards = dashboardsOf(enabled());
    const sourceName = path.join(__dirname, 'rendered-dashboards.ts');
    const source = [
      "import type { Dashboard } from '@grafana/schema';",
      ...dashboards.map((d, i) => `// ${d.map}\nexport const dashboard${i}: Dashboard = ${JSON.stringify(d.dashboard)};`),
    ].join('\n');
    const options: ts.CompilerOptions = { strict: true, noEmit: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, skipLibCheck: true, types: [] };
    const host = ts.createCompilerHost(options);
    const readFile = host.readFile.bind(host);
    host.readFile = (f) => (path.resolve(f) === sourceName ? source : readFile(f));
    host.fileExists = ((exists) => (f: string) => path.resolve(f) === sourceName || exists(f))(host.fileExists.bind(host));
    const program = ts.createProgram([sourceName], options, host);
    const problems = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(problems).toEqual([]);
    // The check is real: a field the model lacks is refused.
    const wrong = source.replace('"schemaVersion"', '"schemaVersio"');
    host.readFile = (f) => (path.resolve(f) === sourceName ? wrong : readFile(f));
    expect(ts.getPreEmitDiagnostics(ts.createProgram([sourceName], options, host)).length).toBeGreaterThan(0);
  });
});
