// The spend PrometheusRule as the plain rendering gives it: absent without prices; with prices, its
// own object (with or without the alerts) holding one price series per model and priced token type
// and the spend rules scoped to this release's operator; bad price tables refused naming the entry.
// The rules' arithmetic is tested by promtool (test/alerts/spend-recording-rules.test.yaml).
import { GROUP_POSITIONS, PRICE_GROUP, SPEND_GROUP, SPEND_METRICS } from '../../../constructs/spend-rules';
import { schemaProblems } from '../../../src/chart/value-problems';
import { ValuesSchema } from '../../../src/chart/values-schema';
import { type AnyObject, find, render, valuesWith } from './fixtures';

const groupsOf = (o: AnyObject): Record<string, AnyObject[]> => Object.fromEntries(o.spec.groups.map((g: AnyObject) => [g.name, g.rules]));

describe('spend recording rules (pricing.models)', () => {
  test('are not rendered without prices, also not with the alerts on', () => {
    const kinds = render((v) => { v.prometheusRule.enabled = true; }).filter((o) => o.kind === 'PrometheusRule').map((o) => o.metadata.name);
    expect(kinds).toEqual(['nebari-llm-serving-alerts']);
  });

  test('with prices: their own PrometheusRule, without prometheusRule.enabled, labelled for the rule selector', () => {
    const objects = render((v) => {
      v.prometheusRule.labels = { release: 'prometheus' };
      v.pricing.models = [{ model: 'gamma', input: 2.5, output: 10, cachedInput: 0.25 }, { namespace: 'team-a', model: 'llama-8b', input: 0.1, output: 0.4 }];
    }, { releaseName: 'r1', namespace: 'ns1' });
    const rules = objects.filter((o) => o.kind === 'PrometheusRule');
    expect(rules.map((o) => o.metadata.name)).toEqual(['r1-nebari-llm-serving-spend']);
    const rule = find(objects, 'PrometheusRule', '-spend');
    expect(rule.metadata.labels.release).toBe('prometheus');
    const groups = groupsOf(rule);
    expect(Object.keys(groups)).toEqual([PRICE_GROUP, SPEND_GROUP]);
    // One price per model and priced token type; no cached-input price where none is set; an empty
    // namespace is the release namespace.
    expect(groups[PRICE_GROUP].map((r) => [r.record, r.expr, r.labels])).toEqual([
      [SPEND_METRICS.price, 'vector(2.5)', { currency: 'USD', gen_ai_token_type: 'input', model: 'gamma', model_namespace: 'ns1' }],
      [SPEND_METRICS.price, 'vector(10)', { currency: 'USD', gen_ai_token_type: 'output', model: 'gamma', model_namespace: 'ns1' }],
      [SPEND_METRICS.price, 'vector(0.25)', { currency: 'USD', gen_ai_token_type: 'cached_input', model: 'gamma', model_namespace: 'ns1' }],
      [SPEND_METRICS.price, 'vector(0.1)', { currency: 'USD', gen_ai_token_type: 'input', model: 'llama-8b', model_namespace: 'team-a' }],
      [SPEND_METRICS.price, 'vector(0.4)', { currency: 'USD', gen_ai_token_type: 'output', model: 'llama-8b', model_namespace: 'team-a' }],
    ]);
    const spend = groups[SPEND_GROUP];
    expect(spend.map((r) => r.record)).toEqual([SPEND_METRICS.keyByProxy, SPEND_METRICS.key, SPEND_METRICS.owner, SPEND_METRICS.ownerModel, SPEND_METRICS.model, SPEND_METRICS.group]);
    // Key records of this release's operator only (its metrics Service is the job).
    expect(spend[0].expr).toContain('nls_api_key_info{job="r1-nebari-llm-serving-metrics"}');
    // A key's groups are read at a bounded number of positions.
    expect(spend[5].expr.match(/label_replace/g)).toHaveLength(GROUP_POSITIONS);
  });

  test('a model priced twice is refused, naming both entries', () => {
    expect(() => render((v) => {
      v.pricing.models = [{ model: 'gamma', input: 1, output: 2 }, { namespace: 'ns1', model: 'gamma', input: 3, output: 4 }];
    }, { namespace: 'ns1' })).toThrow('pricing.models[1]: model ns1/gamma already has a price at pricing.models[0]; keep one entry per namespace and model');
  });

  test('the values schema names the field and what is expected', () => {
    const problems = (change: Parameters<typeof valuesWith>[0]) => schemaProblems(ValuesSchema, valuesWith(change), 'values');
    expect(problems((v) => { v.pricing.currency = 'usd'; })).toEqual([expect.stringMatching(/^values\.pricing\.currency: "usd" is not valid: expected a currency code of three capital letters/)]);
    expect(problems((v) => { v.pricing.models = [{ model: 'gamma', input: -1, output: 2 }]; })).toEqual([expect.stringMatching(/^values\.pricing\.models\[0\]\.input: -1 is too small: at least 0/)]);
    expect(problems((v) => { v.pricing.models = [{ model: 'Gamma', input: 1, output: 2 }]; })).toEqual([expect.stringMatching(/^values\.pricing\.models\[0\]\.model: "Gamma" is not valid: expected a Kubernetes object name/)]);
    expect(problems((v) => { v.pricing.models = [{ model: 'gamma', input: 1, output: 2, cachedinput: 1 } as never]; })).toEqual([expect.stringMatching(/^values\.pricing\.models\[0\]\.cachedinput: unknown key; did you mean cachedInput\?/)]);
  });
});
