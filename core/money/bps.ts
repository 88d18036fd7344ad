// Basis-point charges with the rounding named at every call site: fees and spread round up
// (CEIL) so the service never under-collects, payouts round down (FLOOR) so it never over-pays.
// Integer arithmetic only; rounding is mathematical (toward ±infinity), also for negatives.

export type Rounding = 'CEIL' | 'FLOOR';

export const BPS_DENOMINATOR = 10_000n;

/** Charges above 100% exist (penalties) but nothing sane exceeds 1000%. */
export const MAX_BPS = 100_000n;

/** amountAtomic × bps / 10 000, rounded as told. */
export function applyBps(amountAtomic: bigint, bps: bigint | number, rounding: Rounding): bigint {
  if (typeof amountAtomic !== 'bigint') throw new TypeError('amountAtomic must be a bigint');
  const bpsValue = toBps(bps);
  const numerator = amountAtomic * bpsValue;
  const quotient = numerator / BPS_DENOMINATOR;
  const remainder = numerator % BPS_DENOMINATOR;
  if (remainder === 0n) return quotient;
  // bigint division truncates toward zero; step away from zero only in the direction asked.
  if (rounding === 'CEIL') return numerator > 0n ? quotient + 1n : quotient;
  if (rounding === 'FLOOR') return numerator < 0n ? quotient - 1n : quotient;
  throw new RangeError(`unknown rounding ${String(rounding)}`);
}

function toBps(bps: bigint | number): bigint {
  if (typeof bps === 'number') {
    if (!Number.isSafeInteger(bps)) throw new RangeError('bps must be an integer');
    bps = BigInt(bps);
  }
  if (typeof bps !== 'bigint' || bps < 0n || bps > MAX_BPS) {
    throw new RangeError(`bps must be an integer 0–${MAX_BPS}`);
  }
  return bps;
}
