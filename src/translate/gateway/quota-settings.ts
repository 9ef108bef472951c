// Settings of the per-key token quotas (chart values `quotas.*`, NLS_QUOTAS for the operator) and
// each key's tier from its metadata record; the objects they produce are in quotas.ts.
import { translationError, TranslationError } from './errors';
import { parseApiKeyRecord } from '../keys/api-keys';

export const QUOTA_UNITS = ['Second', 'Minute', 'Hour', 'Day', 'Month'] as const;
export type QuotaUnit = (typeof QUOTA_UNITS)[number];
export const QUOTA_COST_TYPES = ['TotalToken', 'OutputToken', 'InputToken', 'CachedInputToken', 'CacheCreationInputToken', 'ReasoningToken'] as const;
export type QuotaCostType = (typeof QUOTA_COST_TYPES)[number];

/** One budget a key can be given (chart value `quotas.tiers[]`). */
export interface QuotaTier {
  readonly name: string;
  /** Tokens one key may use per `unit`. */
  readonly tokens: number;
  readonly unit: QuotaUnit;
  /** Also limit requests per minute per key. @default none */
  readonly requestsPerMinute?: number;
  /**
   * Only members of one of these groups may mint keys in the tier (the portal checks it at mint;
   * the budget itself does not depend on it). Absent or empty: everyone. @default none
   */
  readonly groups?: readonly string[];
}

/** Quota settings; their presence turns quotas on (the chart passes them only with a rate-limit backend). */
export interface QuotaSettings {
  /** The token count charged (AIGatewayRoute `llmRequestCosts[].type`). */
  readonly costType: QuotaCostType;
  /** Tier of keys that name none or a tier that no longer exists. */
  readonly defaultTier: string;
  readonly tiers: readonly QuotaTier[];
}

/** Dynamic-metadata namespace the AI Gateway writes token counts to. */
export const AI_GATEWAY_METADATA_NAMESPACE = 'io.envoy.ai_gateway';
/** The metadata key our cost is written under (any name; the route and the policy must agree). */
export const QUOTA_METADATA_KEY = 'llm_quota_tokens';
/** Envoy Gateway accepts at most 256 global rate-limit rules per BackendTrafficPolicy. */
export const MAX_RATE_LIMIT_RULES = 256;

/** Problems in the settings, naming the chart value (the operator gets them as NLS_QUOTAS). */
export function quotaSettingsErrors(settings: QuotaSettings): TranslationError[] {
  const errors: TranslationError[] = [];
  const names = settings.tiers.map((t) => t.name);
  if (names.length === 0) errors.push(translationError('quotas.tiers', 'is empty; list at least one tier, e.g. {name: standard, tokens: 1000000, unit: Day}'));
  for (const dup of new Set(names.filter((n, i) => names.indexOf(n) !== i))) errors.push(translationError('quotas.tiers', `tier ${JSON.stringify(dup)} is listed twice; give each tier its own name`));
  if (names.length > 0 && !names.includes(settings.defaultTier)) {
    errors.push(translationError('quotas.defaultTier', `${JSON.stringify(settings.defaultTier)} is not one of quotas.tiers (${names.join(', ')}); set it to one of them`));
  }
  if (!(QUOTA_COST_TYPES as readonly string[]).includes(settings.costType)) {
    errors.push(translationError('quotas.costType', `${JSON.stringify(settings.costType)} is not a token count; use one of ${QUOTA_COST_TYPES.join(', ')}`));
  }
  settings.tiers.forEach((t, i) => {
    if (!Number.isInteger(t.tokens) || t.tokens < 1) errors.push(translationError(`quotas.tiers[${i}].tokens`, `${JSON.stringify(t.tokens)} is not a positive whole number of tokens`));
    if (!(QUOTA_UNITS as readonly string[]).includes(t.unit)) errors.push(translationError(`quotas.tiers[${i}].unit`, `${JSON.stringify(t.unit)} is not one of ${QUOTA_UNITS.join(', ')}`));
    if (t.requestsPerMinute !== undefined && (!Number.isInteger(t.requestsPerMinute) || t.requestsPerMinute < 1)) {
      errors.push(translationError(`quotas.tiers[${i}].requestsPerMinute`, `${JSON.stringify(t.requestsPerMinute)} is not a positive whole number`));
    }
    if (t.groups !== undefined && t.groups !== null && (!Array.isArray(t.groups) || t.groups.some((g) => typeof g !== 'string' || g === ''))) {
      errors.push(translationError(`quotas.tiers[${i}].groups`, `${JSON.stringify(t.groups)} is not a list of group names; list the groups allowed to mint keys in the tier, or leave it empty for everyone`));
    }
  });
  return errors;
}

/**
 * Each key's tier from the metadata ConfigMap's data (client ID → key record). A damaged or
 * tier-less record means the default tier.
 */
export function keyTiersFromMetadata(metadata: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const tiers: Record<string, string> = {};
  for (const [clientId, json] of Object.entries(metadata ?? {})) {
    const { tier } = parseApiKeyRecord(clientId, json);
    if (tier) tiers[clientId] = tier;
  }
  return tiers;
}

/**
 * Per-key token quota settings from NLS_QUOTAS (JSON `{costType, defaultTier, tiers}`; the chart
 * sets it only while `quotas.rateLimitBackend` names a backend). Unset or empty means quotas off.
 * The translation checks the settings themselves (errors name the `quotas.*` chart value).
 */
export function quotaSettingsFromEnv(env: NodeJS.ProcessEnv): QuotaSettings | undefined {
  const raw = env.NLS_QUOTAS;
  if (!raw) return undefined;
  let parsed: Partial<QuotaSettings>;
  try {
    parsed = JSON.parse(raw) as Partial<QuotaSettings>;
  } catch (err) {
    throw new Error(`NLS_QUOTAS: not valid JSON (${(err as Error).message}); set the chart values quotas.* (the chart writes this variable) or unset it to turn quotas off`);
  }
  if (!parsed || typeof parsed !== 'object' || !Array.isArray(parsed.tiers) || typeof parsed.defaultTier !== 'string' || typeof parsed.costType !== 'string') {
    throw new Error('NLS_QUOTAS: expected {"costType": "...", "defaultTier": "...", "tiers": [...]}; set the chart values quotas.costType, quotas.defaultTier and quotas.tiers');
  }
  return { costType: parsed.costType, defaultTier: parsed.defaultTier, tiers: parsed.tiers };
}
