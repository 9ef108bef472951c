// The portal's configuration, from environment variables (the chart sets them). Every error names
// the variable and what a valid value looks like, so a misconfigured Deployment says why it fails.
import { KeyLimits, keyLimitsFromEnv } from '../translate/keys/limits';
import { QUOTA_COST_TYPES, QUOTA_UNITS, type QuotaCostType, type QuotaUnit } from '../translate/gateway/quota-settings';

export interface QuotaTier {
  readonly name: string;
  readonly description?: string;
  /** Only members of one of these groups may mint keys in the tier; absent or empty: everyone. */
  readonly groups?: readonly string[];
  /** The tier's token limit per `unit` (for the usage page's share); absent from an older chart's list. */
  readonly tokens?: number;
  readonly unit?: QuotaUnit;
}

export interface PortalConfig {
  /** Namespace of the models, their key objects, the audit log and the portal's own Secrets and Lease. */
  readonly namespace: string;
  /** Public base URL without a trailing slash; the only Origin allowed to change state. */
  readonly url: string;
  readonly redirectUri: string;
  readonly issuer: string;
  readonly clientId: string;
  /** Empty for a public client (PKCE only). */
  readonly clientSecret: string;
  readonly groupsClaim: string;
  readonly scopes: string;
  readonly caFile?: string;
  readonly adminGroups: readonly string[];
  readonly keyExpiryDefaultDays: number;
  readonly keyExpiryMaxDays: number;
  /** Per-user limits on minting (chart values `portal.keyLimits.*`). */
  readonly keyLimits: KeyLimits;
  readonly externalEndpoint?: string;
  /** The Prometheus the usage page reads (chart value `portal.prometheusURL`); undefined: usage is not shown. */
  readonly prometheusUrl?: string;
  /** Undefined when quotas are off. */
  readonly quotaTiers?: { readonly default: string; readonly tiers: readonly QuotaTier[]; /** What the quotas charge (chart value `quotas.costType`). */ readonly costType?: QuotaCostType };
  readonly groupRefreshSeconds: number;
  /** How long a user's group refresh may keep failing (not refused) before their keys are revoked. */
  readonly groupRefreshFailClosedSeconds: number;
  /** Prometheus `/metrics`, on its own port (not routed by the HTTPRoute); 0 picks a free port (tests). */
  readonly metricsPort: number;
  readonly sessionSecretName: string;
  /**
   * The Role, kept by the operator, naming the Secrets the portal may read (NLS_PORTAL_SECRETS_ROLE,
   * set by the chart): the group refresh walks the user Secrets it names. Unset (the portal run
   * outside the chart, with rights on Secrets by kind): they are listed.
   */
  readonly secretsRole?: string;
  readonly podName: string;
  readonly podNamespace: string;
  readonly port: number;
  readonly bindAddress: string;
}

export class PortalConfigError extends Error {}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** True for URLs on this machine's loopback, the only place plain http is accepted (tests, local runs). */
export function isLoopbackUrl(url: URL): boolean {
  return LOOPBACK_HOSTS.has(url.hostname);
}

function required(env: NodeJS.ProcessEnv, name: string, example: string): string {
  const v = env[name]?.trim();
  if (!v) throw new PortalConfigError(`${name} is not set; set it to ${example}`);
  return v;
}

function baseUrl(env: NodeJS.ProcessEnv, name: string, example: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new PortalConfigError(`${name}: "${value}" is not a URL; set it to ${example}`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackUrl(url))) {
    throw new PortalConfigError(`${name}: "${value}" must use https (plain http only on localhost/127.0.0.1, for local tests)`);
  }
  if (url.search || url.hash || url.username) throw new PortalConfigError(`${name}: "${value}" must not have a query, fragment or credentials; set it to ${example}`);
  return url.toString().replace(/\/+$/, '');
}

/** An http(s) URL without query, fragment or credentials (an in-cluster Prometheus usually speaks plain http). */
function prometheusUrl(env: NodeJS.ProcessEnv): string | undefined {
  const name = 'NLS_PORTAL_PROMETHEUS_URL';
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  const example = 'the Prometheus that scrapes the gateway proxies and the operator, e.g. http://prometheus-operated.monitoring:9090';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new PortalConfigError(`${name}: "${raw}" is not a URL; set it to ${example}`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash || url.username || url.password) {
    throw new PortalConfigError(`${name}: "${raw}" must be an http(s) URL without query, fragment or credentials; set it to ${example}`);
  }
  return url.toString().replace(/\/+$/, '');
}

