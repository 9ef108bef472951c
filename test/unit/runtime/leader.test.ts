// The leader-election decisions, on clocks that disagree by an hour: expiry is judged from when
// this node saw the record change, never from the holder's renewTime; a term is counted from the
// start of the renewal that won it.
import { LeaderRecord, Observation, leaderTimingProblem, mayAcquire, microTime, nextRecord, observe, sameRecord, termAfterSuccess } from '../../../src/runtime/leader';

const HOUR = 3_600_000;
const leaseMs = 15_000;
const renewDeadlineMs = 10_000;
const retryMs = 2_000;

/**
 * A holder renewing every retry period until `stopsAt` (real ms), read by a candidate every 2.2 s;
 * each node stamps times with its own clock (real time + offset). Returns the real time at which
 * the candidate may first take over, or undefined within `until`, and whether the old rule
 * (candidate's now vs the holder's renewTime + duration) would have allowed it earlier.
 */
function simulate(o: { holderOffset: number; candidateOffset: number; stopsAt: number; until: number }) {
  let record: LeaderRecord | undefined;
  let observed: Observation | undefined;
  let oldRuleTookOverAt: number | undefined;
  for (let t = 0; t <= o.until; t += 100) {
    if (t % retryMs === 0 && t <= o.stopsAt) record = nextRecord(record, 'holder', leaseMs / 1000, t + o.holderOffset);
    if (t % 2_200 !== 1_100 || !record) continue;
    const now = t + o.candidateOffset;
    observed = observe(observed, record, now);
    if (oldRuleTookOverAt === undefined && now > Date.parse(record.renewTime!) + leaseMs) oldRuleTookOverAt = t;
    if (mayAcquire('candidate', observed, now, leaseMs)) return { tookOverAt: t, oldRuleTookOverAt };
  }
  return { tookOverAt: undefined, oldRuleTookOverAt };
}

describe('a candidate whose clock is far ahead of the holder', () => {
  it('never takes over a Lease that is still being renewed (the renewTime rule would at once)', () => {
    const run = simulate({ holderOffset: 0, candidateOffset: HOUR, stopsAt: Infinity, until: 300_000 });
    expect(run.tookOverAt).toBeUndefined();
    expect(run.oldRuleTookOverAt).toBe(1_100);
  });

  it('takes over a lease duration after the renewals stop, counted on its own clock', () => {
    const run = simulate({ holderOffset: 0, candidateOffset: HOUR, stopsAt: 30_000, until: 300_000 });
    // Last change seen at 31.9 s (the first read after the 30 s renewal); free after 46.9 s, seen at the read at 47.3 s.
    expect(run.tookOverAt).toBe(47_300);
  });
});

describe('a candidate whose clock is far behind the holder', () => {
  it('takes over after a lease duration of no observed change (the renewTime rule would wait an hour)', () => {
    const run = simulate({ holderOffset: 0, candidateOffset: -HOUR, stopsAt: 30_000, until: 300_000 });
    expect(run.tookOverAt).toBe(47_300);
    expect(run.oldRuleTookOverAt).toBeUndefined();
  });

  it('never takes over while the holder renews', () => {
    expect(simulate({ holderOffset: 0, candidateOffset: -HOUR, stopsAt: Infinity, until: 300_000 }).tookOverAt).toBeUndefined();
  });
});

describe('observe', () => {
  const record: LeaderRecord = { holderIdentity: 'a', leaseDurationSeconds: 15, acquireTime: microTime(0), renewTime: microTime(0), leaseTransitions: 2 };

  it('keeps the time of the last change while the record stays the same', () => {
    const first = observe(undefined, record, 1_000);
    expect(observe(first, { ...record }, 9_000)).toEqual({ record, changedAt: 1_000 });
  });

  it.each<[string, Partial<LeaderRecord>]>([
    ['renewTime', { renewTime: microTime(2_000) }],
    ['holderIdentity', { holderIdentity: 'b' }],
    ['leaseTransitions', { leaseTransitions: 3 }],
    ['leaseDurationSeconds', { leaseDurationSeconds: 30 }],
    ['acquireTime', { acquireTime: microTime(5) }],
  ])('a change of %s is a change', (_field, change) => {
    const first = observe(undefined, record, 1_000);
    expect(observe(first, { ...record, ...change }, 9_000).changedAt).toBe(9_000);
  });

  it('treats an absent holder and transition count like empty ones', () => {
    expect(sameRecord({ holderIdentity: '', leaseTransitions: 0 }, {})).toBe(true);
  });
});

