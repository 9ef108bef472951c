import {
  apiKeyMetadataConfigMapName,
  apiKeysSecretName,
  clientIdFor,
  desiredApiKeySecret,
  desiredApiKeyMetadataConfigMap,
  formatApiKey,
  listApiKeys,
  looksLikeApiKey,
  mintApiKey,
  parseApiKeyRecord,
  randomClientIdSuffix,
  MAX_KEYS_PER_MODEL,
} from '../../../../src/translate/keys/api-keys';

const model = { kind: 'PassthroughModel' as const, name: 'gpt-4o', namespace: 'team-a' };
const random = (fill: number) => new Uint8Array(32).fill(fill);

describe('API key names', () => {
  it('follows the upstream naming', () => {
    expect(apiKeysSecretName('gpt-4o')).toBe('gpt-4o-api-keys');
    expect(apiKeyMetadataConfigMapName('gpt-4o')).toBe('gpt-4o-api-key-metadata');
  });
  it('keeps long model names within 63 characters', () => {
    const long = 'm'.repeat(80);
    expect(apiKeysSecretName(long).length).toBeLessThanOrEqual(63);
    expect(apiKeyMetadataConfigMapName(long).length).toBeLessThanOrEqual(63);
    expect(apiKeyMetadataConfigMapName(long)).toMatch(/-api-key-metadata$/);
  });
});

describe('formatApiKey', () => {
  it('is sk- plus 43 base64url characters', () => {
    const key = formatApiKey(random(0xfb));
    expect(key).toBe('sk-' + Buffer.from(random(0xfb)).toString('base64url'));
    expect(looksLikeApiKey(key)).toBe(true);
  });
  it('refuses too little randomness', () => {
    expect(() => formatApiKey(new Uint8Array(8))).toThrow('need 32 random bytes');
  });
});

describe('client IDs', () => {
  it('are valid Secret data keys, readable, and differ per namespace, kind, model and user', () => {
    const id = clientIdFor(model, 'alice@example.com', 1);
    expect(id).toMatch(/^user-alice-example-com-gpt-4o-[0-9a-f]{32}-1$/);
    expect(id).toMatch(/^[-._a-zA-Z0-9]+$/);
    const others = [
      clientIdFor({ ...model, namespace: 'team-b' }, 'alice@example.com', 1),
      clientIdFor({ ...model, kind: 'LLMModel' }, 'alice@example.com', 1),
      clientIdFor({ ...model, name: 'gpt-4' }, 'alice@example.com', 1),
      clientIdFor(model, 'bob', 1),
    ];
    expect(new Set([id, ...others]).size).toBe(5);
  });
  it('end in a random suffix of 16 hex characters when minted', () => {
    expect(randomClientIdSuffix(new Uint8Array(8).fill(0xab))).toBe('abababababababab');
    expect(clientIdFor(model, 'bob', randomClientIdSuffix(new Uint8Array(8).fill(1)))).toMatch(/^user-bob-gpt-4o-[0-9a-f]{32}-0101010101010101$/);
    expect(() => randomClientIdSuffix(new Uint8Array(4))).toThrow('need 8 random bytes');
  });
});

describe('desired key objects', () => {
  it('carry labels and the model name but no data and no owner reference', () => {
    const secret = desiredApiKeySecret(model);
    expect(secret).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: 'gpt-4o-api-keys',
        namespace: 'team-a',
        labels: {
          'app.kubernetes.io/managed-by': 'nebari-llm-serving',
          'app.kubernetes.io/part-of': 'nebari-llm-serving',
          'llm.nebari.dev/api-keys': 'true',
          'llm.nebari.dev/model': 'gpt-4o',
          'llm.nebari.dev/model-kind': 'PassthroughModel',
        },
        annotations: { 'llm.nebari.dev/model-name': 'gpt-4o' },
      },
      type: 'Opaque',
    });
    const cm = desiredApiKeyMetadataConfigMap(model);
    expect(cm).not.toHaveProperty('data');
    expect(cm.metadata).not.toHaveProperty('ownerReferences');
  });
});

