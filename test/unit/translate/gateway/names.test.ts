import { boundedName, gatewayObjectNames, MAX_GENERATED_NAME_LENGTH, stableHash, apiKeysSecretName } from '../../../../src/translate/gateway/names';

const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

describe('boundedName', () => {
  test('short names are <base>-<suffix> unchanged', () => {
    expect(boundedName('openai', 'external')).toBe('openai-external');
    expect(boundedName('openai')).toBe('openai');
    expect(boundedName('gpt.4o', 'backend-tls')).toBe('gpt.4o-backend-tls');
  });

  test('a name of exactly 63 characters is kept', () => {
    const base = 'a'.repeat(63 - '-external'.length);
    expect(boundedName(base, 'external')).toBe(`${base}-external`);
    expect(boundedName(base, 'external')).toHaveLength(63);
  });

  test('a longer name is cut, hashed and keeps its suffix', () => {
    const base = 'a'.repeat(63 - '-external'.length + 1);
    const name = boundedName(base, 'external');
    expect(name).toHaveLength(63);
    expect(name).toBe(`${'a'.repeat(63 - 18)}-${stableHash(`${base}-external`)}-external`);
    expect(name.endsWith('-external')).toBe(true);
  });

  test('cuts never leave a trailing dash or dot before the hash', () => {
    const base = `${'a'.repeat(44)}-.bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb`;
    const name = boundedName(base, 'external');
    expect(name).toMatch(SUBDOMAIN);
    expect(name).not.toMatch(/[-.]-[0-9a-f]{8}-external$/);
  });

  test('the hash is stable (same input, same output, fixed value)', () => {
    // sha256("hello") starts with 2cf24dba.
    expect(stableHash('hello')).toBe('2cf24dba');
    const base = 'x'.repeat(100);
    expect(boundedName(base, 'external')).toBe(boundedName(base, 'external'));
  });

  test('names that share a long prefix stay distinct', () => {
    const prefix = 'p'.repeat(70);
    const names = ['a', 'b', 'c'].map((tail) => boundedName(`${prefix}${tail}`, 'external'));
    expect(new Set(names).size).toBe(3);
    for (const n of names) expect(n.length).toBeLessThanOrEqual(MAX_GENERATED_NAME_LENGTH);
  });

  test.each([1, 10, 54, 55, 63, 64, 100, 253])('a %i-character model name gives valid names of at most 63 characters', (length) => {
    const model = 'm'.repeat(length);
    const names = gatewayObjectNames(model);
    const all = [
      names.route('external'),
      names.route('internal'),
      names.securityPolicy('external'),
      names.securityPolicy('internal'),
      names.backend,
      names.backendTLSPolicy,
      names.aiServiceBackend,
      names.backendSecurityPolicy,
      names.inferencePool,
      names.endpointPicker,
      names.apiKeysSecret,
      names.modelLabel,
    ];
    for (const n of all) {
      expect(n.length).toBeLessThanOrEqual(63);
      expect(n).toMatch(SUBDOMAIN);
    }
    // Objects of the same kind never collide: every per-kind name is distinct.
    const perKind = [names.route('external'), names.route('internal'), names.securityPolicy('external'), names.securityPolicy('internal'), names.backend, names.backendTLSPolicy, names.backendSecurityPolicy, names.endpointPicker, names.apiKeysSecret];
    expect(new Set(perKind).size).toBe(perKind.length);
  });
});

test('the generated names of a typical model', () => {
  const names = gatewayObjectNames('openai');
  expect({
    routes: [names.route('external'), names.route('internal')],
    policies: [names.securityPolicy('external'), names.securityPolicy('internal')],
    backend: names.backend,
    tls: names.backendTLSPolicy,
    aisb: names.aiServiceBackend,
    bsp: names.backendSecurityPolicy,
    pool: names.inferencePool,
    epp: names.endpointPicker,
    keys: names.apiKeysSecret,
  }).toEqual({
    routes: ['openai-external', 'openai-internal'],
    policies: ['openai-external-auth', 'openai-internal-auth'],
    backend: 'openai-backend',
    tls: 'openai-backend-tls',
    aisb: 'openai',
    bsp: 'openai-upstream-auth',
    pool: 'openai',
    epp: 'openai-epp',
    keys: 'openai-api-keys',
  });
  expect(apiKeysSecretName('openai')).toBe('openai-api-keys');
});

describe('generated names of two long models', () => {
  test('two long names that cut to the same head differ by their hash', () => {
    const a = `${'m'.repeat(70)}-alpha`;
    const b = `${'m'.repeat(70)}-bravo`;
    expect(apiKeysSecretName(a).slice(0, 40)).toBe(apiKeysSecretName(b).slice(0, 40));
    expect(apiKeysSecretName(a)).not.toBe(apiKeysSecretName(b));
    expect(boundedName(a)).not.toBe(boundedName(b));
  });

});
