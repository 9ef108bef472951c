// Usage: tokens by API key, owner, groups, tier and model object, from the extproc's token counts
// labelled with `client_id` joined with the operator's `nls_api_key_info` (docs/observability.md,
// "Who owns a client ID"). Tokens of requests without a key (the internal endpoint) carry no
// client_id and do not appear here. The spend panels read the recording rules of the price table
// (chart value `pricing.models`); without prices they stay empty.
import { type DashboardSpec, labelVariable } from './builder';

/** The key records, filtered by the dashboard's variables; `max by` because only the leader exports them. */
const KEYS = 'max by (client_id, owner, groups, tier, model) (nls_api_key_info{owner=~"$owner", model=~"$model", tier=~"$tier"})';
const TOKENS = 'gen_ai_client_token_usage_sum{gen_ai_token_type=~"$token_type"}';
/** Token counts of `over` (a rate or an increase) joined with the owner, groups, tier and model of their key. */
const byKey = (over: string, by: string) =>
  `sum by (${by}) (${over}(${TOKENS}[$__rate_interval]) * on (client_id) group_left (owner, groups, tier, model) ${KEYS})`;
const RANGE = `sum by (owner, model) (increase(${TOKENS}[$__range]) * on (client_id) group_left (owner, model) ${KEYS})`;
/** Spend per proxy and key (docs/observability.md, "Spend"): it resets with its own proxy, so `increase` and `rate` over it hold. */
const SPEND = 'nls:api_key_spend_by_proxy{owner=~"$owner", model=~"$model", tier=~"$tier"}';

export const USAGE: DashboardSpec = {
  uid: 'nls-usage',
  id: 'usage',
  title: 'LLM usage by key, user and model',
  description: 'Tokens counted by the gateway per API key, joined with the key records the operator exports (owner, groups, tier, model).',
  variables: [
    labelVariable('owner', 'owner', 'nls_api_key_info', 'Owner'),
    labelVariable('model', 'model', 'nls_api_key_info', 'Model'),
    labelVariable('tier', 'tier', 'nls_api_key_info', 'Tier'),
    labelVariable('token_type', 'gen_ai_token_type', 'gen_ai_client_token_usage_sum', 'Token type'),
  ],
  panels: [
    { title: 'Tokens per second by key', description: 'Per API key (client ID) and its owner.', unit: 'short', queries: [{ expr: byKey('rate', 'client_id, owner') }] },
    { title: 'Tokens per second by owner', description: 'The user each key was minted for.', unit: 'short', queries: [{ expr: byKey('rate', 'owner') }] },
    { title: 'Tokens per second by groups', description: 'The groups that granted each key when it was minted (sorted, comma-separated).', unit: 'short', queries: [{ expr: byKey('rate', 'groups') }] },
    { title: 'Tokens per second by tier', description: 'The quota tier of each key.', unit: 'short', queries: [{ expr: byKey('rate', 'tier') }] },
    { title: 'Tokens per second by model', description: 'Per model object (LLMModel or PassthroughModel) the keys belong to.', unit: 'short', queries: [{ expr: byKey('rate', 'model') }] },
    {
      title: 'Tokens in the time range by owner and model',
      description: 'Tokens counted over the dashboard\'s time range.',
      unit: 'short',
      type: 'stat',
      queries: [{ expr: RANGE }],
    },
    {
      title: 'Spend in the time range by owner and model',
      description: 'Tokens times the price table (chart value pricing.models), in its currency; empty without prices.',
      unit: 'short',
      type: 'stat',
      queries: [{ expr: `sum by (owner, model, currency) (increase(${SPEND}[$__range]))` }],
    },
    {
      title: 'Spend per hour by model',
      description: 'The rate of spend of each priced model object, per hour, in the price table\'s currency.',
      unit: 'short',
      queries: [{ expr: `sum by (model, currency) (rate(${SPEND}[$__rate_interval])) * 3600` }],
    },
    {
      title: 'Live keys by owner and tier',
      description: 'API keys that are neither revoked nor expired.',
      unit: 'short',
      type: 'stat',
      queries: [{ expr: `count by (owner, tier) (${KEYS})` }],
    },
  ],
};
