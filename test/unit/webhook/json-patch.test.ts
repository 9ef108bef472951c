import { applyJsonPatch, escapePointerToken, jsonEqual, jsonPatch } from '../../../src/webhook/json-patch';

describe('jsonPatch', () => {
  it('adds, replaces and removes object members and replaces arrays whole', () => {
    const before = { spec: { a: 1, b: [1, 2], gone: true, nested: { keep: 'x' } } };
    const after = { spec: { a: 2, b: [1, 2, 3], added: { deep: 1 }, nested: { keep: 'x' } } };
    const patch = jsonPatch(before, after);
    expect(patch).toEqual([
      { op: 'remove', path: '/spec/gone' },
      { op: 'replace', path: '/spec/a', value: 2 },
      { op: 'replace', path: '/spec/b', value: [1, 2, 3] },
      { op: 'add', path: '/spec/added', value: { deep: 1 } },
    ]);
    expect(applyJsonPatch(before, patch)).toEqual(after);
  });

  it('escapes "/" and "~" in member names (RFC 6901)', () => {
    expect(escapePointerToken('a/b~c')).toBe('a~1b~0c');
    const before = { metadata: { annotations: {} as Record<string, string> } };
    const after = { metadata: { annotations: { 'llm.nebari.dev/x~y': 'v' } } };
    const patch = jsonPatch(before, after);
    expect(patch).toEqual([{ op: 'add', path: '/metadata/annotations/llm.nebari.dev~1x~0y', value: 'v' }]);
    expect(applyJsonPatch(before, patch)).toEqual(after);
  });

  it('is empty for equal documents regardless of key order', () => {
    expect(jsonPatch({ a: 1, b: { c: [1] } }, { b: { c: [1] }, a: 1 })).toEqual([]);
    expect(jsonEqual({ a: undefined }, {})).toBe(true);
  });
});
