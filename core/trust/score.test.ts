// The Wilson-lower-bound score: known values checked against the formula written independently
// here, the named refusal without enough history, what counts as failure, bounds, monotonicity,
// and that a little good history never outranks a lot of equally good history.
import fc from 'fast-check';
import { ERROR_CODES } from '../errors';
import {
  confidenceOfZ,
  DEFAULT_MIN_OBSERVATIONS,
  DEFAULT_Z,
  vendorScore,
  wilsonLowerBound,
  type OutcomeCounts,
} from './score';

const NOW = new Date('2026-11-22T10:00:00.000Z');
const DAY_AGO = new Date('2026-11-21T10:00:00.000Z');

/** The same bound in its other closed form, (2s + z² − z·√(z² + 4sf/n)) / (2(n + z²)). */
function independentLowerBound(s: number, f: number, z: number): number {
  const n = s + f;
  return (2 * s + z * z - z * Math.sqrt(z * z + (4 * s * f) / n)) / (2 * (n + z * z));
}

const counts = (
  verified: number,
  failed = 0,
  rest: Partial<OutcomeCounts> = {},
): OutcomeCounts => ({
  verified,
  failed,
  disputed: 0,
  refunds: 0,
  ambiguous: 0,
  firstSeenAt: DAY_AGO,
  ...rest,
});

function scored(c: OutcomeCounts, minObservations = 1) {
  const result = vendorScore(c, NOW, { minObservations });
  if (!result.ok) throw new Error(`expected a score for ${JSON.stringify(c)}`);
  return result;
}

