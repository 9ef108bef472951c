// The chart's alert rules as real helm renders them (release r, namespace nls, prometheusRule on),
// checked and unit-tested by the real promtool: `promtool check rules`, then `promtool test rules`
// over test/alerts/<alert>.test.yaml, where each alert has a case that fires (with its labels and
// annotations) and one that does not. The spend recording rules (PrometheusRule <fullname>-spend,
// rendered from a price table) are in the same rules file and tested by
// test/alerts/spend-recording-rules.test.yaml. promtool comes from the tools directory; a missing one
// fails the run (toolPaths), never skips it.
import { execFile } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parseAllDocuments, stringify } from 'yaml';
import { ALERT_RULES } from '../../constructs/alert-rules';
import { SPEND_METRICS } from '../../constructs/spend-rules';
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

/** The price table spend-recording-rules.test.yaml is written for (prices per million tokens). */
const SPEND_VALUES = {
  currency: 'EUR',
  models: [
    { namespace: 'llm', model: 'gamma', input: 2, output: 8, cachedInput: 0.5 },
    { namespace: 'llm', model: 'llama', input: 0.25, output: 1 },
  ],
};
/** Rules of the spend PrometheusRule: a price per model and priced token type, and the spend rules. */
const SPEND_RULE_COUNT = 5 + Object.keys(SPEND_METRICS).length - 1;

/** The rendered PrometheusRules' `spec.groups` (alerts, then spend) as one Prometheus rules file, in a directory beside copies of the test files. */
async function renderedRulesDir(name: string, extraArgs: string[] = []): Promise<string> {
  // No cluster here: render for the newest Kubernetes minor the chart claims (its kubeVersion refuses helm's default).
  const r = await helm(4, [
    'template', 'r', chartDir, '--namespace', 'nls', '--kube-version', `${NEWEST_KUBERNETES_MINOR}.0`, '--set', 'prometheusRule.enabled=true', '--set-json', `pricing=${JSON.stringify(SPEND_VALUES)}`,
    '--show-only', 'templates/prometheusrule.yaml', '--show-only', 'templates/prometheusrule-spend.yaml', ...extraArgs,
  ]);
  expect(r.stderr).toBe('');
  const rules = parseAllDocuments(r.stdout).map((d) => d.toJS() as { kind?: string; spec: { groups: unknown[] } }).filter((o) => o?.kind === 'PrometheusRule');
  if (rules.length !== 2) throw new Error(`helm rendered ${rules.length} PrometheusRules, expected the alerts and the spend rules:\n${r.stdout}`);
  const dir = path.join(tmp, name);
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'rendered-rules.yaml'), stringify({ groups: rules.flatMap((rule) => rule.spec.groups) }, { lineWidth: 0 }));
  for (const f of fs.readdirSync(testsDir)) fs.copyFileSync(path.join(testsDir, f), path.join(dir, f));
  return dir;
}

const testFiles = () => fs.readdirSync(testsDir).filter((f) => f.endsWith('.test.yaml')).sort();

test('every alert the chart renders has a promtool test file, the spend rules have one, and nothing else does', () => {
  expect(testFiles()).toEqual([...ALERT_RULES.map((a) => `${a.alert}.test.yaml`), 'spend-recording-rules.test.yaml'].sort());
});

test('promtool check rules accepts the rendered rules, and promtool test rules passes for every alert', async () => {
  const dir = await renderedRulesDir('defaults');
  const check = await promtool(['check', 'rules', 'rendered-rules.yaml'], dir);
  expect(check.output).toContain(`SUCCESS: ${ALERT_RULES.length + SPEND_RULE_COUNT} rules found`);
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

test("the spend tests notice a changed price: with gamma's cached input priced as input, the spend test fails", async () => {
  const changed = { ...SPEND_VALUES, models: [{ ...SPEND_VALUES.models[0], cachedInput: 2 }, SPEND_VALUES.models[1]] };
  const dir = await renderedRulesDir('changed-price', ['--set-json', `pricing=${JSON.stringify(changed)}`]);
  const run = await promtool(['test', 'rules', 'spend-recording-rules.test.yaml'], dir);
  expect(run.code).not.toBe(0);
  expect(run.output).toMatch(/FAILED/);
  expect(run.output).toContain('nls:api_key_spend');
});