describe('mint, list and revoke', () => {
  const now = new Date('2026-03-01T10:00:00Z');

  it('adds a key under a random client ID without touching existing ones and stores metadata without the key', () => {
    // A key minted by an earlier version (sequence-number suffix) stays as it is.
    const existing = { [clientIdFor(model, 'bob', 1)]: Buffer.from('sk-old').toString('base64') };
    const r = mintApiKey(existing, {}, { model, user: 'alice', description: 'ci', now, random: random(1), idRandom: random(0xcd) });
    expect(r.clientId).toBe(clientIdFor(model, 'alice', 'cdcdcdcdcdcdcdcd'));
    expect(Buffer.from(r.secretData[r.clientId], 'base64').toString()).toBe(r.apiKey);
    expect(r.secretData).toMatchObject(existing);
    expect(JSON.parse(r.metadataData[r.clientId])).toEqual({ createdBy: 'alice', createdAt: '2026-03-01T10:00:00.000Z', description: 'ci' });
    expect(r.metadataData[r.clientId]).not.toContain(r.apiKey);
    expect(listApiKeys(r.secretData, r.metadataData)).toEqual([
      { clientId: clientIdFor(model, 'alice', 'cdcdcdcdcdcdcdcd'), createdBy: 'alice', createdAt: '2026-03-01T10:00:00.000Z', description: 'ci' },
      { clientId: clientIdFor(model, 'bob', 1), createdBy: 'unknown', createdAt: '' },
    ]);
  });

  it('refuses a key past the per-model limit, naming the fix', () => {
    const full: Record<string, string> = {};
    for (let i = 1; i <= MAX_KEYS_PER_MODEL; i++) full[`id-${i}`] = 'eA==';
    expect(() => mintApiKey(full, {}, { model, user: 'a', now, random: random(2), idRandom: random(3) })).toThrow('nls keys revoke');
  });

  it('never reuses a client ID already in the Secret or the metadata', () => {
    const taken = clientIdFor(model, 'alice', randomClientIdSuffix(random(7)));
    const input = { model, user: 'alice', now, random: random(1), idRandom: random(7) };
    expect(() => mintApiKey({ [taken]: 'eA==' }, {}, input)).toThrow('already in use');
    expect(() => mintApiKey({}, { [taken]: '{}' }, input)).toThrow('already in use');
    expect(mintApiKey({}, {}, input).clientId).toBe(taken);
  });

  it('lists a key whose metadata is damaged', () => {
    expect(listApiKeys({ x: 'eA==' }, { x: 'not json' })).toEqual([{ clientId: 'x', createdBy: 'unknown', createdAt: '' }]);
  });

  it('records owner, granting groups, expiry, tier and source when given', () => {
    const expiresAt = new Date('2026-03-31T10:00:00Z');
    const grant = { subject: 'sub-123', groups: ['team-a'], grantedBy: 'groups' as const, expiresAt, tier: 'standard', source: 'portal' as const };
    const r = mintApiKey({}, {}, { model, user: 'alice', now, random: random(1), idRandom: random(2), grant });
    const stored = JSON.parse(r.metadataData[r.clientId]);
    expect(stored).toEqual({ createdBy: 'alice', createdAt: '2026-03-01T10:00:00.000Z', subject: 'sub-123', groups: ['team-a'], grantedBy: 'groups', expiresAt: '2026-03-31T10:00:00.000Z', tier: 'standard', source: 'portal' });
    expect(parseApiKeyRecord(r.clientId, r.metadataData[r.clientId])).toEqual({ clientId: r.clientId, ...stored });
    expect(r.record).toEqual({ clientId: r.clientId, ...stored });
  });

  it('refuses an expiry that is not after now, naming the fix', () => {
    const base = { model, user: 'alice', now, random: random(1), idRandom: random(2) };
    expect(() => mintApiKey({}, {}, { ...base, grant: { expiresAt: now } })).toThrow('expiresAt 2026-03-01T10:00:00.000Z is not in the future; choose an expiry after now');
    expect(() => mintApiKey({}, {}, { ...base, grant: { expiresAt: new Date('nope') } })).toThrow('expiresAt is not a valid date');
  });

  it('reads old records unchanged and drops optional fields of the wrong shape', () => {
    expect(parseApiKeyRecord('a', JSON.stringify({ createdBy: 'bob', createdAt: 't' }))).toEqual({ clientId: 'a', createdBy: 'bob', createdAt: 't' });
    expect(parseApiKeyRecord('a', JSON.stringify({ createdBy: 'bob', createdAt: 't', groups: 'team-a', grantedBy: 'root', source: 'web', tier: 3, subject: '' }))).toEqual({ clientId: 'a', createdBy: 'bob', createdAt: 't' });
    expect(parseApiKeyRecord('a', JSON.stringify({ createdBy: 'bob', createdAt: 't', groups: ['x', 7, ''] })).groups).toEqual(['x']);
    // Kept as written: the revocation check treats an unreadable expiry as expired.
    expect(parseApiKeyRecord('a', JSON.stringify({ createdBy: 'bob', createdAt: 't', expiresAt: 'soon' })).expiresAt).toBe('soon');
    expect(parseApiKeyRecord('a', '[1]')).toEqual({ clientId: 'a', createdBy: 'unknown', createdAt: '' });
  });
});
