import { resolveGatewayContext } from '../../../../src/translate/gateway/context';
import type { ModelIdentity } from '../../../../src/translate/gateway/labels';
import { externalSecurityPolicy, internalSecurityPolicy } from '../../../../src/translate/gateway/security-policies';

const model: ModelIdentity = { apiVersion: 'llm.nebari.dev/v1beta1', kind: 'LLMModel', metadata: { name: 'llama', namespace: 'models', uid: 'u-1' } };
const resolved = (over = {}) => resolveGatewayContext({ baseDomain: 'example.com', jwt: { issuer: 'https://id.example.com/realms/r/' }, ...over }).context;

describe('external SecurityPolicy', () => {
  test('API keys from the model Secret, Bearer header, client ID forwarded, only listed clients allowed', () => {
    const ctx = resolved({ apiKeyClientIDs: ['user-b', 'user-a', 'user-b'] });
    expect(externalSecurityPolicy(model, ctx.endpoints.external, ctx).spec).toEqual({
      targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'llama-external' }],
      apiKeyAuth: {
        credentialRefs: [{ group: '', kind: 'Secret', name: 'llama-api-keys' }],
        extractFrom: [{ headers: ['Authorization', 'x-api-key'] }],
        forwardClientIDHeader: 'x-llm-client-id',
        sanitize: true,
      },
      authorization: {
        defaultAction: 'Deny',
        rules: [{ name: 'api-key-clients', action: 'Allow', principal: { headers: [{ name: 'x-llm-client-id', values: ['user-a', 'user-b'] }] } }],
      },
    });
  });

  test('no client IDs yet: deny everyone, no rules', () => {
    const ctx = resolved();
    expect(externalSecurityPolicy(model, ctx.endpoints.external, ctx).spec.authorization).toEqual({ defaultAction: 'Deny' });
  });

  test('thousands of client IDs are split into rules of at most 256 values', () => {
    const ids = Array.from({ length: 600 }, (_, i) => `c-${String(i).padStart(4, '0')}`);
    const ctx = resolved({ apiKeyClientIDs: ids, apiKeysSecretName: 'shared-keys', clientIDHeader: 'x-client' });
    const spec = externalSecurityPolicy(model, ctx.endpoints.external, ctx).spec;
    expect(spec.authorization?.rules?.map((r) => [r.name, r.principal.headers?.[0].values.length])).toEqual([
      ['api-key-clients', 256],
      ['api-key-clients-2', 256],
      ['api-key-clients-3', 88],
    ]);
    expect(spec.apiKeyAuth?.credentialRefs[0].name).toBe('shared-keys');
    expect(spec.apiKeyAuth?.forwardClientIDHeader).toBe('x-client');
  });
});

describe('external SecurityPolicy on an endpoint shared by several models', () => {
  // Envoy authenticates before the AI Gateway re-routes by model, on the oldest model's route.
  test('authenticates the keys of every model on the endpoint, sorted and once each, its own included', () => {
    const ctx = resolved({ apiKeyClientIDs: ['user-a-llama-1'], externalEndpointKeySecrets: ['openai-api-keys', 'claude-api-keys', 'openai-api-keys'] });
    const spec = externalSecurityPolicy(model, ctx.endpoints.external, ctx).spec;
    expect(spec.apiKeyAuth?.credentialRefs).toEqual([
      { group: '', kind: 'Secret', name: 'claude-api-keys' },
      { group: '', kind: 'Secret', name: 'llama-api-keys' },
      { group: '', kind: 'Secret', name: 'openai-api-keys' },
    ]);
    // Authorization runs after the re-route: still only this model's client IDs.
    expect(spec.authorization).toEqual({
      defaultAction: 'Deny',
      rules: [{ name: 'api-key-clients', action: 'Allow', principal: { headers: [{ name: 'x-llm-client-id', values: ['user-a-llama-1'] }] } }],
    });
  });

  test('every model on the endpoint renders the same key Secret list, whatever the order it was given', () => {
    const peers = ['c-api-keys', 'a-api-keys', 'b-api-keys'];
    const refs = (name: string, order: string[]) => {
      const ctx = resolved({ externalEndpointKeySecrets: order });
      return externalSecurityPolicy({ ...model, metadata: { ...model.metadata, name } }, ctx.endpoints.external, ctx).spec.apiKeyAuth?.credentialRefs;
    };
    expect(refs('a', peers)).toEqual(refs('b', [...peers].reverse()));
    expect(refs('c', peers)).toEqual(refs('a', peers));
  });
});

describe('internal SecurityPolicy', () => {
  test('JWT from the issuer (trailing slash removed), Keycloak JWKS, groups claim authorization', () => {
    const ctx = resolved();
    expect(internalSecurityPolicy(model, ctx.endpoints.internal, ctx, { groups: ['ml', 'admins'] }).spec).toEqual({
      targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'llama-internal' }],
      jwt: {
        providers: [
          {
            name: 'oidc',
            issuer: 'https://id.example.com/realms/r',
            remoteJWKS: { uri: 'https://id.example.com/realms/r/protocol/openid-connect/certs', cacheDuration: '300s' },
            claimToHeaders: [{ header: 'x-llm-client-id', claim: 'sub' }],
          },
        ],
      },
      authorization: {
        defaultAction: 'Deny',
        rules: [{ name: 'groups', action: 'Allow', principal: { jwt: { provider: 'oidc', claims: [{ name: 'groups', valueType: 'StringArray', values: ['admins', 'ml'] }] } } }],
      },
    });
  });

  test('public models admit every valid token (no authorization block)', () => {
    const ctx = resolved();
    const spec = internalSecurityPolicy(model, ctx.endpoints.internal, ctx, { public: true, groups: ['ignored'] }).spec;
    expect(spec.authorization).toBeUndefined();
    expect(spec.jwt?.providers).toHaveLength(1);
  });

  test('custom claim, JWKS URI and audiences', () => {
    const ctx = resolved({ jwt: { issuer: 'https://id.example.com', jwksUri: 'https://id.example.com/keys', groupsClaim: 'roles', audiences: ['llm'] } });
    const spec = internalSecurityPolicy(model, ctx.endpoints.internal, ctx, { groups: ['g'] }).spec;
    expect(spec.jwt?.providers[0]).toEqual({
      name: 'oidc',
      issuer: 'https://id.example.com',
      audiences: ['llm'],
      remoteJWKS: { uri: 'https://id.example.com/keys', cacheDuration: '300s' },
      claimToHeaders: [{ header: 'x-llm-client-id', claim: 'sub' }],
    });
    expect(spec.authorization?.rules?.[0].principal.jwt?.claims[0].name).toBe('roles');
  });

  test('the token subject goes into the platform\'s client-ID header, the one the usage metrics and the provider\'s header removal read', () => {
    const ctx = resolved({ clientIDHeader: 'x-caller' });
    for (const access of [{ groups: ['g'] }, { public: true }]) {
      const spec = internalSecurityPolicy(model, ctx.endpoints.internal, ctx, access).spec;
      expect(spec.jwt?.providers.map((p) => p.claimToHeaders)).toEqual([[{ header: 'x-caller', claim: 'sub' }]]);
    }
  });
});
