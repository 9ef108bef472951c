// A key's share of its quota tier, as the rate limiter counts it (docs/key-quotas.md): which of the
// gateway's token types the quota charges, and where the tier's current window began. Envoy's
// ratelimit service keeps one counter per key and window, the window being the Unix time rounded
// down to a whole number of units (a Day starts at midnight UTC, an Hour on the hour); its Month
// is 30 days, counted from the Unix epoch, not a calendar month.
import type { QuotaCostType, QuotaUnit } from '../translate/gateway/quota-settings';

/** Length of each tier unit in seconds, as the ratelimit service divides time. */
export const QUOTA_UNIT_SECONDS: Record<QuotaUnit, number> = { Second: 1, Minute: 60, Hour: 3600, Day: 86_400, Month: 30 * 86_400 };

/**
 * The extproc's `gen_ai_token_type`s whose sum is what the route's `llmRequestCosts` charge for a
 * cost type. The extproc exports no total: the provider's total is input plus output (the input
 * count already holds cached and cache-creation input).
 */
export const QUOTA_TOKEN_TYPES: Record<QuotaCostType, readonly string[]> = {
  TotalToken: ['input', 'output'],
  InputToken: ['input'],
  OutputToken: ['output'],
  CachedInputToken: ['cached_input'],
  CacheCreationInputToken: ['cache_creation_input'],
  ReasoningToken: ['reasoning'],
};

/** Start of the tier's window that holds `now`. */
export function quotaWindowStart(unit: QuotaUnit, now: Date): Date {
  const ms = QUOTA_UNIT_SECONDS[unit] * 1000;
  return new Date(Math.floor(now.getTime() / ms) * ms);
}

/** From the window's start up to `now` as a PromQL range in whole seconds (at least one). */
export function quotaWindowRange(unit: QuotaUnit, now: Date): string {
  return `${Math.max(1, Math.ceil((now.getTime() - quotaWindowStart(unit, now).getTime()) / 1000))}s`;
}

/** The tokens a quota of this cost type charges, from tokens by type. */
export function quotaTokens(tokens: Readonly<Record<string, number>>, costType: QuotaCostType): number {
  return QUOTA_TOKEN_TYPES[costType].reduce((sum, type) => sum + (tokens[type] ?? 0), 0);
}

/** A key's use of its tier in the current window. */
export interface QuotaShare {
  readonly tier: string;
  /** The tier's limit per window. */
  readonly limit: number;
  readonly unit: QuotaUnit;
  /** Start of the current window (ISO 8601, UTC). */
  readonly windowStart: string;
  /** Tokens charged in the window so far, by the gateway's count. */
  readonly used: number;
  /** `used / limit` (1 is the whole budget; above 1 when concurrent answers overshot it). */
  readonly share: number;
  /**
   * Whether the gateway charges these tokens against the tier: not for PassthroughModel keys,
   * whose token counter Envoy never charges (docs/key-quotas.md, "Limits of the mechanism").
   */
  readonly enforced: boolean;
}

export function quotaShare(tier: { name: string; tokens: number; unit: QuotaUnit }, used: number, now: Date, enforced: boolean): QuotaShare {
  return { tier: tier.name, limit: tier.tokens, unit: tier.unit, windowStart: quotaWindowStart(tier.unit, now).toISOString(), used, share: used / tier.tokens, enforced };
}
