import { mergeConditions, isConditionTrue, findCondition } from '../../../../src/operator/runtime/conditions';

describe('mergeConditions', () => {
  const t0 = new Date('2026-01-01T00:00:00Z');
  const t1 = new Date('2026-01-01T01:00:00Z');

  it('adds conditions with observedGeneration and a transition time', () => {
    const out = mergeConditions(undefined, [{ type: 'Ready', status: true, reason: 'Applied', message: 'ok' }], 3, t0);
    expect(out).toEqual([{ type: 'Ready', status: 'True', reason: 'Applied', message: 'ok', observedGeneration: 3, lastTransitionTime: '2026-01-01T00:00:00Z' }]);
  });

  it('keeps lastTransitionTime when the status does not change, and moves it when it does', () => {
    const first = mergeConditions(undefined, [{ type: 'Ready', status: true, reason: 'Applied' }], 1, t0);
    const same = mergeConditions(first, [{ type: 'Ready', status: true, reason: 'Applied', message: 'again' }], 2, t1);
    expect(same[0].lastTransitionTime).toBe('2026-01-01T00:00:00Z');
    expect(same[0].observedGeneration).toBe(2);
    const flipped = mergeConditions(same, [{ type: 'Ready', status: false, reason: 'ApplyFailed' }], 2, t1);
    expect(flipped[0].lastTransitionTime).toBe('2026-01-01T01:00:00Z');
    expect(isConditionTrue(flipped, 'Ready')).toBe(false);
  });

  it('leaves conditions of other types alone and bounds messages', () => {
    const first = mergeConditions(undefined, [{ type: 'A', status: true, reason: 'X' }], 1, t0);
    const out = mergeConditions(first, [{ type: 'B', status: 'Unknown', reason: 'Y', message: 'm'.repeat(5000) }], 1, t0);
    expect(out.map((c) => c.type)).toEqual(['A', 'B']);
    expect(findCondition(out, 'B')!.message.length).toBe(1024);
  });
});
