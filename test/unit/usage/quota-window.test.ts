// A key's share of its quota tier: the windows the ratelimit service counts in, the token types a
// cost type charges, which tier limits a key, and how the usage page shows the share. The share is
// read from a real Prometheus in test/integration/key-portal.test.ts.
import { QUOTA_COST_TYPES } from '../../../src/translate/gateway/quota-settings';
import { quotaShare, quotaTokens, quotaWindowRange, quotaWindowStart } from '../../../src/usage/quota-window';
import { type KeyUsage, limitingTier, type QuotaTiers } from '../../../src/portal/usage';
import { shareText, usagePage } from '../../../src/portal/pages/usage';

const NOW = new Date('2026-12-04T21:47:13.250Z');

describe('quota windows', () => {
  it.each([
    ['Second', '2026-12-04T21:47:13.000Z', '1s'],
    ['Minute', '2026-12-04T21:47:00.000Z', '14s'],
    ['Hour', '2026-12-04T21:00:00.000Z', '2834s'],
    ['Day', '2026-12-04T00:00:00.000Z', '78434s'],
    // 30 days from the Unix epoch, as the ratelimit service divides time: 693 whole windows end on 2026-12-03.
    ['Month', '2026-12-03T00:00:00.000Z', '164834s'],
  ] as const)('aligns a %s window to the unit boundary, as the rate limiter does', (unit, start, range) => {
    expect(quotaWindowStart(unit, NOW).toISOString()).toBe(start);
    expect(quotaWindowRange(unit, NOW)).toBe(range);
  });

  it('counts at least one second on a window boundary', () => {
    expect(quotaWindowRange('Hour', new Date('2026-12-04T21:00:00.000Z'))).toBe('1s');
  });
});

describe('tokens a quota charges', () => {
  const tokens = { input: 1000, cached_input: 200, cache_creation_input: 50, output: 300, reasoning: 40 };
  it.each([
    ['TotalToken', 1300],
    ['InputToken', 1000],
    ['OutputToken', 300],
    ['CachedInputToken', 200],
    ['CacheCreationInputToken', 50],
    ['ReasoningToken', 40],
  ] as const)('%s charges %d of the example tokens', (costType, expected) => {
    expect(quotaTokens(tokens, costType)).toBe(expected);
  });

  it('knows every cost type the chart accepts', () => {
    for (const costType of QUOTA_COST_TYPES) expect(quotaTokens({}, costType)).toBe(0);
  });
});

describe('which tier limits a key', () => {
  const quotas: QuotaTiers = {
    costType: 'TotalToken',
    default: 'standard',
    tiers: [
      { name: 'standard', tokens: 10_000, unit: 'Hour' },
      { name: 'large', tokens: 1_000_000, unit: 'Day', groups: ['batch'] },
      { name: 'legacy' },
    ],
  };
  it('is the record\'s tier, or the default for none or a tier no longer configured', () => {
    expect(limitingTier(quotas, 'large')?.name).toBe('large');
    expect(limitingTier(quotas, '')?.name).toBe('standard');
    expect(limitingTier(quotas, 'gone')?.name).toBe('standard');
  });
  it('is none with quotas off, without a known limit, or without the cost type', () => {
    expect(limitingTier(undefined, 'standard')).toBeUndefined();
    expect(limitingTier(quotas, 'legacy')).toBeUndefined();
    expect(limitingTier({ ...quotas, costType: undefined }, 'standard')).toBeUndefined();
  });
});

describe('the share on the usage page', () => {
  const share = quotaShare({ name: 'standard', tokens: 10_000, unit: 'Hour' }, 1200, NOW, true);

  it('is the tokens of the window against the limit', () => {
    expect(share).toEqual({ tier: 'standard', limit: 10_000, unit: 'Hour', windowStart: '2026-12-04T21:00:00.000Z', used: 1200, share: 0.12, enforced: true });
    expect(shareText(share)).toBe('1,200 of 10,000 tokens this hour, 12 %');
    expect(shareText(quotaShare({ name: 't', tokens: 1_000_000, unit: 'Day' }, 3, NOW, true))).toBe('3 of 1,000,000 tokens today (UTC), <1 %');
    expect(shareText(quotaShare({ name: 't', tokens: 100, unit: 'Month' }, 0, NOW, true))).toBe('0 of 100 tokens in the 30-day window since 2026-12-03, 0 %');
    // Concurrent answers can overshoot the budget (docs/key-quotas.md): the share says so.
    expect(shareText(quotaShare({ name: 't', tokens: 100, unit: 'Minute' }, 130, NOW, true))).toBe('130 of 100 tokens this minute, 130 %');
    // PassthroughModel keys: the gateway counts their tokens but does not charge them (docs/key-quotas.md).
    expect(shareText(quotaShare({ name: 't', tokens: 100, unit: 'Hour' }, 30, NOW, false))).toBe('30 of 100 tokens this hour, 30 % (not enforced: the gateway does not charge tokens to keys of external providers yet)');
  });

  const key = (clientId: string, quota?: KeyUsage['quota']): KeyUsage => ({
    clientId,
    model: { namespace: 'llm', name: 'gamma', kind: 'PassthroughModel' },
    owner: 'ann',
    groups: [],
    tier: 'standard',
    today: { tokens: { input: 1000, output: 200 } },
    month: { tokens: { input: 1000, output: 200 } },
    ...(quota ? { quota } : {}),
  });
  const report = (keys: KeyUsage[]) => ({ periods: { today: '2026-12-04T00:00:00.000Z', month: '2026-12-01T00:00:00.000Z' }, keys });
  const mine = (page: string) => page.slice(page.indexOf('id="mine-h"'), page.indexOf('</section>'));

  it('is a column of the user\'s keys, last, with the share as data and a meter; a key without a limit shows none', () => {
    const page = usagePage(report([key('k1', share), key('k2')]), undefined).value;
    expect(mine(page)).toContain('<th scope="col">Cost this month</th><th scope="col">Share of tier</th></tr>');
    expect(mine(page)).toContain('<td data-quota-share="0.12"><meter min="0" max="10000" value="1200"></meter> 1,200 of 10,000 tokens this hour, 12 %</td></tr>');
    expect(mine(page)).toMatch(/<code>k2<\/code>.*<td>—<\/td><\/tr>/);
  });

  it('is not shown with quotas off, nor in the admin totals', () => {
    const admin = { byUser: [{ name: 'ann', today: { tokens: {} }, month: { tokens: {} } }], byGroup: [], byModel: [] };
    expect(usagePage(report([key('k1')]), admin).value).not.toContain('Share of tier');
    expect(usagePage(report([key('k1', share)]), admin).value.match(/Share of tier/g)).toHaveLength(1);
  });
});
