// Quote arithmetic: DECISIONS' example, CEIL on the provider cost for fee and spread, exact
// bounds, exact moves between assets (never rounded), and the quote's id and 5-minute life.
import fc from 'fast-check';
import { AppError } from '../errors';
import {
  assertQuoteFresh,
  assertQuoteId,
  DEFAULT_SPREAD_BPS,
  isQuoteFresh,
  QUOTE_TTL_SECONDS,
  quoteCrossRailFunding,
  quoteExpiresAt,
  quoteFunding,
  RailScalingError,
  settlementToFundingAtomic,
} from './quote';

/** CEIL(a × b / 10 000), written independently of core/money/bps. */
const ceilBps = (amount: bigint, bps: bigint): bigint => (amount * bps + 9_999n) / 10_000n;

describe('quoteFunding', () => {
  it('gives DECISIONS’ example: domains.check 50000 at 0 bp fee and the default 50 bp spread is 50250', () => {
    expect(DEFAULT_SPREAD_BPS).toBe(50n);
    expect(quoteFunding({ providerCostAtomic: 50_000n, feeBps: 0n })).toEqual({
      providerCostAtomic: 50_000n,
      feeAtomic: 0n,
      spreadAtomic: 250n,
      fundingAtomic: 50_250n,
    });
  });

  it('rounds fee and spread up, each on the provider cost alone', () => {
    // 50 bp of 50001 is 250.005 → 251; 125 bp of 50001 is 625.0125 → 626 (not 125 bp of cost + spread).
    expect(quoteFunding({ providerCostAtomic: 50_001n, feeBps: 125n })).toEqual({
      providerCostAtomic: 50_001n,
      feeAtomic: 626n,
      spreadAtomic: 251n,
      fundingAtomic: 50_878n,
    });
    expect(quoteFunding({ providerCostAtomic: 1n, feeBps: 1n, spreadBps: 1n })).toEqual({
      providerCostAtomic: 1n,
      feeAtomic: 1n,
      spreadAtomic: 1n,
      fundingAtomic: 3n,
    });
    expect(quoteFunding({ providerCostAtomic: 7n, feeBps: 0n, spreadBps: 0n }).fundingAtomic).toBe(
      7n,
    );
    expect(
      quoteFunding({ providerCostAtomic: 7n, feeBps: 10_000n, spreadBps: 10_000n }).fundingAtomic,
    ).toBe(21n);
  });

  it('refuses a zero, negative, non-bigint or over-uint256 cost and basis points outside 0–10 000', () => {
    expect(() => quoteFunding({ providerCostAtomic: 0n, feeBps: 0n })).toThrow(RangeError);
    expect(() => quoteFunding({ providerCostAtomic: -1n, feeBps: 0n })).toThrow(RangeError);
    expect(() => quoteFunding({ providerCostAtomic: 2n ** 256n, feeBps: 0n })).toThrow(RangeError);
    expect(() =>
      quoteFunding({ providerCostAtomic: 50_000 as unknown as bigint, feeBps: 0n }),
    ).toThrow(TypeError);
    expect(() => quoteFunding({ providerCostAtomic: 50_000n, feeBps: -1n })).toThrow(RangeError);
    expect(() => quoteFunding({ providerCostAtomic: 50_000n, feeBps: 10_001n })).toThrow(
      RangeError,
    );
    expect(() =>
      quoteFunding({ providerCostAtomic: 50_000n, feeBps: 0n, spreadBps: 10_001n }),
    ).toThrow(RangeError);
    expect(() =>
      quoteFunding({ providerCostAtomic: 50_000n, feeBps: 30 as unknown as bigint }),
    ).toThrow(TypeError);
    // A cost that fits but whose funding amount would not fit a uint256.
    expect(() => quoteFunding({ providerCostAtomic: 2n ** 256n - 1n, feeBps: 0n })).toThrow(
      RangeError,
    );
  });

  it('property: funding = cost + fee + spread, each charge the exact ceiling, never short of the exact value', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10n ** 30n }),
        fc.bigInt({ min: 0n, max: 10_000n }),
        fc.bigInt({ min: 0n, max: 10_000n }),
        (cost, feeBps, spreadBps) => {
          const quote = quoteFunding({ providerCostAtomic: cost, feeBps, spreadBps });
          expect(quote.feeAtomic).toBe(ceilBps(cost, feeBps));
          expect(quote.spreadAtomic).toBe(ceilBps(cost, spreadBps));
          expect(quote.fundingAtomic).toBe(cost + quote.feeAtomic + quote.spreadAtomic);
          expect(quote.feeAtomic * 10_000n >= cost * feeBps).toBe(true);
          expect((quote.feeAtomic - 1n) * 10_000n < cost * feeBps).toBe(true);
          expect(quote.fundingAtomic >= cost).toBe(true);
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('settlementToFundingAtomic', () => {
  it('is the same atomic number when both assets have 6 decimals (USDC → USDT0)', () => {
    expect(settlementToFundingAtomic(50_000n, 6, 6)).toBe(50_000n);
  });

  it('changes unit by a power of ten only when exact, and refuses by name otherwise', () => {
    expect(settlementToFundingAtomic(50_000n, 6, 18)).toBe(50_000n * 10n ** 12n);
    expect(settlementToFundingAtomic(50_000n * 10n ** 12n, 18, 6)).toBe(50_000n);
    let thrown: unknown;
    try {
      settlementToFundingAtomic(50_000n * 10n ** 12n + 1n, 18, 6);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(RailScalingError);
    expect((thrown as RailScalingError).reason).toBe('INEXACT_SCALING');
    expect((thrown as RailScalingError).name).toBe('RailScalingError');
  });

  it('refuses impossible decimals', () => {
    expect(() => settlementToFundingAtomic(1n, 6, 37)).toThrow(RangeError);
    expect(() => settlementToFundingAtomic(1n, -1, 6)).toThrow(RangeError);
    expect(() => settlementToFundingAtomic(1n, 6.5, 6)).toThrow(RangeError);
  });

  it('property: whatever it answers converts back exactly; what it refuses had digits below the funding unit', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10n ** 30n }),
        fc.integer({ min: 0, max: 24 }),
        fc.integer({ min: 0, max: 24 }),
        (amount, from, to) => {
          let converted: bigint;
          try {
            converted = settlementToFundingAtomic(amount, from, to);
          } catch (error) {
            expect(error).toBeInstanceOf(RailScalingError);
            expect(to < from && amount % 10n ** BigInt(from - to) !== 0n).toBe(true);
            return;
          }
          expect(settlementToFundingAtomic(converted, to, from)).toBe(amount);
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('quoteCrossRailFunding', () => {
  it('quotes DECISIONS’ example across rails and keeps what the merchant is paid', () => {
    expect(
      quoteCrossRailFunding({
        settlementCostAtomic: 50_000n,
        settlementDecimals: 6,
        fundingDecimals: 6,
        feeBps: 0n,
      }),
    ).toEqual({
      settlementCostAtomic: 50_000n,
      providerCostAtomic: 50_000n,
      feeAtomic: 0n,
      spreadAtomic: 250n,
      fundingAtomic: 50_250n,
    });
  });

  it('moves the cost into the funding unit before charging, so the charges round in the finer unit', () => {
    const quote = quoteCrossRailFunding({
      settlementCostAtomic: 50_001n,
      settlementDecimals: 6,
      fundingDecimals: 8,
      feeBps: 0n,
    });
    expect(quote).toEqual({
      settlementCostAtomic: 50_001n,
      providerCostAtomic: 5_000_100n,
      feeAtomic: 0n,
      spreadAtomic: 25_001n,
      fundingAtomic: 5_025_101n,
    });
    expect(() =>
      quoteCrossRailFunding({
        settlementCostAtomic: 50_001n,
        settlementDecimals: 6,
        fundingDecimals: 4,
        feeBps: 0n,
      }),
    ).toThrow(RailScalingError);
  });
});

describe('quote id and expiry', () => {
  const quotedAt = new Date('2026-11-22T10:00:00.000Z');

  it('accepts cq_ + 18 lowercase hex only', () => {
    expect(() => assertQuoteId('cq_0123456789abcdef01')).not.toThrow();
    for (const bad of [
      'cq_0123456789abcdef0',
      'cq_0123456789abcdef012',
      'cq_0123456789ABCDEF01',
      'ci_0123456789abcdef01',
      ' cq_0123456789abcdef01',
      7,
    ]) {
      expect(() => assertQuoteId(bad)).toThrow(
        expect.objectContaining({ code: 'REQUEST_INVALID' }),
      );
    }
  });

  it('lives five minutes: fresh one millisecond before expiry, expired at the expiry instant', () => {
    expect(QUOTE_TTL_SECONDS).toBe(300);
    const expiresAt = quoteExpiresAt(quotedAt);
    expect(expiresAt.toISOString()).toBe('2026-11-22T10:05:00.000Z');
    expect(isQuoteFresh(expiresAt, quotedAt)).toBe(true);
    expect(isQuoteFresh(expiresAt, new Date(expiresAt.getTime() - 1))).toBe(true);
    expect(isQuoteFresh(expiresAt, expiresAt)).toBe(false);
  });

  it('refuses an expired quote with 409 QUOTE_EXPIRED naming it', () => {
    const quote = { quoteId: 'cq_0123456789abcdef01', expiresAt: quoteExpiresAt(quotedAt) };
    expect(() => assertQuoteFresh(quote, new Date('2026-11-22T10:04:59.999Z'))).not.toThrow();
    let thrown: unknown;
    try {
      assertQuoteFresh(quote, new Date('2026-11-22T10:05:00.000Z'));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AppError);
    const appError = thrown as AppError;
    expect([appError.code, appError.status, appError.retryable]).toEqual([
      'QUOTE_EXPIRED',
      409,
      false,
    ]);
    expect(appError.details).toEqual({
      quoteId: 'cq_0123456789abcdef01',
      expiresAt: '2026-11-22T10:05:00.000Z',
    });
  });

  it('treats an invalid instant as a bug, not as fresh', () => {
    expect(() => isQuoteFresh(new Date(Number.NaN), quotedAt)).toThrow(RangeError);
    expect(() => isQuoteFresh(quoteExpiresAt(quotedAt), new Date('not a date'))).toThrow(
      RangeError,
    );
    expect(() => quoteExpiresAt(new Date(Number.NaN))).toThrow(RangeError);
  });
});
