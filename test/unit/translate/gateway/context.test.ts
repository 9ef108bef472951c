import { resolveGatewayContext } from '../../../../src/translate/gateway/context';

test('defaults: endpoint hosts from the base domain, upstream gateway names and listeners, timeouts', () => {
  const { context, errors } = resolveGatewayContext({ baseDomain: 'Example.COM' });
  expect(errors).toEqual([]);
  expect(context).toEqual({
    endpoints: {
      external: { name: 'external', hostname: 'llm.example.com', gatewayName: 'nebari-gateway', gatewayNamespace: 'envoy-gateway-system', sectionName: 'llm-https' },
      internal: { name: 'internal', hostname: 'llm-internal.example.com', gatewayName: 'nebari-internal-gateway', gatewayNamespace: 'envoy-gateway-system', sectionName: 'llm-internal-https' },
    },
    jwt: { issuer: undefined, jwksUri: undefined, groupsClaim: 'groups', audiences: [], allowAnyAudience: false },
    passthroughRequestTimeout: '120s',
    llmModelRequestTimeout: '600s',
    clientIDHeader: 'x-llm-client-id',
    apiKeyClientIDs: [],
    apiKeyTiers: {},
    apiKeysSecretName: undefined,
    externalEndpointKeySecrets: [],
    servingPool: { selector: undefined, targetPort: 8000, endpointPickerPort: 9002, failureMode: 'FailClose' },
    modelsOwnedBy: 'nebari-llm-serving',
  });
});

test('every setting can be overridden', () => {
  const { context, errors } = resolveGatewayContext({
    baseDomain: 'example.com',
    external: { hostname: 'api.ai.example.org.', gatewayName: 'public', gatewayNamespace: 'gw', sectionName: '' },
    internal: { hostname: 'ai.corp.example.org' },
    jwt: { issuer: 'https://id.example.org', groupsClaim: 'roles', audiences: ['a'] },
    passthroughRequestTimeout: '5m',
    llmModelRequestTimeout: '1h',
    providerTLS: { caConfigMap: 'provider-ca.v2' },
  });
  expect(errors).toEqual([]);
  expect(context.providerCAConfigMap).toBe('provider-ca.v2');
  expect(context.endpoints.external).toEqual({ name: 'external', hostname: 'api.ai.example.org', gatewayName: 'public', gatewayNamespace: 'gw', sectionName: '' });
  expect(context.endpoints.internal.hostname).toBe('ai.corp.example.org');
  expect(context.jwt).toEqual({ issuer: 'https://id.example.org', jwksUri: 'https://id.example.org/protocol/openid-connect/certs', groupsClaim: 'roles', audiences: ['a'], allowAnyAudience: false });
  expect([context.passthroughRequestTimeout, context.llmModelRequestTimeout]).toEqual(['5m', '1h']);
});

test('bad settings are reported against context fields', () => {
  const { errors } = resolveGatewayContext({
    baseDomain: 'example.com',
    external: { hostname: 'llm.example.com:443' },
    jwt: { issuer: 'https://id.example.org', jwksUri: 'http://id.example.org/keys' },
    passthroughRequestTimeout: '2 minutes',
    providerTLS: { caConfigMap: 'Provider_CA' },
  });
  expect(errors.map((e) => e.message)).toEqual([
    'platform.external.hostname: "llm.example.com:443" has a port; remove it',
    'platform.jwt.jwksUri: "http://id.example.org/keys" is not an https URL; Envoy fetches signing keys over HTTPS only',
    'platform.passthroughRequestTimeout: "2 minutes" is not a duration; use a Gateway API duration such as 120s, 10m or 1h',
    'platform.providerTLS.caConfigMap: "Provider_CA" is not a ConfigMap name; use lowercase letters, digits, "-" and ".", e.g. provider-ca, or leave it empty to verify providers against the system CAs',
  ]);
});

test('an empty provider CA ConfigMap means the system CAs', () => {
  expect(resolveGatewayContext({ baseDomain: 'example.com', providerTLS: { caConfigMap: '' } }).context.providerCAConfigMap).toBeUndefined();
  expect(resolveGatewayContext({ baseDomain: 'example.com', providerTLS: {} }).context.providerCAConfigMap).toBeUndefined();
});
