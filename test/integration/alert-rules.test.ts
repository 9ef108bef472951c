// The chart's alert rules as real helm renders them (release r, namespace nls, prometheusRule on),
// checked and unit-tested by the real promtool: `promtool check rules`, then `promtool test rules`
// over test/alerts/<alert>.test.yaml, where each alert has a case that fires (with its labels and
// annotations) and one that does not. promtool comes from the tools directory; a missing one
// fails the run (toolPaths), never skips it.
import { execFile } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parseAllDocuments, stringify } from 'yaml';
import { ALERT_RULES } from '../../constructs/alert-rules';
import { NEWEST_KUBERNETES_MINOR } from '../../src/kubernetes-versions';
import { helm } from '../support/cluster';
import { toolPaths } from '../support/tools';
import { chartDir, repoRoot } from './chart-support';

const testsDir = path.join(repoRoot, 'test', 'alerts');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-alerts-'));

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

function promtool(args: string[], cwd: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(toolPaths().promtool, args, { cwd }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, output: `${stdout}${stderr}` });
    });
  });
}

/** The rendered PrometheusRule's `spec.groups` as a Prometheus rules file, in a directory beside copies of the test files. */
async function renderedRulesDir(name: string, extraArgs: string[] = []): Promise<string> {
  // No cluster here: render for the newest Kubernetes minor the chart claims (its kubeVersion refuses helm's default).
  const r = await helm(4, ['template', 'r', chartDir, '--namespace', 'nls', '--kube-version', `${NEWEST_KUBERNETES_MINOR}.0`, '--set', 'prometheusRule.enabled=true', '--show-only', 'templates/prometheusrule.yaml', ...extraArgs]);
  expect(r.stderr).toBe('');
  const rule = parseAllDocuments(r.stdout).map((d) => d.toJS() as { kind?: string; spec: { groups: unknown[] } }).find((o) => o?.kind === 'PrometheusRule');
  if (!rule) throw new Error(`helm rendered no PrometheusRule:\n${r.stdout}`);
  const dir = path.join(tmp, name);
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'rendered-rules.yaml'), stringify({ groups: rule.spec.groups }, { lineWidth: 0 }));
  for (const f of fs.readdirSync(testsDir)) fs.copyFileSync(path.join(testsDir, f), path.join(dir, f));
  return dir;
}

const testFiles = () => fs.readdirSync(testsDir).filter((f) => f.endsWith('.test.yaml')).sort();

test('every alert the chart renders has a promtool test file, and nothing else does', () => {
  expect(testFiles()).toEqual(ALERT_RULES.map((a) => `${a.alert}.test.yaml`).sort());
});

test('promtool check rules accepts the rendered rules, and promtool test rules passes for every alert', async () => {
  const dir = await renderedRulesDir('defaults');
  const check = await promtool(['check', 'rules', 'rendered-rules.yaml'], dir);
  expect(check.output).toContain(`SUCCESS: ${ALERT_RULES.length} rules found`);
  expect(check.code).toBe(0);
  const run = await promtool(['test', 'rules', ...testFiles()], dir);
  if (run.code !== 0) throw new Error(`promtool test rules failed:\n${run.output}`);
  expect(run.output.match(/SUCCESS/g)?.length).toBe(testFiles().length);
});

test('the tests notice a changed rule: with the model error threshold raised to 50 %, the model error test fails', async () => {
  const dir = await renderedRulesDir('raised-threshold', ['--set-json', 'prometheusRule.alerts.modelRequestErrors.threshold=0.5']);
  const run = await promtool(['test', 'rules', 'NebariLLMModelRequestErrors.test.yaml'], dir);
  expect(run.code).not.toBe(0);
  expect(run.output).toMatch(/FAILED/);
  expect(run.output).toContain('NebariLLMModelRequestErrors');
});
