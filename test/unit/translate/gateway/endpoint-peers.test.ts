import { externalEndpointKeySecrets, oldestRouted, type EndpointPeer } from '../../../../src/translate/gateway';

const peer = (kind: string, name: string, over: { namespace?: string; external?: boolean; deleting?: boolean } = {}): EndpointPeer => ({
  kind,
  metadata: { name, namespace: over.namespace ?? 'models', ...(over.deleting ? { deletionTimestamp: '2026-12-03T00:00:00Z' } : {}) },
  spec: over.external === undefined ? {} : { endpoints: { external: { enabled: over.external } } },
});

describe('externalEndpointKeySecrets', () => {
  test('the key Secrets of the namespace\'s models on the external endpoint, sorted and once each', () => {
    const models = [
      peer('PassthroughModel', 'openai'),
      peer('LLMModel', 'llama', { external: true }),
      // The two kinds of one name share one key Secret.
      peer('LLMModel', 'openai'),
      peer('PassthroughModel', 'claude'),
    ];
    expect(externalEndpointKeySecrets(models, 'models')).toEqual(['claude-api-keys', 'llama-api-keys', 'openai-api-keys']);
  });

  test('leaves out models that disabled the external endpoint, are being deleted, or live elsewhere', () => {
    const models = [
      peer('PassthroughModel', 'internal-only', { external: false }),
      peer('PassthroughModel', 'going', { deleting: true }),
      peer('PassthroughModel', 'other-namespace', { namespace: 'other' }),
      peer('LLMModel', 'stays'),
    ];
    expect(externalEndpointKeySecrets(models, 'models')).toEqual(['stays-api-keys']);
    expect(externalEndpointKeySecrets([], 'models')).toEqual([]);
  });
});

describe('oldestRouted', () => {
  const names = (models: Parameters<typeof oldestRouted>[0]) => oldestRouted(models).map((m) => m.name);
  const routed = (name: string, routeCreated?: string) => ({ name, routeName: `${name}-external`, ...(routeCreated ? { routeCreated } : {}) });

  test('the models of the two oldest routes, as Envoy Gateway orders them: creation time, then name', () => {
    const models = [routed('zeta', '2026-12-05T10:00:01Z'), routed('beta', '2026-12-05T10:00:02Z'), routed('alpha', '2026-12-05T10:00:01Z'), routed('old', '2026-12-05T09:59:59Z')];
    expect(names(models)).toEqual(['old', 'alpha']);
  });

  test('the same two whatever the order the models come in', () => {
    const models = Array.from({ length: 40 }, (_, i) => routed(`m${i}`, i % 5 === 0 ? undefined : `2026-12-05T10:00:${String(40 - (i % 7)).padStart(2, '0')}Z`));
    // Oldest: 10:00:34 (i % 7 === 6, routed): m6, m13, m20, m27, m34 (m20 has no route); by route name m13, m27.
    for (const order of [models, [...models].reverse(), [...models.slice(20), ...models.slice(0, 20)]]) {
      expect(names(order)).toEqual(['m13', 'm27']);
    }
  });

  test('a model without a route comes after every routed one, and the routeless ones by name', () => {
    expect(names([routed('b'), routed('z', '2026-12-05T10:00:00Z'), routed('a')])).toEqual(['z', 'a']);
    expect(names([routed('only')])).toEqual(['only']);
    expect(names([])).toEqual([]);
  });
});
