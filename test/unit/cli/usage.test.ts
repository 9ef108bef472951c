// `nls usage`: the flags, the PromQL it sends and how answers become rows. The query itself is
// run against the real Prometheus of the end-to-end suite (test/e2e/observability.test.ts).
import { parseUsageArgs, usageQuery, usageRows, usageTable } from '../../../src/cli/usage/usage';

describe('nls usage', () => {
  it('needs a Prometheus URL, from the flag or the environment, and says where to give it', () => {
    expect(() => parseUsageArgs([], {})).toThrow(/no Prometheus to read: pass --prometheus URL or set NLS_PROMETHEUS_URL/);
    expect(parseUsageArgs([], { NLS_PROMETHEUS_URL: 'http://prom:9090/' })).toEqual({ prometheus: 'http://prom:9090', since: '30d', output: 'text' });
    expect(parseUsageArgs(['--prometheus', 'http://p:9090', '--model', 'gamma', '--user', 'ann', '-n', 'llm', '--since', '7d', '-o', 'json'], {})).toEqual({
      prometheus: 'http://p:9090',
      model: 'gamma',
      user: 'ann',
      namespace: 'llm',
      since: '7d',
      output: 'json',
    });
  });

  it.each([
    [['--prometheus', 'prom:9090'], /--prometheus "prom:9090" is not an http\(s\) URL/],
    [['--prometheus', 'http://p', '--since', '1.5d'], /--since "1.5d" is not a period; write e.g. 24h, 7d or 30d/],
    [['--prometheus', 'http://p', '--since', '0d'], /--since "0d" is not a period/],
    [['--prometheus', 'http://p', '-o', 'yaml'], /--output "yaml" is not supported; use text or json/],
    [['--prometheus', 'http://p', 'extra'], /unexpected argument "extra"/],
  ])('refuses %j, naming the flag and the fix', (args, message) => {
    expect(() => parseUsageArgs(args, {})).toThrow(message);
  });

  it('joins the period\'s tokens per key with the key records of the period, filtered by quoted label values', () => {
    expect(usageQuery({ since: '7d', model: 'gamma', user: 'a"b' })).toBe(
      'sum by (namespace, model, owner, gen_ai_token_type) (' +
        '((increase(gen_ai_client_token_usage_sum[7d]) and gen_ai_client_token_usage_sum offset 7d) or gen_ai_client_token_usage_sum)' +
        ' * on (client_id) group_left (namespace, model, owner) ' +
        'max by (client_id, namespace, model, owner) (label_replace(max_over_time(nls_api_key_info{model="gamma", owner="a\\"b"}[7d]), "namespace", "$1", "exported_namespace", "(.+)")))',
    );
    expect(usageQuery({ since: '30d' })).toContain('max_over_time(nls_api_key_info{}[30d])');
    // The model's namespace: `exported_namespace` where the scrape renamed it (the Prometheus Operator's default), else `namespace`.
    expect(usageQuery({ since: '1d', namespace: 'llm' })).toContain(
      '(label_replace((max_over_time(nls_api_key_info{exported_namespace="", namespace="llm"}[1d]) or max_over_time(nls_api_key_info{exported_namespace="llm"}[1d])), "namespace", "$1", "exported_namespace", "(.+)"))',
    );
  });

  it('turns samples into one row per namespace, model and owner, with every token type, sorted', () => {
    const sample = (model: string, owner: string, type: string, value: string) => ({ metric: { namespace: 'llm', model, owner, gen_ai_token_type: type }, value: [0, value] as [number, string] });
    const rows = usageRows([sample('gamma', 'bo', 'input', '9'), sample('gamma', 'ann', 'output', '2'), sample('azure', 'ann', 'input', '11.9999'), sample('gamma', 'ann', 'input', '6'), sample('gamma', 'ann', 'cached_input', '1')]);
    expect(rows).toEqual([
      { namespace: 'llm', model: 'azure', owner: 'ann', tokens: { input: 12 } },
      { namespace: 'llm', model: 'gamma', owner: 'ann', tokens: { output: 2, input: 6, cached_input: 1 } },
      { namespace: 'llm', model: 'gamma', owner: 'bo', tokens: { input: 9 } },
    ]);
    expect(usageTable(rows)).toEqual(['NAMESPACE\tMODEL\tOWNER\tINPUT\tOUTPUT\tTOTAL\tCOST', 'llm\tazure\tann\t12\t0\t12\t-', 'llm\tgamma\tann\t6\t2\t8\t-', 'llm\tgamma\tbo\t9\t0\t9\t-']);
  });

  it('costs each row at its model\'s price, as the portal does, and leaves unpriced models without a cost (not zero)', () => {
    const sample = (model: string, type: string, value: string) => ({ metric: { namespace: 'llm', model, owner: 'ann', gen_ai_token_type: type }, value: [0, value] as [number, string] });
    const prices = new Map([['llm/gamma', { currency: 'EUR', input: 2, output: 8, cachedInput: 0.5 }]]);
    const rows = usageRows([sample('gamma', 'input', '3000'), sample('gamma', 'cached_input', '1000'), sample('gamma', 'output', '500'), sample('azure', 'input', '7')], prices);
    // gamma: 2000 uncached input × 2 + 1000 cached × 0.5 + 500 output × 8, per million.
    expect(rows).toEqual([
      { namespace: 'llm', model: 'azure', owner: 'ann', tokens: { input: 7 } },
      { namespace: 'llm', model: 'gamma', owner: 'ann', tokens: { input: 3000, cached_input: 1000, output: 500 }, cost: 0.0085, currency: 'EUR' },
    ]);
    expect(usageTable(rows).slice(1)).toEqual(['llm\tazure\tann\t7\t0\t7\t-', 'llm\tgamma\tann\t3000\t500\t3500\t0.0085 EUR']);
  });

  it('shows owners with control characters escaped, not sent to the terminal', () => {
    expect(usageTable([{ namespace: 'n', model: 'm', owner: 'evil\u001b[2J', tokens: {} }])[1]).toBe('n\tm\tevil\\x1b[2J\t0\t0\t0\t-');
  });
});
