import { createLogger, redact, redactString, redacted } from '../../../src/runtime/log';

describe('log redaction', () => {
  it('masks API keys, bearer tokens and PEM blocks inside strings', () => {
    const key = 'sk-' + 'A'.repeat(43);
    expect(redactString(`minted ${key} for bob`)).toBe(`minted ${redacted} for bob`);
    expect(redactString('Authorization: Bearer abc.def.ghi')).toBe(`Authorization: ${redacted}`);
    expect(redactString('-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----')).toBe(redacted);
  });

  it('masks values under secret-looking field names, including a Secret object data map', () => {
    const out = redact({ kind: 'Secret', data: { 'user-a-1': 'c2stQUFB' }, apiKey: 'x', token: 'y', name: 'keep' }) as Record<string, unknown>;
    expect(out).toEqual({ kind: 'Secret', data: redacted, apiKey: redacted, token: redacted, name: 'keep' });
  });

  it('writes one JSON object per line, above the level, with redaction applied', () => {
    const lines: string[] = [];
    const log = createLogger({ level: 'info', write: (l) => lines.push(l), fields: { component: 'test' } });
    log.debug('hidden');
    log.info('key sk-' + 'b'.repeat(43) + ' minted', { object: 'ns/a', err: new Error('Bearer secret-token') });
    expect(lines).toHaveLength(1);
    const entry = JSON.parse(lines[0]);
    expect(entry).toMatchObject({ level: 'info', component: 'test', object: 'ns/a', msg: `key ${redacted} minted` });
    expect(lines[0]).not.toContain('secret-token');
  });
});
