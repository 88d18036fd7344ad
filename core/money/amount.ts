// Exact money on bigint: atomic units of an asset with a fixed number of decimals. Parses the two
// wire spellings (display decimals written by people, atomic integers written by machines) and
// formats back. No `Number` ever touches an amount; anything ambiguous is refused, never guessed.

/** The largest value a uint256 (and a NUMERIC(78,0) column) can hold. */
export const UINT256_MAX = (1n << 256n) - 1n;

/** Decimals beyond this cannot be represented next to a useful integer part in a uint256. */
export const MAX_ASSET_DECIMALS = 36;

/** Wire amounts are at most 30 digits (`^[1-9][0-9]{0,29}$`), far above any real spend. */
export const MAX_WIRE_AMOUNT_DIGITS = 30;

export type AmountFormatReason =
  | 'NOT_A_STRING'
  | 'EMPTY'
  | 'EXPONENT'
  | 'SEPARATOR'
  | 'SIGN'
  | 'NEGATIVE'
  | 'LEADING_ZERO'
  | 'ZERO'
  | 'TOO_MANY_DECIMALS'
  | 'TOO_MANY_DIGITS'
  | 'NOT_A_NUMBER'
  | 'OUT_OF_RANGE';

const REASON_TEXT: Record<AmountFormatReason, string> = {
  NOT_A_STRING: 'must be a string',
  EMPTY: 'must not be empty',
  EXPONENT: 'must not use an exponent',
  SEPARATOR: 'must not contain separators (",", "_" or spaces)',
  SIGN: 'must not start with "+"',
  NEGATIVE: 'must not be negative',
  LEADING_ZERO: 'must not have leading zeros',
  ZERO: 'must be greater than zero',
  TOO_MANY_DECIMALS: 'has more fractional digits than the asset',
  TOO_MANY_DIGITS: 'has too many digits',
  NOT_A_NUMBER: 'is not a decimal number',
  OUT_OF_RANGE: 'is larger than a uint256',
};

/** Why an amount string was refused; `reason` is stable, `message` is for people. */
export class AmountFormatError extends Error {
  readonly reason: AmountFormatReason;

  constructor(reason: AmountFormatReason) {
    super(REASON_TEXT[reason]);
    this.name = 'AmountFormatError';
    this.reason = reason;
  }
}

/** An amount together with the decimals that give it meaning. */
export interface AssetAmount {
  readonly amountAtomic: bigint;
  readonly decimals: number;
}

export function assertAssetDecimals(decimals: number): void {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > MAX_ASSET_DECIMALS) {
    throw new RangeError(`asset decimals must be an integer 0–${MAX_ASSET_DECIMALS}`);
  }
}

export function assetAmount(amountAtomic: bigint, decimals: number): AssetAmount {
  if (typeof amountAtomic !== 'bigint') throw new TypeError('amountAtomic must be a bigint');
  assertAssetDecimals(decimals);
  return { amountAtomic, decimals };
}

const DISPLAY_SHAPE = /^(-?)([0-9]+)(?:\.([0-9]+))?$/;

export interface DisplayParseOptions {
  /** Refunds and ledger corrections may be negative; limits and prices never are. */
  readonly allowNegative?: boolean;
}

/**
 * "25.00" with decimals 6 → 25000000n. Exact or refused: no exponent, no separators, no "+",
 * no bare ".", no more fractional digits than the asset has, at most a uint256 in magnitude.
 */
export function parseDisplayAmount(
  text: unknown,
  decimals: number,
  options: DisplayParseOptions = {},
): bigint {
  assertAssetDecimals(decimals);
  if (typeof text !== 'string') throw new AmountFormatError('NOT_A_STRING');
  if (text.length === 0) throw new AmountFormatError('EMPTY');
  if (text.length > 100) throw new AmountFormatError('TOO_MANY_DIGITS');
  const shape = DISPLAY_SHAPE.exec(text);
  if (shape === null) throw new AmountFormatError(classifyMalformed(text));
  const [, sign, integerDigits, fractionDigits = ''] = shape;
  if (sign === '-' && options.allowNegative !== true) throw new AmountFormatError('NEGATIVE');
  if (fractionDigits.length > decimals) throw new AmountFormatError('TOO_MANY_DECIMALS');
  const magnitude = BigInt(integerDigits + fractionDigits.padEnd(decimals, '0'));
  if (magnitude > UINT256_MAX) throw new AmountFormatError('OUT_OF_RANGE');
  return sign === '-' ? -magnitude : magnitude;
}

// Names the first thing wrong, so a person fixing a policy sees the real mistake.
function classifyMalformed(text: string): AmountFormatReason {
  if (/[eE]/.test(text)) return 'EXPONENT';
  if (/[,_\s]/.test(text)) return 'SEPARATOR';
  if (text.startsWith('+')) return 'SIGN';
  if (/^-?\.?$/.test(text)) return 'EMPTY';
  return 'NOT_A_NUMBER';
}

export interface AtomicParseOptions {
  /** Wire amounts of a spend are positive; balances and totals may be zero. */
  readonly allowZero?: boolean;
  readonly maxDigits?: number;
}

/** "50000" → 50000n. Canonical decimal integers only (no sign, no leading zeros). */
export function parseAtomicAmount(text: unknown, options: AtomicParseOptions = {}): bigint {
  const maxDigits = options.maxDigits ?? MAX_WIRE_AMOUNT_DIGITS;
  if (typeof text !== 'string') throw new AmountFormatError('NOT_A_STRING');
  if (text.length === 0) throw new AmountFormatError('EMPTY');
  if (text === '0') {
    if (options.allowZero === true) return 0n;
    throw new AmountFormatError('ZERO');
  }
  if (!/^[0-9]+$/.test(text)) {
    if (text.startsWith('-')) throw new AmountFormatError('NEGATIVE');
    throw new AmountFormatError(classifyMalformed(text));
  }
  if (text.startsWith('0')) throw new AmountFormatError('LEADING_ZERO');
  if (text.length > maxDigits) throw new AmountFormatError('TOO_MANY_DIGITS');
  const value = BigInt(text);
  if (value > UINT256_MAX) throw new AmountFormatError('OUT_OF_RANGE');
  return value;
}

/**
 * 2500000n with decimals 6 → "2.50". Trailing zeros are trimmed down to two fractional digits
 * (or the asset's decimals when it has fewer), so each amount has exactly one spelling and it
 * reads like money; parseDisplayAmount(formatAmount(x, d), d) === x for every x.
 */
export function formatAmount(amountAtomic: bigint, decimals: number): string {
  if (typeof amountAtomic !== 'bigint') throw new TypeError('amountAtomic must be a bigint');
  assertAssetDecimals(decimals);
  const negative = amountAtomic < 0n;
  const digits = (negative ? -amountAtomic : amountAtomic).toString().padStart(decimals + 1, '0');
  const integerPart = digits.slice(0, digits.length - decimals);
  let fractionPart = digits.slice(digits.length - decimals);
  const keepDigits = Math.min(2, decimals);
  let end = fractionPart.length;
  while (end > keepDigits && fractionPart.charCodeAt(end - 1) === 48) end -= 1;
  fractionPart = fractionPart.slice(0, end);
  const body = fractionPart.length > 0 ? `${integerPart}.${fractionPart}` : integerPart;
  return negative ? `-${body}` : body;
}