function positiveInt(env: NodeJS.ProcessEnv, name: string, fallback: number, max = 100_000, min = 1): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) throw new PortalConfigError(`${name}: "${raw}" is not a whole number between ${min} and ${max}`);
  return Number(raw);
}

function quotaTiers(env: NodeJS.ProcessEnv): PortalConfig['quotaTiers'] {
  const name = 'NLS_PORTAL_QUOTA_TIERS';
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  const example = `JSON like {"costType":"TotalToken","default":"standard","tiers":[{"name":"standard","description":"100k tokens/hour","tokens":100000,"unit":"Hour"}]}, or empty to turn quotas off`;
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    throw new PortalConfigError(`${name} is not valid JSON; set it to ${example}`);
  }
  const o = v as { default?: unknown; tiers?: unknown };
  if (!o || typeof o !== 'object' || !Array.isArray(o.tiers) || o.tiers.length === 0) throw new PortalConfigError(`${name}.tiers must be a non-empty list; set ${name} to ${example}`);
  const tiers = o.tiers.map((t: unknown, i: number) => {
    const tier = t as { name?: unknown; description?: unknown; groups?: unknown; tokens?: unknown; unit?: unknown };
    if (!tier || typeof tier.name !== 'string' || !/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(tier.name)) {
      throw new PortalConfigError(`${name}.tiers[${i}].name must be a lower-case DNS label (a-z, 0-9, -)`);
    }
    if (tier.description !== undefined && typeof tier.description !== 'string') throw new PortalConfigError(`${name}.tiers[${i}].description must be a string`);
    if (tier.groups !== undefined && tier.groups !== null && (!Array.isArray(tier.groups) || tier.groups.some((g) => typeof g !== 'string' || g === ''))) {
      throw new PortalConfigError(`${name}.tiers[${i}].groups must be a list of group names (empty: every user may pick the tier)`);
    }
    if (tier.tokens !== undefined && (!Number.isInteger(tier.tokens) || (tier.tokens as number) < 1)) throw new PortalConfigError(`${name}.tiers[${i}].tokens must be a positive whole number (the tier's limit per unit)`);
    if (tier.unit !== undefined && !(QUOTA_UNITS as readonly unknown[]).includes(tier.unit)) throw new PortalConfigError(`${name}.tiers[${i}].unit must be one of ${QUOTA_UNITS.join(', ')}`);
    const groups = (tier.groups ?? []) as string[];
    const limit = tier.tokens !== undefined && tier.unit !== undefined ? { tokens: tier.tokens as number, unit: tier.unit as QuotaUnit } : {};
    return { name: tier.name, ...(tier.description ? { description: tier.description } : {}), ...(groups.length > 0 ? { groups } : {}), ...limit };
  });
  const costType = (o as { costType?: unknown }).costType;
  if (costType !== undefined && !(QUOTA_COST_TYPES as readonly unknown[]).includes(costType)) throw new PortalConfigError(`${name}.costType must be one of ${QUOTA_COST_TYPES.join(', ')}`);
  if (typeof o.default !== 'string' || !tiers.some((t) => t.name === o.default)) {
    throw new PortalConfigError(`${name}.default must name one of the tiers (${tiers.map((t) => t.name).join(', ')})`);
  }
  return { default: o.default, tiers, ...(costType ? { costType: costType as QuotaCostType } : {}) };
}

