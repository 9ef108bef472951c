// The usage query, rows and cost shared by `nls usage` and the key portal, and the portal's periods
// and totals: pure functions (the real Prometheus is in test/integration/key-portal.test.ts and the
// e2e suite).
import { costOf, formatCost, tokenRows, usageQuery } from '../../../src/usage/prometheus-usage';
import { adminTotals, type KeyUsage, periodRange, periodStart } from '../../../src/portal/usage';

describe('shared usage query', () => {
  it('selects exactly the given client IDs, regex characters escaped, and groups by the asked labels', () => {
    const q = usageQuery({ clientIds: ['k-1', 'a.b'] }, '3600s', ['client_id', 'model', 'owner']);
    expect(q).toContain('nls_api_key_info{client_id=~"k-1|a\\\\.b"}[3600s]');
    expect(q).toMatch(/^sum by \(client_id, model, owner, gen_ai_token_type\) \(/);
    expect(q).toContain('group_left (model, owner) max by (client_id, model, owner)');
  });

  it('makes one row per label set with every token type', () => {
    const s = (id: string, type: string, v: string) => ({ metric: { client_id: id, gen_ai_token_type: type }, value: [0, v] as [number, string] });
    expect(tokenRows([s('b', 'input', '3'), s('a', 'output', '1.0001'), s('a', 'input', '2')], ['client_id'])).toEqual([
      { labels: { client_id: 'a' }, tokens: { output: 1, input: 2 } },
      { labels: { client_id: 'b' }, tokens: { input: 3 } },
    ]);
  });

  it('charges cached input its own price, as the spend rules do, and nothing without input and output prices', () => {
    expect(costOf({ input: 1000, cached_input: 200, output: 300 }, { currency: 'EUR', input: 2.5, output: 10, cachedInput: 0.25 })).toBe((800 * 2.5 + 200 * 0.25 + 300 * 10) / 1e6);
    expect(costOf({ input: 1000, cached_input: 200 }, { currency: 'EUR', input: 2, output: 8 })).toBe((1000 * 2) / 1e6);
    expect(costOf({ input: 1 }, { currency: 'EUR', input: 2 })).toBeUndefined();
    expect(costOf({ input: 1 }, undefined)).toBeUndefined();
  });
});

describe('portal usage periods and totals', () => {
  it('counts today from midnight UTC and the month from the first, in whole seconds', () => {
    const now = new Date('2026-12-04T10:00:00.500Z');
    expect(periodStart('today', now).toISOString()).toBe('2026-12-04T00:00:00.000Z');
    expect(periodStart('month', now).toISOString()).toBe('2026-12-01T00:00:00.000Z');
    expect(periodRange('today', now)).toBe('36001s');
    expect(periodRange('today', new Date('2026-12-04T00:00:00.000Z'))).toBe('1s');
  });

  it('sums keys per user, per granting group (each group counts the key whole) and per model', () => {
    const key = (clientId: string, owner: string, groups: string[], input: number, cost?: number): KeyUsage => {
      const a = { tokens: { input }, ...(cost === undefined ? {} : { cost }) };
      return { clientId, model: { namespace: 'llm', name: 'm', kind: 'LLMModel' }, owner, groups, tier: 't', today: a, month: a };
    };
    const t = adminTotals([key('1', 'ann', ['a', 'b'], 10, 0.5), key('2', 'bo', [], 5), key('3', 'ann', ['b'], 1, 0.25)]);
    expect(t.byUser.map((r) => [r.name, r.month])).toEqual([['ann', { tokens: { input: 11 }, cost: 0.75 }], ['bo', { tokens: { input: 5 } }]]);
    expect(t.byGroup.map((r) => [r.name, r.month.tokens.input])).toEqual([['(no group)', 5], ['a', 10], ['b', 11]]);
    expect(t.byModel.map((r) => [r.name, r.month])).toEqual([['llm/m', { tokens: { input: 16 }, cost: 0.75 }]]);
  });
});

test('costs are written with cents from 1 up and three significant digits below, never rounded to zero', () => {
  expect([0, 0.00007, 0.0000007, 0.0085, 0.123456, 0.999, 1, 1234.5].map(formatCost)).toEqual(['0', '0.00007', '0.0000007', '0.0085', '0.123', '0.999', '1.00', '1,234.50']);
});
