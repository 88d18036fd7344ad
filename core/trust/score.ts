// The service's own trust score (issue #21): the Wilson score lower bound of the share of verified
// outcomes, so three good deliveries never outrank three hundred. Pure: counts and `now` come in.
// Floats are fine for a score (not money); only +, −, ×, ÷ and sqrt are used, which IEEE-754 and
// ECMAScript round exactly, so the same inputs give the same bits everywhere.

/** z of a two-sided 95 % interval, as DECISIONS and the issue state it. */
export const DEFAULT_Z = 1.96;

/** Fewer finished outcomes than this and the answer is SCORE_INSUFFICIENT_HISTORY. */
export const DEFAULT_MIN_OBSERVATIONS = 5;

/** z beyond 6 (a 99.9999998 % interval) says nothing useful; the bound keeps the series below exact. */
export const MAX_Z = 6;

/**
 * Finished outcomes with one provider (or one buyer), each purchase counted once, in exactly one
 * bucket, by its final outcome. Success: `verified` (delivery verified by the service). Failure:
 * `failed` (delivery failed or not verifiable, a lie caught by RDAP included), `disputed`,
 * `refunds` (refunded after the provider was chosen), `ambiguous` (a payment that went ambiguous
 * and was resolved against the provider). Open purchases, open ambiguous ones and purchases that
 * never reached the provider (blocked, expired, cancelled before payment) are not counted.
 */
export interface OutcomeCounts {
  readonly verified: number;
  readonly failed: number;
  readonly disputed: number;
  readonly refunds: number;
  readonly ambiguous: number;
  /** The first counted outcome; null when there is none. */
  readonly firstSeenAt: Date | null;
}

export interface ScoreOptions {
  readonly z?: number;
  readonly minObservations?: number;
}

export interface ScoreBasis {
  readonly verified: number;
  readonly failed: number;
  readonly disputed: number;
  readonly refunds: number;
  readonly ambiguous: number;
  /** verified + failed + disputed + refunds + ambiguous. */
  readonly observations: number;
  /** Whole seconds from firstSeenAt to now (reported, not weighted); null without history. */
  readonly ageSeconds: number | null;
}

export type ScoreResult =
  | {
      readonly ok: true;
      /** floor(lowerBound × 100), 0–100. */
      readonly score: number;
      /** The two-sided confidence level of the interval z gives (0.95 for 1.96), rounded to 4 decimals. */
      readonly confidence: number;
      /** The Wilson lower bound in [0, 1], unrounded. */
      readonly lowerBound: number;
      readonly basis: ScoreBasis;
    }
  | {
      readonly ok: false;
      readonly code: 'SCORE_INSUFFICIENT_HISTORY';
      readonly observations: number;
      readonly minObservations: number;
      readonly basis: ScoreBasis;
    };

/**
 * Wilson lower bound of a success share: (p̂ + z²/2n − z·√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n), with
 * n = trials, p̂ = successes / n. With no success the bound is exactly 0 (the two halves would
 * cancel only up to a rounding error, which could rank one such vendor above another); otherwise
 * it is clamped to [0, 1]. Needs at least one trial.
 */
export function wilsonLowerBound(successes: number, trials: number, z: number): number {
  assertCount('successes', successes);
  assertCount('trials', trials);
  assertZ(z);
  if (trials === 0 || successes > trials)
    throw new RangeError('need 0 ≤ successes ≤ trials and trials ≥ 1');
  if (successes === 0) return 0;
  const n = trials;
  const p = successes / n;
  const z2 = z * z;
  const center = p + z2 / (2 * n);
  const margin = z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  const lower = (center - margin) / (1 + z2 / n);
  return Math.min(1, Math.max(0, lower));
}

/**
 * The score of one provider at `now`, or the named refusal when it has fewer than minObservations
 * finished outcomes (0/0 is always refused: minObservations is at least 1). See OutcomeCounts for
 * what counts as success and failure.
 */
export function vendorScore(
  counts: OutcomeCounts,
  now: Date,
  options: ScoreOptions = {},
): ScoreResult {
  const z = options.z ?? DEFAULT_Z;
  const minObservations = options.minObservations ?? DEFAULT_MIN_OBSERVATIONS;
  assertZ(z);
  if (!Number.isSafeInteger(minObservations) || minObservations < 1)
    throw new RangeError('minObservations must be an integer ≥ 1');
  const basis = basisOf(counts, now);
  if (basis.observations < minObservations) {
    return {
      ok: false,
      code: 'SCORE_INSUFFICIENT_HISTORY',
      observations: basis.observations,
      minObservations,
      basis,
    };
  }
  const lowerBound = wilsonLowerBound(basis.verified, basis.observations, z);
  const score = Math.min(100, Math.max(0, Math.floor(lowerBound * 100)));
  return { ok: true, score, confidence: confidenceOfZ(z), lowerBound, basis };
}

function basisOf(counts: OutcomeCounts, now: Date): ScoreBasis {
  const { verified, failed, disputed, refunds, ambiguous, firstSeenAt } = counts;
  for (const [name, value] of Object.entries({ verified, failed, disputed, refunds, ambiguous }))
    assertCount(name, value);
  const observations = verified + failed + disputed + refunds + ambiguous;
  assertCount('observations', observations);
  const nowMs = now instanceof Date ? now.getTime() : Number.NaN;
  if (!Number.isFinite(nowMs)) throw new RangeError('now must be a valid Date');
  let ageSeconds: number | null = null;
  if (firstSeenAt !== null) {
    const firstMs = firstSeenAt instanceof Date ? firstSeenAt.getTime() : Number.NaN;
    if (!Number.isFinite(firstMs) || firstMs > nowMs)
      throw new RangeError('firstSeenAt must be a valid Date no later than now');
    ageSeconds = Math.floor((nowMs - firstMs) / 1000);
  }
  return { verified, failed, disputed, refunds, ambiguous, observations, ageSeconds };
}

/**
 * erf(z/√2), the two-sided level of a ±z interval, from its Maclaurin series (only +, −, ×, ÷ and
 * sqrt, so it is as deterministic as the bound), rounded to 4 decimals: 1.96 → 0.95.
 */
export function confidenceOfZ(z: number): number {
  assertZ(z);
  const x = z / Math.SQRT2;
  const x2 = x * x;
  let term = x; // (−1)^k x^(2k+1) / k!
  let sum = 0;
  for (let k = 0; k < 200 && Math.abs(term) > 1e-18; k += 1) {
    sum += term / (2 * k + 1);
    term = (-term * x2) / (k + 1);
  }
  const level = (2 / Math.sqrt(Math.PI)) * sum;
  return Math.round(Math.min(1, Math.max(0, level)) * 10_000) / 10_000;
}

function assertCount(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0)
    throw new RangeError(`${name} must be a whole number ≥ 0`);
}

function assertZ(z: number): void {
  if (typeof z !== 'number' || !Number.isFinite(z) || z <= 0 || z > MAX_Z)
    throw new RangeError(`z must be a number in (0, ${MAX_Z}]`);
}
