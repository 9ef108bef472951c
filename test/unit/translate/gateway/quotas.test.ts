import { desiredGatewayObjects, GatewayContext, keyTiersFromMetadata } from '../../../../src/translate/gateway';
import { MAX_RATE_LIMIT_RULES, quotaSettingsErrors, QuotaSettings } from '../../../../src/translate/gateway/quota-settings';
import { llmModel } from './model-matrix';

const quotas: QuotaSettings = {
  costType: 'OutputToken',
  defaultTier: 'standard',
  tiers: [
    { name: 'standard', tokens: 100000, unit: 'Hour' },
    { name: 'large', tokens: 5000000, unit: 'Day', requestsPerMinute: 60 },
  ],
};
const context: GatewayContext = {
  baseDomain: 'example.com',
  jwt: { issuer: 'https://id.example.com/realms/nebari', audiences: ['nebari-llm'] },
  apiKeyClientIDs: ['llama-bob-2', 'llama-alice-1', 'llama-carol-3'],
  quotas,
  apiKeyTiers: { 'llama-bob-2': 'large', 'llama-carol-3': 'retired-tier' },
};
const tokenCost = { request: { from: 'Number', number: 0 }, response: { from: 'Metadata', metadata: { namespace: 'io.envoy.ai_gateway', key: 'llm_quota_tokens' } } };
const selector = (id: string) => [{ headers: [{ name: 'x-llm-client-id', type: 'Exact', value: id, invert: false }] }];

describe('per-key token quotas on', () => {
  const { objects, deletions, errors } = desiredGatewayObjects(llmModel('llama'), context);
  const byName = (name: string) => objects.find((o) => o.metadata.name === name)!;

  test('the quota policy comes after the external auth policy and before the external route; nothing of it is deleted', () => {
    expect(errors).toEqual([]);
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'InferencePool/llama',
      'SecurityPolicy/llama-external-auth',
      'BackendTrafficPolicy/llama-external-quota',
      'AIGatewayRoute/llama-external',
      'SecurityPolicy/llama-internal-auth',
      'AIGatewayRoute/llama-internal',
    ]);
    // The internal endpoint has no quotas and no retries: a policy left from before would go.
    expect(deletions.map((d) => `${d.action} ${d.object.kind}/${d.object.name}`)).toEqual(['delete BackendTrafficPolicy/llama-internal-traffic']);
  });

  test('only the external route writes the token count to metadata', () => {
    expect((byName('llama-external').spec as { llmRequestCosts?: unknown }).llmRequestCosts).toEqual([{ metadataKey: 'llm_quota_tokens', type: 'OutputToken' }]);
    expect(byName('llama-internal').spec).not.toHaveProperty('llmRequestCosts');
  });

  test('one Global rule per key with its tier (a missing or retired tier is the default), plus a per-minute rule where the tier has one', () => {
    const policy = byName('llama-external-quota');
    expect(policy.metadata.labels['llm.nebari.dev/endpoint']).toBe('external');
    expect(policy.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'LLMModel', name: 'llama', controller: true });
    expect(policy.spec).toEqual({
      targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'llama-external' }],
      rateLimit: {
        global: {
          rules: [
            { clientSelectors: selector('llama-alice-1'), limit: { requests: 100000, unit: 'Hour' }, cost: tokenCost },
            { clientSelectors: selector('llama-bob-2'), limit: { requests: 5000000, unit: 'Day' }, cost: tokenCost },
            { clientSelectors: selector('llama-bob-2'), limit: { requests: 60, unit: 'Minute' } },
            { clientSelectors: selector('llama-carol-3'), limit: { requests: 100000, unit: 'Hour' }, cost: tokenCost },
          ],
        },
      },
    });
  });

  test('with no keys yet there is nothing to limit: no policy, and an old one is deleted', () => {
    const { objects: none, deletions: steps } = desiredGatewayObjects(llmModel('llama'), { ...context, apiKeyClientIDs: [] });
    expect(none.map((o) => o.kind)).not.toContain('BackendTrafficPolicy');
    expect(steps.map((d) => `${d.action} ${d.object.kind}/${d.object.name}`)).toEqual(['delete BackendTrafficPolicy/llama-external-quota', 'delete BackendTrafficPolicy/llama-internal-traffic']);
  });

  test('with the external endpoint disabled, no costs and no policy (it is deleted)', () => {
    const { objects: internalOnly, deletions: steps } = desiredGatewayObjects(llmModel('llama', { endpoints: { external: { enabled: false } } }), context);
    expect(internalOnly.map((o) => o.kind)).not.toContain('BackendTrafficPolicy');
    expect(internalOnly.some((o) => 'llmRequestCosts' in o.spec)).toBe(false);
    expect(steps[0].object).toMatchObject({ kind: 'BackendTrafficPolicy', name: 'llama-external-quota' });
  });

  test(`more keys than ${MAX_RATE_LIMIT_RULES} rules hold fail the translation with the fix, instead of a policy the API server would refuse`, () => {
    const many = Array.from({ length: 129 }, (_, i) => `llama-user-${i}`);
    const tiers = Object.fromEntries(many.map((id) => [id, 'large']));
    const { objects: none, errors: problems } = desiredGatewayObjects(llmModel('llama'), { ...context, apiKeyClientIDs: many, apiKeyTiers: tiers });
    expect(none).toEqual([]);
    expect(problems.map((e) => e.message)).toEqual([
      'quotas: 129 API keys need 258 rate-limit rules, more than the 256 one BackendTrafficPolicy holds; revoke keys of this model, drop requestsPerMinute from the quota tiers, or turn quotas off (quotas.rateLimitBackend: "")',
    ]);
    // 256 standard keys (one rule each) still fit.
    const fit = Array.from({ length: 256 }, (_, i) => `llama-user-${i}`);
    expect(desiredGatewayObjects(llmModel('llama'), { ...context, apiKeyClientIDs: fit, apiKeyTiers: {} }).errors).toEqual([]);
  });
});

