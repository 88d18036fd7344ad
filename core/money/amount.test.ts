// Exact money parsing and formatting: every refused spelling has a named reason, and formatting
// round-trips through parsing for any amount and decimals.
import fc from 'fast-check';
import {
  AmountFormatError,
  assetAmount,
  formatAmount,
  parseAtomicAmount,
  parseDisplayAmount,
  UINT256_MAX,
} from './amount';

function reasonOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof AmountFormatError) return error.reason;
    throw error;
  }
  throw new Error('expected an AmountFormatError');
}

describe('parseDisplayAmount', () => {
  it('parses display strings exactly into atomic units', () => {
    expect(parseDisplayAmount('25.00', 6)).toBe(25_000_000n);
    expect(parseDisplayAmount('25', 6)).toBe(25_000_000n);
    expect(parseDisplayAmount('0.000001', 6)).toBe(1n);
    expect(parseDisplayAmount('1.5', 18)).toBe(1_500_000_000_000_000_000n);
    expect(parseDisplayAmount('7', 0)).toBe(7n);
    expect(parseDisplayAmount('0', 6)).toBe(0n);
  });

  it.each([
    ['1e3', 'EXPONENT'],
    ['2.5E1', 'EXPONENT'],
    ['1,000.00', 'SEPARATOR'],
    ['1_000', 'SEPARATOR'],
    ['1 000', 'SEPARATOR'],
    [' 1.00', 'SEPARATOR'],
    ['+1.00', 'SIGN'],
    ['', 'EMPTY'],
    ['.', 'EMPTY'],
    ['-', 'EMPTY'],
    ['.5', 'NOT_A_NUMBER'],
    ['1.', 'NOT_A_NUMBER'],
    ['0x10', 'NOT_A_NUMBER'],
    ['1.0000001', 'TOO_MANY_DECIMALS'],
    ['-1.00', 'NEGATIVE'],
  ])('refuses %j (%s)', (text, reason) => {
    expect(reasonOf(() => parseDisplayAmount(text, 6))).toBe(reason);
  });

  it('refuses fractional digits for a zero-decimal asset', () => {
    expect(reasonOf(() => parseDisplayAmount('1.0', 0))).toBe('TOO_MANY_DECIMALS');
  });

  it('refuses numbers, which may already have lost precision', () => {
    expect(reasonOf(() => parseDisplayAmount(25, 6))).toBe('NOT_A_STRING');
  });

  it('accepts negatives only when the caller says so', () => {
    expect(parseDisplayAmount('-1.25', 2, { allowNegative: true })).toBe(-125n);
  });

  it('refuses magnitudes beyond uint256', () => {
    expect(reasonOf(() => parseDisplayAmount((UINT256_MAX + 1n).toString(), 0))).toBe(
      'OUT_OF_RANGE',
    );
    expect(parseDisplayAmount(UINT256_MAX.toString(), 0)).toBe(UINT256_MAX);
  });
});

describe('parseAtomicAmount', () => {
  it('parses canonical positive integers', () => {
    expect(parseAtomicAmount('50000')).toBe(50_000n);
    expect(parseAtomicAmount('9'.repeat(30))).toBe(10n ** 30n - 1n);
  });

  it.each([
    ['0', 'ZERO'],
    ['00', 'LEADING_ZERO'],
    ['0123', 'LEADING_ZERO'],
    ['-5', 'NEGATIVE'],
    ['+5', 'SIGN'],
    ['5.0', 'NOT_A_NUMBER'],
    ['5e3', 'EXPONENT'],
    ['1'.repeat(31), 'TOO_MANY_DIGITS'],
    ['', 'EMPTY'],
  ])('refuses %j (%s)', (text, reason) => {
    expect(reasonOf(() => parseAtomicAmount(text))).toBe(reason);
  });

  it('accepts zero where a total may be zero', () => {
    expect(parseAtomicAmount('0', { allowZero: true })).toBe(0n);
  });
});

describe('formatAmount', () => {
  it('writes amounts with at least two fractional digits and no trailing noise', () => {
    expect(formatAmount(25_000_000n, 6)).toBe('25.00');
    expect(formatAmount(2_500_000n, 6)).toBe('2.50');
    expect(formatAmount(1_234_567n, 6)).toBe('1.234567');
    expect(formatAmount(1n, 6)).toBe('0.000001');
    expect(formatAmount(0n, 6)).toBe('0.00');
    expect(formatAmount(15n, 1)).toBe('1.5');
    expect(formatAmount(7n, 0)).toBe('7');
    expect(formatAmount(-125n, 2)).toBe('-1.25');
  });

  it('round-trips through parseDisplayAmount for any amount and decimals', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: UINT256_MAX }),
        fc.integer({ min: 0, max: 36 }),
        (amount, decimals) => {
          expect(parseDisplayAmount(formatAmount(amount, decimals), decimals)).toBe(amount);
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('assetAmount', () => {
  it('pairs a bigint with the decimals that give it meaning', () => {
    expect(assetAmount(25_000_000n, 6)).toEqual({ amountAtomic: 25_000_000n, decimals: 6 });
  });

  it('refuses a Number amount or impossible decimals', () => {
    expect(() => assetAmount(25 as unknown as bigint, 6)).toThrow(TypeError);
    expect(() => assetAmount(1n, -1)).toThrow(RangeError);
    expect(() => assetAmount(1n, 37)).toThrow(RangeError);
    expect(() => assetAmount(1n, 1.5)).toThrow(RangeError);
  });
});
