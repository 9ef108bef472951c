import { gatewayContextFromEnv, operatorConfigFromEnv, quotaSettingsFromEnv } from '../../../src/operator/config';

describe('operator configuration from the environment', () => {
  it('applies the process contract defaults', () => {
    const c = operatorConfigFromEnv({ NLS_BASE_DOMAIN: 'example.com', POD_NAMESPACE: 'sys', POD_NAME: 'op-0' });
    expect(c).toMatchObject({ podNamespace: 'sys', podName: 'op-0', metricsPort: 8080, healthPort: 8081, leaderElection: true, logLevel: 'info' });
    expect(c.gateway).toEqual({ baseDomain: 'example.com' });
  });

  it('re-opens watches silent for 150 s unless told otherwise', () => {
    expect(operatorConfigFromEnv({ NLS_BASE_DOMAIN: 'e.com' }).watchIdleMs).toBe(150_000);
    expect(operatorConfigFromEnv({ NLS_BASE_DOMAIN: 'e.com', NLS_WATCH_IDLE_SECONDS: '200' }).watchIdleMs).toBe(200_000);
    expect(() => operatorConfigFromEnv({ NLS_BASE_DOMAIN: 'e.com', NLS_WATCH_IDLE_SECONDS: '0' })).toThrow(/NLS_WATCH_IDLE_SECONDS/);
  });

  it('keeps serving webhooks 5 s after SIGTERM unless told otherwise', () => {
    expect(operatorConfigFromEnv({ NLS_BASE_DOMAIN: 'e.com' }).webhookDrainMs).toBe(5000);
    expect(operatorConfigFromEnv({ NLS_BASE_DOMAIN: 'e.com', NLS_WEBHOOK_DRAIN_SECONDS: '0' }).webhookDrainMs).toBe(0);
    expect(operatorConfigFromEnv({ NLS_BASE_DOMAIN: 'e.com', NLS_WEBHOOK_DRAIN_SECONDS: '2.5' }).webhookDrainMs).toBe(2500);
    expect(() => operatorConfigFromEnv({ NLS_BASE_DOMAIN: 'e.com', NLS_WEBHOOK_DRAIN_SECONDS: '-1' })).toThrow(/NLS_WEBHOOK_DRAIN_SECONDS/);
  });

  it('reports a blocked deletion after 120 s unless NLS_CLEANUP_BLOCKED_SECONDS says otherwise', () => {
    expect(operatorConfigFromEnv({ NLS_BASE_DOMAIN: 'e.com' }).cleanupBlockedAfterMs).toBe(120_000);
    expect(operatorConfigFromEnv({ NLS_BASE_DOMAIN: 'e.com', NLS_CLEANUP_BLOCKED_SECONDS: '3' }).cleanupBlockedAfterMs).toBe(3000);
    expect(() => operatorConfigFromEnv({ NLS_BASE_DOMAIN: 'e.com', NLS_CLEANUP_BLOCKED_SECONDS: '0' })).toThrow(/NLS_CLEANUP_BLOCKED_SECONDS/);
  });

  it('reads a Ready model\'s provider resource every 60 s unless NLS_PROVIDER_POLL_SECONDS says otherwise', () => {
    expect(operatorConfigFromEnv({ NLS_BASE_DOMAIN: 'e.com' }).providerPollMs).toBe(60_000);
    expect(operatorConfigFromEnv({ NLS_BASE_DOMAIN: 'e.com', NLS_PROVIDER_POLL_SECONDS: '2' }).providerPollMs).toBe(2000);
    expect(operatorConfigFromEnv({ NLS_BASE_DOMAIN: 'e.com', NLS_PROVIDER_POLL_SECONDS: '0.5' }).providerPollMs).toBe(500);
    expect(() => operatorConfigFromEnv({ NLS_BASE_DOMAIN: 'e.com', NLS_PROVIDER_POLL_SECONDS: '0' })).toThrow(/NLS_PROVIDER_POLL_SECONDS/);
    expect(() => operatorConfigFromEnv({ NLS_BASE_DOMAIN: 'e.com', NLS_PROVIDER_POLL_SECONDS: 'soon' })).toThrow(/NLS_PROVIDER_POLL_SECONDS/);
  });

  it('keeps the key portal\'s Secret Role only when NLS_PORTAL_SECRETS_ROLE names it (the chart sets it with portal.enabled)', () => {
    expect(operatorConfigFromEnv({ NLS_BASE_DOMAIN: 'e.com' }).portalSecretsRole).toBeUndefined();
    expect(operatorConfigFromEnv({ NLS_BASE_DOMAIN: 'e.com', NLS_PORTAL_SECRETS_ROLE: '' }).portalSecretsRole).toBeUndefined();
    expect(operatorConfigFromEnv({ NLS_BASE_DOMAIN: 'e.com', NLS_PORTAL_SECRETS_ROLE: 'rel-portal-secrets' }).portalSecretsRole).toBe('rel-portal-secrets');
  });

  it('merges NLS_GATEWAY_CONTEXT with the base domain and issuer variables', () => {
    expect(gatewayContextFromEnv({ NLS_GATEWAY_CONTEXT: '{"baseDomain":"a.org","external":{"gatewayName":"gw"}}', NLS_OIDC_ISSUER_URL: 'https://kc/realms/x' })).toEqual({
      baseDomain: 'a.org',
      external: { gatewayName: 'gw' },
      jwt: { issuer: 'https://kc/realms/x' },
    });
  });

  it('normalises the host names like provider host names: lower case, one trailing root dot removed', () => {
    const ctx = { baseDomain: 'Example.ORG.', external: { hostname: 'API.Example.org.', gatewayName: 'gw' }, internal: { hostname: 'Internal.Example.org' } };
    expect(gatewayContextFromEnv({ NLS_GATEWAY_CONTEXT: JSON.stringify(ctx) })).toEqual({
      baseDomain: 'example.org',
      external: { hostname: 'api.example.org', gatewayName: 'gw' },
      internal: { hostname: 'internal.example.org' },
    });
    expect(gatewayContextFromEnv({ NLS_BASE_DOMAIN: 'Example.COM.' }).baseDomain).toBe('example.com');
  });

  it.each([
    [{}, 'the platform base domain is not set: set the chart value platform.baseDomain'],
    [{ NLS_BASE_DOMAIN: '' }, '--set platform.baseDomain=example.com'],
    [{ NLS_GATEWAY_CONTEXT: '{' }, 'NLS_GATEWAY_CONTEXT: not valid JSON'],
  ])('a gateway problem (%j) does not stop the process: the reconcilers report it', (env, message) => {
    const c = operatorConfigFromEnv(env);
    expect(c.configurationProblem).toContain(message);
    expect(c.gateway).toEqual({ baseDomain: '' });
    expect(operatorConfigFromEnv({ NLS_BASE_DOMAIN: 'example.com' }).configurationProblem).toBeUndefined();
  });

  it.each([
    [{ NLS_BASE_DOMAIN: 'x', NLS_HEALTH_PORT: 'abc' }, 'NLS_HEALTH_PORT: "abc" is not a port'],
    [{ NLS_BASE_DOMAIN: 'x', NLS_LEADER_ELECTION: 'yes' }, 'NLS_LEADER_ELECTION: "yes" is not a boolean; use true or false'],
    [
      { NLS_BASE_DOMAIN: 'x', NLS_RENEW_DEADLINE_SECONDS: '20' },
      'NLS_LEASE_DURATION_SECONDS=15, NLS_RENEW_DEADLINE_SECONDS=20, NLS_RETRY_PERIOD_SECONDS=2: the renew deadline must be shorter than the lease duration',
    ],
  ])('rejects %j with a message naming the variable', (env, message) => {
    expect(() => operatorConfigFromEnv(env)).toThrow(message);
  });
});