describe('per-key token quotas off', () => {
  test('no costs and no policy are rendered, and a policy left from before is deleted', () => {
    const { objects, deletions } = desiredGatewayObjects(llmModel('llama'), { ...context, quotas: undefined });
    expect(objects.map((o) => o.kind)).not.toContain('BackendTrafficPolicy');
    expect(objects.some((o) => 'llmRequestCosts' in o.spec)).toBe(false);
    expect(deletions).toEqual(
      ['llama-external-quota', 'llama-internal-traffic'].map((name) => ({
        action: 'delete',
        object: { apiVersion: 'gateway.envoyproxy.io/v1alpha1', kind: 'BackendTrafficPolicy', namespace: 'models', name },
        reason: 'no retries, fallback or quotas to enforce',
      })),
    );
  });
});

describe('quota settings are checked, naming the chart value', () => {
  test.each([
    ['a default tier that is not listed', { ...quotas, defaultTier: 'gold' }, 'quotas.defaultTier: "gold" is not one of quotas.tiers (standard, large); set it to one of them'],
    ['no tiers', { ...quotas, tiers: [] }, 'quotas.tiers: is empty; list at least one tier, e.g. {name: standard, tokens: 1000000, unit: Day}'],
    ['a tier listed twice', { ...quotas, tiers: [quotas.tiers[0], quotas.tiers[0]] }, 'quotas.tiers: tier "standard" is listed twice; give each tier its own name'],
    ['zero tokens', { ...quotas, tiers: [{ name: 'standard', tokens: 0, unit: 'Hour' as const }] }, 'quotas.tiers[0].tokens: 0 is not a positive whole number of tokens'],
    ['an unknown unit', { ...quotas, tiers: [{ name: 'standard', tokens: 1, unit: 'Week' as never }] }, 'quotas.tiers[0].unit: "Week" is not one of Second, Minute, Hour, Day, Month'],
    ['tier groups that are not a list of names', { ...quotas, tiers: [{ name: 'standard', tokens: 1, unit: 'Hour' as const, groups: 'batch' as never }] }, 'quotas.tiers[0].groups: "batch" is not a list of group names; list the groups allowed to mint keys in the tier, or leave it empty for everyone'],
    ['an unknown cost type', { ...quotas, costType: 'Words' as never }, 'quotas.costType: "Words" is not a token count; use one of TotalToken, OutputToken, InputToken, CachedInputToken, CacheCreationInputToken, ReasoningToken'],
  ])('%s', (_what, settings, message) => {
    expect(quotaSettingsErrors(settings).map((e) => e.message)).toEqual([message]);
    expect(desiredGatewayObjects(llmModel('llama'), { ...context, quotas: settings }).errors.map((e) => e.message)).toContain(message);
  });
});

test('a tier restricted to groups renders the same budget as one without', () => {
  const restricted = { ...quotas, tiers: quotas.tiers.map((t) => ({ ...t, groups: ['batch'] })) };
  expect(quotaSettingsErrors(restricted)).toEqual([]);
});

describe('key tiers from the key metadata records', () => {
  test('reads the tier of each record; records without one, damaged or with a non-string tier give none', () => {
    expect(
      keyTiersFromMetadata({
        a: JSON.stringify({ clientId: 'a', createdBy: 'alice', createdAt: '2026-01-01T00:00:00Z', tier: 'large' }),
        b: JSON.stringify({ clientId: 'b', createdBy: 'bob', createdAt: '2026-01-01T00:00:00Z' }),
        c: '{not json',
        d: JSON.stringify({ tier: 7 }),
        e: JSON.stringify({ tier: '' }),
      }),
    ).toEqual({ a: 'large' });
    expect(keyTiersFromMetadata(undefined)).toEqual({});
  });
});
