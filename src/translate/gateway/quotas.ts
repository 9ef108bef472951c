// Per-key token quotas on the external endpoint (opt-in, chart values `quotas.*`). The AI Gateway
// writes each response's token count to dynamic metadata (the route's `llmRequestCosts`); a Global
// BackendTrafficPolicy on the generated HTTPRoute (traffic-policy.ts) charges that count to the caller's key, one rule
// per key selected by the client-ID header the external SecurityPolicy forwards, with the limit of
// the key's tier. Limits are approximate: the cost is charged after the response, so concurrent
// requests of one key can overshoot (envoyproxy/ai-gateway#680). Rendered only when the settings
// exist: a Global policy without a rate-limit backend in Envoy Gateway is Invalid.
import type { ResolvedGatewayContext } from './context';
import { failed, ok, Result, translationError } from './errors';
import { LLMRequestCost, RateLimitRule } from './objects';
import { AI_GATEWAY_METADATA_NAMESPACE, MAX_RATE_LIMIT_RULES, QUOTA_METADATA_KEY, QuotaSettings } from './quota-settings';

/** The route's cost entry: the token count quotas charge, under our metadata key. */
export function quotaRequestCosts(settings: QuotaSettings): LLMRequestCost[] {
  return [{ metadataKey: QUOTA_METADATA_KEY, type: settings.costType }];
}

/**
 * The tier a key is limited by: its recorded tier if it still exists, else the default (else the
 * first). Generic over the tier's shape: the portal's usage page picks the same tier from its list.
 */
export function tierOfKey<T extends { readonly name: string }>(tiers: readonly T[], defaultTier: string, recordedTier: string | undefined): T {
  return tiers.find((t) => t.name === recordedTier) ?? tiers.find((t) => t.name === defaultTier) ?? tiers[0];
}

/**
 * The global rate-limit rules limiting each key of the model on the external endpoint (they go
 * into the endpoint's BackendTrafficPolicy, traffic-policy.ts): per key a token rule (request
 * cost 0, response cost = the token count) and, when its tier says so, a requests-per-minute rule
 * (cost 1 per request). Fails when the rules would not fit one policy.
 */
export function quotaRules(context: ResolvedGatewayContext, settings: QuotaSettings): Result<RateLimitRule[]> {
  const clientIDs = [...new Set(context.apiKeyClientIDs)].sort();
  // invert is written though it is the CRD default, so the stored policy equals the applied one.
  const selector = (clientID: string) => [{ headers: [{ name: context.clientIDHeader, type: 'Exact' as const, value: clientID, invert: false }] }];
  const rules: RateLimitRule[] = clientIDs.flatMap((clientID) => {
    const tier = tierOfKey(settings.tiers, settings.defaultTier, context.apiKeyTiers[clientID]);
    const tokenRule: RateLimitRule = {
      clientSelectors: selector(clientID),
      limit: { requests: tier.tokens, unit: tier.unit },
      cost: {
        request: { from: 'Number', number: 0 },
        response: { from: 'Metadata', metadata: { namespace: AI_GATEWAY_METADATA_NAMESPACE, key: QUOTA_METADATA_KEY } },
      },
    };
    return tier.requestsPerMinute ? [tokenRule, { clientSelectors: selector(clientID), limit: { requests: tier.requestsPerMinute, unit: 'Minute' } }] : [tokenRule];
  });
  if (rules.length > MAX_RATE_LIMIT_RULES) {
    return failed(
      translationError(
        'quotas',
        `${clientIDs.length} API keys need ${rules.length} rate-limit rules, more than the ${MAX_RATE_LIMIT_RULES} one BackendTrafficPolicy holds; revoke keys of this model, drop requestsPerMinute from the quota tiers, or turn quotas off (quotas.rateLimitBackend: "")`,
      ),
    );
  }
  return ok(rules);
}