export function portalConfigFromEnv(env: NodeJS.ProcessEnv = process.env): PortalConfig {
  const namespace = required(env, 'NLS_PORTAL_NAMESPACE', 'the namespace of the models (the release namespace)');
  const url = baseUrl(env, 'NLS_PORTAL_URL', 'the portal\'s public URL, e.g. https://keys.example.com', required(env, 'NLS_PORTAL_URL', 'the portal\'s public URL, e.g. https://keys.example.com'));
  const issuer = baseUrl(env, 'NLS_PORTAL_OIDC_ISSUER', 'the OIDC issuer URL, e.g. https://keycloak.example.com/realms/nebari', required(env, 'NLS_PORTAL_OIDC_ISSUER', 'the OIDC issuer URL'));
  const keyExpiryDefaultDays = positiveInt(env, 'NLS_PORTAL_KEY_EXPIRY_DEFAULT_DAYS', 30, 3650);
  const keyExpiryMaxDays = positiveInt(env, 'NLS_PORTAL_KEY_EXPIRY_MAX_DAYS', 90, 3650);
  if (keyExpiryDefaultDays > keyExpiryMaxDays) {
    throw new PortalConfigError(`NLS_PORTAL_KEY_EXPIRY_DEFAULT_DAYS (${keyExpiryDefaultDays}) is larger than NLS_PORTAL_KEY_EXPIRY_MAX_DAYS (${keyExpiryMaxDays}); lower the default or raise the maximum`);
  }
  let keyLimits: KeyLimits;
  try {
    keyLimits = keyLimitsFromEnv(env);
  } catch (err) {
    throw new PortalConfigError((err as Error).message);
  }
  const groupRefreshSeconds = positiveInt(env, 'NLS_PORTAL_GROUP_REFRESH_SECONDS', 300, 86_400);
  const groupRefreshFailClosedSeconds = positiveInt(env, 'NLS_PORTAL_GROUP_REFRESH_FAIL_CLOSED_SECONDS', 86_400, 30 * 86_400);
  if (groupRefreshFailClosedSeconds < 2 * groupRefreshSeconds) {
    throw new PortalConfigError(
      `NLS_PORTAL_GROUP_REFRESH_FAIL_CLOSED_SECONDS (${groupRefreshFailClosedSeconds}) is shorter than two group refresh rounds (NLS_PORTAL_GROUP_REFRESH_SECONDS ${groupRefreshSeconds}); raise it so one failed round does not revoke everyone's keys`,
    );
  }
  const external = env.NLS_PORTAL_EXTERNAL_ENDPOINT?.trim();
  const scopes = env.NLS_PORTAL_OIDC_SCOPES?.trim() || 'openid profile email offline_access';
  if (!scopes.split(/\s+/).includes('openid')) throw new PortalConfigError(`NLS_PORTAL_OIDC_SCOPES: "${scopes}" must include openid`);
  return {
    namespace,
    url,
    redirectUri: `${url}/auth/callback`,
    issuer,
    clientId: required(env, 'NLS_PORTAL_OIDC_CLIENT_ID', 'the OIDC client ID registered for the portal'),
    clientSecret: env.NLS_PORTAL_OIDC_CLIENT_SECRET?.trim() ?? '',
    groupsClaim: env.NLS_PORTAL_OIDC_GROUPS_CLAIM?.trim() || 'groups',
    scopes,
    ...(env.NLS_PORTAL_OIDC_CA_FILE?.trim() ? { caFile: env.NLS_PORTAL_OIDC_CA_FILE.trim() } : {}),
    adminGroups: (env.NLS_PORTAL_ADMIN_GROUPS ?? '').split(',').map((g) => g.trim()).filter(Boolean),
    keyExpiryDefaultDays,
    keyExpiryMaxDays,
    keyLimits,
    ...(external ? { externalEndpoint: baseUrl(env, 'NLS_PORTAL_EXTERNAL_ENDPOINT', 'the external model endpoint, e.g. https://llm.example.com', external) } : {}),
    ...(quotaTiers(env) ? { quotaTiers: quotaTiers(env) } : {}),
    ...(prometheusUrl(env) ? { prometheusUrl: prometheusUrl(env) } : {}),
    groupRefreshSeconds,
    groupRefreshFailClosedSeconds,
    metricsPort: positiveInt(env, 'NLS_PORTAL_METRICS_PORT', 9090, 65_535, 0),
    sessionSecretName: env.NLS_PORTAL_SESSION_SECRET?.trim() || 'nls-portal-session',
    ...(env.NLS_PORTAL_SECRETS_ROLE?.trim() ? { secretsRole: env.NLS_PORTAL_SECRETS_ROLE.trim() } : {}),
    podName: env.POD_NAME?.trim() || `portal-${process.pid}`,
    podNamespace: env.POD_NAMESPACE?.trim() || namespace,
    // 0 picks a free port (tests).
    port: positiveInt(env, 'NLS_PORTAL_PORT', 8080, 65_535, 0),
    bindAddress: env.NLS_PORTAL_BIND_ADDRESS?.trim() || '0.0.0.0',
  };
}
