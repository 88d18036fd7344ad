// Token-bucket maths: the bound every limiter promises (never more than burst + rate × t admitted
// in any interval), Retry-After that is honest, and all-or-nothing charging of several buckets.
import fc from 'fast-check';
import {
  type BucketLevel,
  type BucketLimit,
  levelAt,
  retryAfterSeconds,
  takeToken,
  takeTokens,
  TOKEN_UNITS,
} from './bucket';

interface Simulated {
  readonly admittedAtMs: number[][];
  readonly outcomes: Array<{ atMs: number; admitted: boolean; retryAfterMs: number }>;
}

/** Runs requests at the given times (ms, ascending) against buckets with these limits, each request charged to `charged` of them. */
function simulate(
  limits: BucketLimit[],
  requests: Array<{ atMs: number; charged: number[] }>,
): Simulated {
  const levels: Array<BucketLevel | undefined> = limits.map(() => undefined);
  const admittedAtMs: number[][] = limits.map(() => []);
  const outcomes: Simulated['outcomes'] = [];
  for (const request of requests) {
    const outcome = takeToken(
      request.charged.map((index) => ({ limit: limits[index]!, level: levels[index] })),
      request.atMs,
    );
    request.charged.forEach((index, position) => {
      levels[index] = outcome.levels[position];
      if (outcome.admitted) admittedAtMs[index]!.push(request.atMs);
    });
    outcomes.push({
      atMs: request.atMs,
      admitted: outcome.admitted,
      retryAfterMs: outcome.retryAfterMs,
    });
  }
  return { admittedAtMs, outcomes };
}

/** In exact integers: admissions in [first, last] of any window never exceed burst + perMinute × length / minute. */
function expectWithinBound(limit: BucketLimit, times: number[]): void {
  for (let from = 0; from < times.length; from += 1) {
    for (let to = from; to < times.length; to += 1) {
      const count = to - from + 1;
      expect(count * TOKEN_UNITS).toBeLessThanOrEqual(
        limit.burst * TOKEN_UNITS + limit.perMinute * (times[to]! - times[from]!),
      );
    }
  }
}

const limitArb = fc.record({
  perMinute: fc.integer({ min: 1, max: 1_200 }),
  burst: fc.integer({ min: 1, max: 40 }),
});
const gapsArb = fc.array(fc.integer({ min: 0, max: 3_000 }), { minLength: 1, maxLength: 120 });

function timesOf(gaps: number[]): number[] {
  let at = 1_700_000_000_000;
  return gaps.map((gap) => (at += gap));
}

describe('token bucket', () => {
  it('admits a full burst at once, then refuses with the time until the next token', () => {
    const limit = { perMinute: 60, burst: 30 };
    const run = simulate(
      [limit],
      Array.from({ length: 31 }, () => ({ atMs: 1_000, charged: [0] })),
    );
    expect(run.outcomes.slice(0, 30).every((outcome) => outcome.admitted)).toBe(true);
    expect(run.outcomes[30]).toEqual({ atMs: 1_000, admitted: false, retryAfterMs: 1_000 });
    expect(retryAfterSeconds(1_000)).toBe(1);
    expect(retryAfterSeconds(1)).toBe(1);
    expect(retryAfterSeconds(1_001)).toBe(2);
  });

  it('never refills past its burst, however long it rests', () => {
    const limit = { perMinute: 600, burst: 5 };
    expect(levelAt({ units: 0, atMs: 0 }, limit, Number.MAX_SAFE_INTEGER)).toBe(5 * TOKEN_UNITS);
    expect(levelAt({ units: 0, atMs: 1_000 }, limit, 500)).toBe(0);
  });

  it('never admits more than burst + rate × t in any interval (property)', () => {
    fc.assert(
      fc.property(limitArb, gapsArb, (limit, gaps) => {
        const times = timesOf(gaps);
        const run = simulate(
          [limit],
          times.map((atMs) => ({ atMs, charged: [0] })),
        );
        expectWithinBound(limit, run.admittedAtMs[0]!);
      }),
      { numRuns: 300 },
    );
  });

  it('admits a request sent once Retry-After has passed, when nothing else was taken meanwhile (property)', () => {
    fc.assert(
      fc.property(limitArb, gapsArb, (limit, gaps) => {
        const times = timesOf(gaps);
        const run = simulate(
          [limit],
          times.map((atMs) => ({ atMs, charged: [0] })),
        );
        const last = run.outcomes[run.outcomes.length - 1]!;
        if (last.admitted) return;
        const retried = simulate(
          [limit],
          [
            ...times.map((atMs) => ({ atMs, charged: [0] })),
            { atMs: last.atMs + last.retryAfterMs, charged: [0] },
          ],
        );
        expect(retried.outcomes[retried.outcomes.length - 1]!.admitted).toBe(true);
        // And not a millisecond earlier: Retry-After is not padded beyond rounding to the unit.
        const early = simulate(
          [limit],
          [
            ...times.map((atMs) => ({ atMs, charged: [0] })),
            { atMs: last.atMs + last.retryAfterMs - 1, charged: [0] },
          ],
        );
        expect(early.outcomes[early.outcomes.length - 1]!.admitted).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('charges several buckets all or nothing, each within its own bound (property)', () => {
    const requestsArb = fc.array(
      fc.record({
        gap: fc.integer({ min: 0, max: 2_000 }),
        charged: fc.subarray([0, 1, 2], { minLength: 1 }),
      }),
      {
        minLength: 1,
        maxLength: 120,
      },
    );
    fc.assert(
      fc.property(
        fc.array(limitArb, { minLength: 3, maxLength: 3 }),
        requestsArb,
        (limits, requests) => {
          const times = timesOf(requests.map((request) => request.gap));
          const timed = requests.map((request, index) => ({
            atMs: times[index]!,
            charged: request.charged,
          }));
          const run = simulate(limits, timed);
          limits.forEach((limit, index) => expectWithinBound(limit, run.admittedAtMs[index]!));
          // A refused request took nothing: replaying only the admitted requests admits every one.
          const replay = simulate(
            limits,
            timed.filter((_, index) => run.outcomes[index]!.admitted),
          );
          expect(replay.outcomes.every((outcome) => outcome.admitted)).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('takes a batch of simultaneous requests exactly as it takes them one by one (property)', () => {
    const levelArb = fc.option(
      fc.record({
        units: fc.integer({ min: 0, max: 40 * TOKEN_UNITS }),
        atMs: fc.integer({ min: 0, max: 10_000 }),
      }),
      { nil: undefined },
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(limitArb, levelArb), { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 0, max: 20_000 }),
        (pairs, count, nowMs) => {
          const buckets = pairs.map(([limit, level]) => ({
            limit,
            level: level && {
              units: Math.min(level.units, limit.burst * TOKEN_UNITS),
              atMs: level.atMs,
            },
          }));
          const batch = takeTokens(buckets, count, nowMs);
          let state = buckets;
          let granted = 0;
          let firstRefusalMs = 0;
          for (let index = 0; index < count; index += 1) {
            const one = takeToken(state, nowMs);
            if (one.admitted) {
              granted += 1;
              state = state.map((bucket, position) => ({ ...bucket, level: one.levels[position] }));
            } else if (firstRefusalMs === 0) {
              firstRefusalMs = one.retryAfterMs;
            }
          }
          expect(batch.granted).toBe(granted);
          expect(batch.retryAfterMs).toBe(firstRefusalMs);
          expect(batch.levels.map((level) => level.units)).toEqual(
            state.map((bucket) => levelAt(bucket.level, bucket.limit, nowMs)),
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});