describe('mayAcquire', () => {
  const seen = (record: LeaderRecord, changedAt = 0): Observation => ({ record, changedAt });

  it('takes a released or empty Lease at once, and always renews its own', () => {
    expect(mayAcquire('me', seen({ holderIdentity: '', leaseDurationSeconds: 1 }), 0, leaseMs)).toBe(true);
    expect(mayAcquire('me', seen({}), 0, leaseMs)).toBe(true);
    expect(mayAcquire('me', seen({ holderIdentity: 'me', leaseDurationSeconds: 15 }), 0, leaseMs)).toBe(true);
  });

  it("judges expiry by the record's lease duration, strictly after it", () => {
    const other = seen({ holderIdentity: 'other', leaseDurationSeconds: 40 }, 1_000);
    expect(mayAcquire('me', other, 41_000, leaseMs)).toBe(false);
    expect(mayAcquire('me', other, 41_001, leaseMs)).toBe(true);
    expect(mayAcquire('me', seen({ holderIdentity: 'other' }, 1_000), 16_001, leaseMs)).toBe(true);
  });
});

describe('termAfterSuccess', () => {
  it('counts the renew deadline from the start of the attempt, not from a slow answer', () => {
    expect(termAfterSuccess(1_000, 1_050, renewDeadlineMs)).toBe(11_000);
    expect(termAfterSuccess(1_000, 10_900, renewDeadlineMs)).toBe(11_000);
  });

  it('gives no term for an answer that arrives at or after the deadline', () => {
    expect(termAfterSuccess(1_000, 11_000, renewDeadlineMs)).toBeUndefined();
    expect(termAfterSuccess(1_000, 60_000, renewDeadlineMs)).toBeUndefined();
  });

  it('ends every term before a candidate may take over, however late the write landed and the answer came', () => {
    // The write lands at `start + landed`; a candidate sees it no earlier and waits leaseMs.
    for (let landed = 0; landed < renewDeadlineMs; landed += 250) {
      for (let answered = landed; answered < renewDeadlineMs + 5_000; answered += 250) {
        const end = termAfterSuccess(0, answered, renewDeadlineMs);
        if (end !== undefined) expect(end).toBeLessThan(landed + leaseMs);
      }
    }
  });
});

describe('nextRecord', () => {
  it('starts a new Lease with no transitions', () => {
    expect(nextRecord(undefined, 'a', 15, 0)).toEqual({ holderIdentity: 'a', leaseDurationSeconds: 15, acquireTime: microTime(0), renewTime: microTime(0), leaseTransitions: 0 });
  });

  it('renews its own record: only renewTime moves', () => {
    const held = nextRecord(undefined, 'a', 15, 0);
    expect(nextRecord(held, 'a', 15, 2_000)).toEqual({ ...held, renewTime: microTime(2_000) });
  });

  it('counts a take-over, from another holder or a released Lease', () => {
    const held = { ...nextRecord(undefined, 'a', 15, 0), leaseTransitions: 4 };
    expect(nextRecord(held, 'b', 15, 9_000)).toEqual({ holderIdentity: 'b', leaseDurationSeconds: 15, acquireTime: microTime(9_000), renewTime: microTime(9_000), leaseTransitions: 5 });
    expect(nextRecord({ ...held, holderIdentity: '' }, 'a', 15, 9_000).leaseTransitions).toBe(5);
  });

  it('writes MicroTime as the API server does', () => {
    expect(microTime(Date.UTC(2025, 0, 2, 3, 4, 5, 678))).toBe('2025-01-02T03:04:05.678000Z');
  });
});

describe('leaderTimingProblem', () => {
  it('accepts the defaults and the test timing', () => {
    expect(leaderTimingProblem({ leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 })).toBeUndefined();
    expect(leaderTimingProblem({ leaseDurationMs: 6_000, renewDeadlineMs: 4_000, retryPeriodMs: 1_000 })).toBeUndefined();
  });

  it('refuses a renew deadline that is not shorter than the lease, or too short for a retry', () => {
    expect(leaderTimingProblem({ leaseDurationMs: 10_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 })).toMatch(/shorter than the lease duration/);
    expect(leaderTimingProblem({ leaseDurationMs: 15_000, renewDeadlineMs: 2_400, retryPeriodMs: 2_000 })).toMatch(/1.2 × the retry period/);
  });
});
