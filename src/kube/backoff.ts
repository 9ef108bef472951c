// Capped exponential backoff with jitter, for requests and watches that the API server could not
// answer. Jitter matters because failures are correlated: an API server restart drops every
// client at once, and without it they would all come back in the same instant, again and again.

export interface BackoffPolicy {
  /** Ceiling of the first delay. */
  baseDelayMs: number;
  /** Ceiling of every delay. */
  maxDelayMs: number;
}

/**
 * The delay before retry `attempt` (1 for the first retry): a ceiling of base·2^(attempt−1),
 * capped at maxDelayMs, scaled by a random factor in [0.5, 1]. Every delay is thus at least half
 * its ceiling (so attempts stay few) and never more than the cap.
 */
export function jitteredBackoff(attempt: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(Math.max(attempt, 1) - 1, 30));
  return Math.round(ceiling * (0.5 + random() * 0.5));
}
