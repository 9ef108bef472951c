import { cond, conditionExpression, evaluateCondition, PlainRenderContext, valueAt } from '../../../constructs';

const values = { a: { on: true, off: false, n: 3, s: 'x', empty: '', list: [], map: {} } };

describe('conditions', () => {
  const table: Array<[ReturnType<typeof cond.truthy>, boolean, string]> = [
    [cond.truthy('a.on'), true, '.Values.a.on'],
    [cond.truthy('a.off'), false, '.Values.a.off'],
    [cond.truthy('a.empty'), false, '.Values.a.empty'],
    [cond.truthy('a.list'), false, '.Values.a.list'],
    [cond.truthy('a.map'), false, '.Values.a.map'],
    [cond.eq('a.s', 'x'), true, 'eq .Values.a.s "x"'],
    [cond.gt('a.n', 1), true, 'gt (int .Values.a.n) 1'],
    [cond.gt('a.n', 3), false, 'gt (int .Values.a.n) 3'],
    [cond.not(cond.truthy('a.on')), false, 'not (.Values.a.on)'],
    [cond.and(cond.truthy('a.on'), cond.eq('a.s', 'y')), false, 'and (.Values.a.on) (eq .Values.a.s "y")'],
    [cond.or(cond.truthy('a.off'), cond.eq('a.s', 'x')), true, 'or (.Values.a.off) (eq .Values.a.s "x")'],
  ];
  test.each(table)('%j evaluates to %s and prints as %s', (c, expected, expression) => {
    expect(evaluateCondition(c, values)).toBe(expected);
    expect(conditionExpression(c)).toBe(expression);
  });
});

describe('PlainRenderContext', () => {
  const ctx = new PlainRenderContext(values, 'rel', 'ns', 'rel-full');
  test('reads values and refuses unknown paths with the path in the message', () => {
    expect(ctx.value('a.n')).toBe(3);
    expect(ctx.text('a.n')).toBe('3');
    expect(() => ctx.value('a.nope')).toThrow('values: no value at a.nope');
    expect(valueAt(values, 'a.s')).toBe('x');
  });
  test('blocks and conditional fields disappear when empty or false', () => {
    expect(ctx.block('k', 'a.list')).toEqual({});
    expect(ctx.block('k', 'a.s')).toEqual({ k: 'x' });
    expect(ctx.when(cond.truthy('a.off'), { x: 1 })).toEqual({});
    expect(ctx.whenItem(cond.truthy('a.on'), 1)).toEqual([1]);
  });
});
