import { mergeValues } from '../../../src/chart/merge-values';

describe('mergeValues (Helm semantics)', () => {
  test('maps merge key by key; lists and scalars are replaced; the inputs are not changed', () => {
    const base = { a: { b: 1, c: [1, 2], d: { e: 'x' } }, f: 'keep' };
    const override = { a: { b: 2, c: [3], d: { g: true } }, h: null };
    expect(mergeValues(base, override)).toEqual({ a: { b: 2, c: [3], d: { e: 'x', g: true } }, f: 'keep', h: null });
    expect(base).toEqual({ a: { b: 1, c: [1, 2], d: { e: 'x' } }, f: 'keep' });
  });

  test('a map replacing a scalar (or the reverse) takes the override', () => {
    expect(mergeValues({ a: 1 }, { a: { b: 2 } })).toEqual({ a: { b: 2 } });
    expect(mergeValues({ a: { b: 2 } }, { a: 'x' })).toEqual({ a: 'x' });
  });
});