describe('per-key quota settings (NLS_QUOTAS, written by the chart only while quotas.rateLimitBackend is set)', () => {
  const settings = { costType: 'TotalToken', defaultTier: 'standard', tiers: [{ name: 'standard', tokens: 1000, unit: 'Hour' }] };

  test('unset or empty means quotas off', () => {
    expect(quotaSettingsFromEnv({})).toBeUndefined();
    expect(quotaSettingsFromEnv({ NLS_QUOTAS: '' })).toBeUndefined();
    expect(gatewayContextFromEnv({ NLS_BASE_DOMAIN: 'example.com' })).not.toHaveProperty('quotas');
  });

  test('the settings reach the gateway context', () => {
    expect(gatewayContextFromEnv({ NLS_BASE_DOMAIN: 'example.com', NLS_QUOTAS: JSON.stringify(settings) }).quotas).toEqual(settings);
  });

  test('bad JSON or a wrong shape is a configuration problem naming the chart values, never a crash', () => {
    expect(() => quotaSettingsFromEnv({ NLS_QUOTAS: '{' })).toThrow(/^NLS_QUOTAS: not valid JSON .*set the chart values quotas\.\*/);
    expect(() => quotaSettingsFromEnv({ NLS_QUOTAS: '{"tiers":{}}' })).toThrow('NLS_QUOTAS: expected {"costType": "...", "defaultTier": "...", "tiers": [...]}; set the chart values quotas.costType, quotas.defaultTier and quotas.tiers');
    const config = operatorConfigFromEnv({ NLS_BASE_DOMAIN: 'example.com', NLS_QUOTAS: '[]' });
    expect(config.configurationProblem).toMatch(/^NLS_QUOTAS: expected/);
  });
});
