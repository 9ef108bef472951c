import { PortalConfigError, portalConfigFromEnv } from '../../../src/portal/config';

const base = {
  NLS_PORTAL_NAMESPACE: 'llm',
  NLS_PORTAL_URL: 'https://keys.example.com/',
  NLS_PORTAL_OIDC_ISSUER: 'https://sso.example.com/realms/nebari',
  NLS_PORTAL_OIDC_CLIENT_ID: 'portal',
};

describe('portalConfigFromEnv', () => {
  it('applies the documented defaults', () => {
    const c = portalConfigFromEnv(base);
    expect(c).toMatchObject({
      namespace: 'llm',
      url: 'https://keys.example.com',
      redirectUri: 'https://keys.example.com/auth/callback',
      clientSecret: '',
      groupsClaim: 'groups',
      scopes: 'openid profile email offline_access',
      adminGroups: [],
      keyExpiryDefaultDays: 30,
      keyExpiryMaxDays: 90,
      keyLimits: { keysPerUserPerModel: 10, mintsPerUserPerHour: 20 },
      groupRefreshSeconds: 300,
      groupRefreshFailClosedSeconds: 86_400,
      metricsPort: 9090,
      sessionSecretName: 'nls-portal-session',
      port: 8080,
    });
    expect(c.quotaTiers).toBeUndefined();
    expect(c.externalEndpoint).toBeUndefined();
    expect(c.prometheusUrl).toBeUndefined();
  });

  it('walks the users of the operator\'s Secret Role when NLS_PORTAL_SECRETS_ROLE names it, and lists them otherwise', () => {
    expect(portalConfigFromEnv(base).secretsRole).toBeUndefined();
    expect(portalConfigFromEnv({ ...base, NLS_PORTAL_SECRETS_ROLE: ' rel-portal-secrets ' }).secretsRole).toBe('rel-portal-secrets');
  });

  it('reads the Prometheus of the usage page, plain http allowed (in-cluster), without a trailing slash', () => {
    expect(portalConfigFromEnv({ ...base, NLS_PORTAL_PROMETHEUS_URL: 'http://prometheus-operated.monitoring:9090/' }).prometheusUrl).toBe('http://prometheus-operated.monitoring:9090');
  });

  it('parses admin groups, quota tiers and the external endpoint', () => {
    const c = portalConfigFromEnv({
      ...base,
      NLS_PORTAL_ADMIN_GROUPS: ' admins, platform ,',
      NLS_PORTAL_QUOTA_TIERS: '{"costType":"OutputToken","default":"standard","tiers":[{"name":"standard","description":"100k/h","groups":[],"tokens":100000,"unit":"Hour"},{"name":"large","groups":["batch","ml-admins"]}]}',
      NLS_PORTAL_EXTERNAL_ENDPOINT: 'https://llm.example.com',
      NLS_PORTAL_KEYS_PER_USER_PER_MODEL: '3',
      NLS_PORTAL_MINTS_PER_USER_PER_HOUR: '7',
    });
    expect(c.adminGroups).toEqual(['admins', 'platform']);
    // A tier without tokens and unit (an older chart's list) has no limit the usage page could show.
    expect(c.quotaTiers).toEqual({ costType: 'OutputToken', default: 'standard', tiers: [{ name: 'standard', description: '100k/h', tokens: 100000, unit: 'Hour' }, { name: 'large', groups: ['batch', 'ml-admins'] }] });
    expect(c.keyLimits).toEqual({ keysPerUserPerModel: 3, mintsPerUserPerHour: 7 });
    expect(c.externalEndpoint).toBe('https://llm.example.com');
  });

  it('accepts plain http only on loopback', () => {
    expect(portalConfigFromEnv({ ...base, NLS_PORTAL_URL: 'http://127.0.0.1:8080' }).url).toBe('http://127.0.0.1:8080');
    expect(portalConfigFromEnv({ ...base, NLS_PORTAL_OIDC_ISSUER: 'http://localhost:5556/dex' }).issuer).toBe('http://localhost:5556/dex');
  });

  test.each([
    [{ NLS_PORTAL_NAMESPACE: '' }, /^NLS_PORTAL_NAMESPACE is not set/],
    [{ NLS_PORTAL_URL: 'http://keys.example.com' }, /^NLS_PORTAL_URL: "http:\/\/keys.example.com" must use https/],
    [{ NLS_PORTAL_URL: 'keys.example.com' }, /^NLS_PORTAL_URL: "keys.example.com" is not a URL/],
    [{ NLS_PORTAL_URL: 'https://keys.example.com/?a=1' }, /^NLS_PORTAL_URL: .* must not have a query/],
    [{ NLS_PORTAL_OIDC_ISSUER: 'http://sso.example.com' }, /^NLS_PORTAL_OIDC_ISSUER: .* must use https/],
    [{ NLS_PORTAL_OIDC_CLIENT_ID: ' ' }, /^NLS_PORTAL_OIDC_CLIENT_ID is not set/],
    [{ NLS_PORTAL_OIDC_SCOPES: 'profile email' }, /^NLS_PORTAL_OIDC_SCOPES: .* must include openid/],
    [{ NLS_PORTAL_KEY_EXPIRY_MAX_DAYS: 'ten' }, /^NLS_PORTAL_KEY_EXPIRY_MAX_DAYS: "ten" is not a whole number/],
    [{ NLS_PORTAL_KEY_EXPIRY_DEFAULT_DAYS: '100' }, /^NLS_PORTAL_KEY_EXPIRY_DEFAULT_DAYS \(100\) is larger than NLS_PORTAL_KEY_EXPIRY_MAX_DAYS \(90\)/],
    [{ NLS_PORTAL_GROUP_REFRESH_SECONDS: '0' }, /^NLS_PORTAL_GROUP_REFRESH_SECONDS: "0" is not a whole number between 1/],
    [{ NLS_PORTAL_GROUP_REFRESH_SECONDS: '600', NLS_PORTAL_GROUP_REFRESH_FAIL_CLOSED_SECONDS: '900' }, /^NLS_PORTAL_GROUP_REFRESH_FAIL_CLOSED_SECONDS \(900\) is shorter than two group refresh rounds/],
    [{ NLS_PORTAL_GROUP_REFRESH_FAIL_CLOSED_SECONDS: '0' }, /^NLS_PORTAL_GROUP_REFRESH_FAIL_CLOSED_SECONDS: "0" is not a whole number between 1 and 2592000/],
    [{ NLS_PORTAL_QUOTA_TIERS: '{' }, /^NLS_PORTAL_QUOTA_TIERS is not valid JSON/],
    [{ NLS_PORTAL_QUOTA_TIERS: '{"default":"x","tiers":[]}' }, /^NLS_PORTAL_QUOTA_TIERS.tiers must be a non-empty list/],
    [{ NLS_PORTAL_QUOTA_TIERS: '{"default":"x","tiers":[{"name":"Big Tier"}]}' }, /^NLS_PORTAL_QUOTA_TIERS.tiers\[0\].name must be a lower-case DNS label/],
    [{ NLS_PORTAL_QUOTA_TIERS: '{"default":"gold","tiers":[{"name":"standard"}]}' }, /^NLS_PORTAL_QUOTA_TIERS.default must name one of the tiers \(standard\)/],
    [{ NLS_PORTAL_QUOTA_TIERS: '{"default":"a","tiers":[{"name":"a","tokens":0,"unit":"Hour"}]}' }, /^NLS_PORTAL_QUOTA_TIERS.tiers\[0\].tokens must be a positive whole number/],
    [{ NLS_PORTAL_QUOTA_TIERS: '{"default":"a","tiers":[{"name":"a","tokens":10,"unit":"Week"}]}' }, /^NLS_PORTAL_QUOTA_TIERS.tiers\[0\].unit must be one of Second, Minute, Hour, Day, Month/],
    [{ NLS_PORTAL_QUOTA_TIERS: '{"costType":"Tokens","default":"a","tiers":[{"name":"a"}]}' }, /^NLS_PORTAL_QUOTA_TIERS.costType must be one of TotalToken, /],
    [{ NLS_PORTAL_EXTERNAL_ENDPOINT: 'ftp://llm.example.com' }, /^NLS_PORTAL_EXTERNAL_ENDPOINT: .* must use https/],
    [{ NLS_PORTAL_QUOTA_TIERS: '{"default":"a","tiers":[{"name":"a","groups":"batch"}]}' }, /^NLS_PORTAL_QUOTA_TIERS.tiers\[0\].groups must be a list of group names/],
    [{ NLS_PORTAL_KEYS_PER_USER_PER_MODEL: '0' }, /^NLS_PORTAL_KEYS_PER_USER_PER_MODEL: "0" is not a whole number between 1 and 2000; set the chart value portal.keyLimits.keysPerUserPerModel/],
    [{ NLS_PORTAL_PROMETHEUS_URL: 'prometheus:9090' }, /^NLS_PORTAL_PROMETHEUS_URL: "prometheus:9090" must be an http\(s\) URL without query, fragment or credentials/],
    [{ NLS_PORTAL_PROMETHEUS_URL: 'http://user:pw@prometheus:9090' }, /^NLS_PORTAL_PROMETHEUS_URL: .* must be an http\(s\) URL without query, fragment or credentials/],
    [{ NLS_PORTAL_PROMETHEUS_URL: 'not a url' }, /^NLS_PORTAL_PROMETHEUS_URL: "not a url" is not a URL/],
    [{ NLS_PORTAL_MINTS_PER_USER_PER_HOUR: 'many' }, /^NLS_PORTAL_MINTS_PER_USER_PER_HOUR: "many" is not a whole number between 1 and 10000; set the chart value portal.keyLimits.mintsPerUserPerHour/],
  ])('%j is refused with an error naming the variable', (override, message) => {
    expect(() => portalConfigFromEnv({ ...base, ...override })).toThrow(PortalConfigError);
    expect(() => portalConfigFromEnv({ ...base, ...override })).toThrow(message);
  });
});