describe('wilsonLowerBound', () => {
  it('gives 10 of 10 at z = 1.96 a lower bound of 0.72246…, the formula computed independently', () => {
    const bound = wilsonLowerBound(10, 10, 1.96);
    expect(bound).toBeCloseTo(1 / (1 + (1.96 * 1.96) / 10), 12);
    expect(bound).toBeCloseTo(0.7224598, 6);
    expect(bound).toBeCloseTo(independentLowerBound(10, 0, 1.96), 12);
  });

  it('matches the independent formula across many histories', () => {
    fc.assert(
      fc.property(
        fc.nat(100_000),
        fc.nat(100_000),
        fc.double({ min: 0.5, max: 4, noNaN: true }),
        (s, f, z) => {
          fc.pre(s + f > 0);
          expect(wilsonLowerBound(s, s + f, z)).toBeCloseTo(
            Math.max(0, independentLowerBound(s, f, z)),
            10,
          );
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('is exactly 0 when nothing succeeded, never a rounding error either side', () => {
    for (const n of [1, 2, 3, 7, 10, 874, 1000, 3427, 123_457])
      expect(wilsonLowerBound(0, n, 1.96)).toBe(0);
  });

  it('refuses impossible inputs', () => {
    expect(() => wilsonLowerBound(0, 0, 1.96)).toThrow(RangeError);
    expect(() => wilsonLowerBound(3, 2, 1.96)).toThrow(RangeError);
    expect(() => wilsonLowerBound(1.5, 2, 1.96)).toThrow(RangeError);
    expect(() => wilsonLowerBound(1, 2, 0)).toThrow(RangeError);
    expect(() => wilsonLowerBound(1, 2, Number.NaN)).toThrow(RangeError);
    expect(() => wilsonLowerBound(1, 2, 7)).toThrow(RangeError);
  });
});

describe('vendorScore', () => {
  it('answers score, confidence, lowerBound and basis; score is the lower bound × 100, floored', () => {
    const result = vendorScore(counts(10), NOW, { minObservations: 5 });
    expect(result).toEqual({
      ok: true,
      score: 72,
      confidence: 0.95,
      lowerBound: wilsonLowerBound(10, 10, DEFAULT_Z),
      basis: {
        verified: 10,
        failed: 0,
        disputed: 0,
        refunds: 0,
        ambiguous: 0,
        observations: 10,
        ageSeconds: 86_400,
      },
    });
  });

  it('refuses 0/0 and anything under minObservations by name, never a made-up number', () => {
    expect(DEFAULT_MIN_OBSERVATIONS).toBe(5);
    const none = vendorScore(counts(0, 0, { firstSeenAt: null }), NOW);
    expect(none).toEqual({
      ok: false,
      code: 'SCORE_INSUFFICIENT_HISTORY',
      observations: 0,
      minObservations: 5,
      basis: {
        verified: 0,
        failed: 0,
        disputed: 0,
        refunds: 0,
        ambiguous: 0,
        observations: 0,
        ageSeconds: null,
      },
    });
    expect(vendorScore(counts(0, 0, { firstSeenAt: null }), NOW, { minObservations: 1 }).ok).toBe(
      false,
    );
    expect(vendorScore(counts(3, 1), NOW).ok).toBe(false);
    expect(vendorScore(counts(3, 2), NOW).ok).toBe(true);
    expect(ERROR_CODES.SCORE_INSUFFICIENT_HISTORY.status).toBe(422);
    expect(() => vendorScore(counts(1), NOW, { minObservations: 0 })).toThrow(RangeError);
  });

  it('counts failed, disputed, refunded and ambiguous-resolved-against outcomes each as one failure', () => {
    const bound = wilsonLowerBound(10, 14, DEFAULT_Z);
    expect(scored(counts(10, 4)).lowerBound).toBe(bound);
    expect(scored(counts(10, 0, { disputed: 4 })).lowerBound).toBe(bound);
    expect(scored(counts(10, 0, { refunds: 4 })).lowerBound).toBe(bound);
    expect(scored(counts(10, 0, { ambiguous: 4 })).lowerBound).toBe(bound);
    expect(scored(counts(10, 1, { disputed: 1, refunds: 1, ambiguous: 1 })).lowerBound).toBe(bound);
  });

  it('reports the age of the history without weighting it, and refuses a first outcome after now', () => {
    expect(
      scored(counts(10, 0, { firstSeenAt: new Date('2020-01-01T00:00:00Z') })).lowerBound,
    ).toBe(scored(counts(10)).lowerBound);
    expect(
      scored(counts(10, 0, { firstSeenAt: new Date(NOW.getTime() - 1999) })).basis.ageSeconds,
    ).toBe(1);
    expect(() =>
      vendorScore(counts(10, 0, { firstSeenAt: new Date(NOW.getTime() + 1) }), NOW),
    ).toThrow(RangeError);
    expect(() => vendorScore(counts(10), new Date(Number.NaN))).toThrow(RangeError);
    expect(() => vendorScore(counts(-1), NOW)).toThrow(RangeError);
  });

  it('names the confidence level of z', () => {
    expect(confidenceOfZ(1.96)).toBe(0.95);
    expect(confidenceOfZ(1.6449)).toBe(0.9);
    expect(confidenceOfZ(2.5758)).toBe(0.99);
    expect(confidenceOfZ(1)).toBe(0.6827);
    expect(vendorScore(counts(10), NOW, { z: 2.5758 })).toMatchObject({
      ok: true,
      confidence: 0.99,
    });
  });

  it('never lets three good outcomes outrank three hundred', () => {
    expect(scored(counts(3)).score).toBeLessThan(scored(counts(300)).score);
    expect(scored(counts(3, 1)).score).toBeLessThan(scored(counts(300, 100)).score);
  });

  const history = fc.record({ s: fc.nat(5000), f: fc.nat(5000) }).filter(({ s, f }) => s + f > 0);

  it('property: with the same failure ratio, more history never scores lower', () => {
    fc.assert(
      fc.property(history, fc.integer({ min: 2, max: 200 }), ({ s, f }, k) => {
        const small = scored(counts(s, f));
        const large = scored(counts(k * s, k * f));
        expect(large.lowerBound).toBeGreaterThanOrEqual(small.lowerBound);
        expect(large.score).toBeGreaterThanOrEqual(small.score);
      }),
      { numRuns: 2000 },
    );
  });

  it('property: one more success never lowers the score, one more failure never raises it', () => {
    fc.assert(
      fc.property(history, ({ s, f }) => {
        const base = scored(counts(s, f));
        const moreGood = scored(counts(s + 1, f));
        const moreBad = scored(counts(s, f + 1));
        expect(moreGood.lowerBound).toBeGreaterThan(base.lowerBound);
        expect(moreGood.score).toBeGreaterThanOrEqual(base.score);
        expect(moreBad.lowerBound).toBeLessThanOrEqual(base.lowerBound);
        expect(moreBad.score).toBeLessThanOrEqual(base.score);
      }),
      { numRuns: 2000 },
    );
  });

  it('property: score is an integer 0–100 at or below the observed share, lowerBound in [0, 1]', () => {
    fc.assert(
      fc.property(history, fc.double({ min: 0.1, max: 6, noNaN: true }), ({ s, f }, z) => {
        const result = vendorScore(counts(s, f), NOW, { z, minObservations: 1 });
        if (!result.ok) throw new Error('expected a score');
        expect(Number.isInteger(result.score)).toBe(true);
        expect(result.score).toBeGreaterThanOrEqual(0);
        expect(result.score).toBeLessThanOrEqual(100);
        expect(result.score).toBe(Math.floor(result.lowerBound * 100));
        expect(result.lowerBound).toBeGreaterThanOrEqual(0);
        expect(result.lowerBound).toBeLessThanOrEqual(s / (s + f));
        expect(result.confidence).toBeGreaterThan(0);
        expect(result.confidence).toBeLessThanOrEqual(1);
      }),
      { numRuns: 2000 },
    );
  });
});
