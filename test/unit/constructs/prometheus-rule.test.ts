// The chart's PrometheusRule as the plain rendering gives it: off by default; when on, every alert
// carries a severity, a summary naming the object, a description and a runbook link to a runbook
// that exists, and takes its `for`, threshold and rate window from the values.
import * as fs from 'fs';
import * as path from 'path';
import { ALERT_RULES } from '../../../constructs/alert-rules';
import { type AnyObject, find, render } from './fixtures';

const repoRoot = path.resolve(__dirname, '..', '..', '..');
const rulesOf = (o: AnyObject): AnyObject[] => o.spec.groups.flatMap((g: AnyObject) => g.rules);

describe('PrometheusRule (prometheusRule.enabled)', () => {
  test('is not rendered by default', () => {
    expect(render().map((o) => o.kind)).not.toContain('PrometheusRule');
  });

  test('every alert has a severity, a summary naming its object, a description and a runbook in docs/runbooks/', () => {
    const rule = find(render((v) => { v.prometheusRule.enabled = true; v.prometheusRule.labels = { release: 'prometheus' }; }), 'PrometheusRule');
    expect(rule.metadata.name).toBe('nebari-llm-serving-alerts');
    expect(rule.metadata.labels.release).toBe('prometheus');
    const rules = rulesOf(rule);
    expect(rules.map((r) => r.alert)).toEqual(ALERT_RULES.map((a) => a.alert));
    for (const r of rules) {
      expect(['critical', 'warning', 'info']).toContain(r.labels.severity);
      expect(r.annotations.summary).toMatch(/\{\{ \$labels\.[a-z_]+ \}\}/);
      expect(r.annotations.description.length).toBeGreaterThan(20);
      expect(r.annotations.runbook_url).toBe(`https://github.com/nebari-dev/nebari-llm-serving/blob/main/docs/runbooks/${r.alert}.md`);
      expect(fs.existsSync(path.join(repoRoot, 'docs', 'runbooks', `${r.alert}.md`))).toBe(true);
    }
  });

  test('scopes the operator and portal alerts to the release, and takes for, threshold, window and runbook base from the values', () => {
    const rule = find(render((v) => {
      v.prometheusRule.enabled = true;
      v.prometheusRule.rateWindow = '30s';
      v.prometheusRule.runbookBaseURL = 'https://runbooks.example.com/llm';
      v.prometheusRule.alerts.modelRequestErrors = { for: '2s', threshold: 0.25 };
    }, { releaseName: 'r1', namespace: 'ns1' }), 'PrometheusRule');
    const byName = new Map(rulesOf(rule).map((r) => [r.alert, r]));
    const errors = byName.get('NebariLLMModelRequestErrors')!;
    expect(errors.for).toBe('2s');
    expect(errors.expr).toContain('[30s]');
    expect(errors.expr).toMatch(/> 0\.25$/);
    expect(errors.annotations.runbook_url).toBe('https://runbooks.example.com/llm/NebariLLMModelRequestErrors.md');
    expect(byName.get('NebariLLMOperatorNoLeader')!.expr).toContain('nls_leader{job="r1-nebari-llm-serving-metrics", namespace="ns1"}');
    expect(byName.get('NebariLLMKeyRevocationStalled')!.expr).toContain('{job="r1-nebari-llm-serving-portal", namespace="ns1"}');
  });
});
