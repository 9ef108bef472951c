import { mergeConditions, isConditionTrue, findCondition, type Condition } from '../../../../src/operator/runtime/conditions';

describe('mergeConditions', () => {
  const t0 = new Date('2026-01-01T00:00:00.123Z');
  const t1 = new Date('2026-01-01T01:00:00Z');

  it('adds conditions with observedGeneration and a transition time in whole seconds', () => {
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

  it('updates reason and message without a transition when only they change', () => {
    const first = mergeConditions(undefined, [{ type: 'Ready', status: false, reason: 'Pending', message: 'waiting for pods' }], 1, t0);
    const out = mergeConditions(first, [{ type: 'Ready', status: 'False', reason: 'ImagePullBackOff', message: 'cannot pull' }], 1, t1);
    expect(out[0]).toMatchObject({ status: 'False', reason: 'ImagePullBackOff', message: 'cannot pull', lastTransitionTime: '2026-01-01T00:00:00Z' });
  });

  it('treats a boolean and its string as the same status; Unknown to False is a transition', () => {
    const unknown = mergeConditions(undefined, [{ type: 'Ready', status: 'Unknown', reason: 'Starting' }], 1, t0);
    const fals = mergeConditions(unknown, [{ type: 'Ready', status: false, reason: 'Failed' }], 1, t1);
    expect(fals[0].lastTransitionTime).toBe('2026-01-01T01:00:00Z');
    const again = mergeConditions(fals, [{ type: 'Ready', status: 'False', reason: 'Failed' }], 1, new Date('2026-01-02T00:00:00Z'));
    expect(again[0].lastTransitionTime).toBe('2026-01-01T01:00:00Z');
  });

  it('keeps the order of stored conditions, appends new types and leaves other types untouched', () => {
    const first = mergeConditions(undefined, [{ type: 'A', status: true, reason: 'X' }, { type: 'B', status: true, reason: 'X' }], 1, t0);
    const out = mergeConditions(first, [{ type: 'C', status: 'Unknown', reason: 'Y' }, { type: 'A', status: false, reason: 'Z' }], 2, t1);
    expect(out.map((c) => `${c.type}=${c.status}`)).toEqual(['A=False', 'B=True', 'C=Unknown']);
    expect(findCondition(out, 'B')).toEqual(first[1]);
  });

  it('bounds messages, defaults a missing one to empty, and leaves the stored list alone', () => {
    const stored: Condition[] = mergeConditions(undefined, [{ type: 'A', status: true, reason: 'X', message: 'kept' }], 1, t0);
    const copy = JSON.parse(JSON.stringify(stored));
    const out = mergeConditions(stored, [{ type: 'A', status: false, reason: 'Y' }, { type: 'B', status: 'Unknown', reason: 'Y', message: 'm'.repeat(5000) }], undefined, t1);
    expect(findCondition(out, 'A')).toMatchObject({ message: '', observedGeneration: undefined });
    expect(findCondition(out, 'B')!.message.length).toBe(1024);
    expect(stored).toEqual(copy);
  });

  it('judges a type given twice in one call by its last status against the stored one', () => {
    const stored = mergeConditions(undefined, [{ type: 'Ready', status: true, reason: 'Applied' }], 1, t0);
    const out = mergeConditions(stored, [{ type: 'Ready', status: false, reason: 'Interim' }, { type: 'Ready', status: true, reason: 'Applied' }], 1, t1);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ status: 'True', reason: 'Applied', lastTransitionTime: '2026-01-01T00:00:00Z' });
  });
});

describe('findCondition and isConditionTrue', () => {
  it('answer for missing lists and types', () => {
    expect(findCondition(undefined, 'Ready')).toBeUndefined();
    expect(isConditionTrue(undefined, 'Ready')).toBe(false);
    expect(isConditionTrue([{ type: 'Ready', status: 'Unknown', reason: 'r', message: '', lastTransitionTime: 'x' }], 'Ready')).toBe(false);
  });
});
