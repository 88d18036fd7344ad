// Basis-point charges: the rounding mode is honoured exactly, for every sign, and CEIL and
// FLOOR never differ by more than one atomic unit.
import fc from 'fast-check';
import { applyBps } from './bps';

describe('applyBps', () => {
  it('rounds fees up and payouts down', () => {
    // 50 bp of 50000 is exactly 250: both roundings agree.
    expect(applyBps(50_000n, 50, 'CEIL')).toBe(250n);
    expect(applyBps(50_000n, 50, 'FLOOR')).toBe(250n);
    // 50 bp of 50001 is 250.005.
    expect(applyBps(50_001n, 50, 'CEIL')).toBe(251n);
    expect(applyBps(50_001n, 50, 'FLOOR')).toBe(250n);
    expect(applyBps(1n, 1, 'CEIL')).toBe(1n);
    expect(applyBps(1n, 1, 'FLOOR')).toBe(0n);
  });

  it('rounds toward ±infinity for negative amounts too', () => {
    expect(applyBps(-50_001n, 50, 'CEIL')).toBe(-250n);
    expect(applyBps(-50_001n, 50, 'FLOOR')).toBe(-251n);
  });

  it('refuses fractional or out-of-range basis points', () => {
    expect(() => applyBps(100n, 1.5, 'CEIL')).toThrow(RangeError);
    expect(() => applyBps(100n, -1, 'CEIL')).toThrow(RangeError);
    expect(() => applyBps(100n, 100_001n, 'CEIL')).toThrow(RangeError);
  });

  it('CEIL and FLOOR bracket the exact value and differ by at most one unit', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }),
        fc.integer({ min: 0, max: 100_000 }),
        (amount, bps) => {
          const up = applyBps(amount, bps, 'CEIL');
          const down = applyBps(amount, bps, 'FLOOR');
          const exactTimes10k = amount * BigInt(bps);
          expect(down * 10_000n <= exactTimes10k).toBe(true);
          expect(up * 10_000n >= exactTimes10k).toBe(true);
          expect(up - down === 0n || up - down === 1n).toBe(true);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
