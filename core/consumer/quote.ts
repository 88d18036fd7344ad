// Quote arithmetic of a consumer intent (DECISIONS "Consumer intents"): provider cost + fee + spread
// = funding amount, bigint only, fee and spread rounded up on the provider cost; the exact move of
// an amount between the settlement and funding assets; and the quote's id and 5-minute life. Pure.
import { isQuoteId } from '../canon/id-shapes';
import { AppError } from '../errors';
import { assertAssetDecimals, UINT256_MAX } from '../money/amount';
import { applyBps } from '../money/bps';

/** The cross-rail spread of DECISIONS: 50 bp of the provider cost, rounded up. */
export const DEFAULT_SPREAD_BPS = 50n;

/** A quote's fee or spread is at most 100 % of the provider cost. */
export const MAX_QUOTE_BPS = 10_000n;

/** A quote is good for 5 minutes from the merchant's 402. */
export const QUOTE_TTL_SECONDS = 300;

export interface FundingQuoteInput {
  /** What the merchant asks, in atomic units of the asset the quote is computed in. */
  readonly providerCostAtomic: bigint;
  /** The capability's service fee in basis points (catalog), 0–10 000. */
  readonly feeBps: bigint;
  /** The cross-rail spread in basis points, 0–10 000; default 50. */
  readonly spreadBps?: bigint;
}

/** All four amounts in atomic units of one asset; fundingAtomic = cost + fee + spread exactly. */
export interface FundingQuote {
  readonly providerCostAtomic: bigint;
  readonly feeAtomic: bigint;
  readonly spreadAtomic: bigint;
  readonly fundingAtomic: bigint;
}

/**
 * Fee and spread are each CEIL(cost × bps / 10 000) on the provider cost (never on each other), so
 * the service never under-collects and the two charges do not compound. Example (DECISIONS):
 * domains.check, cost 50000, fee 0 bp, spread 50 bp → fee 0, spread 250, funding 50250.
 */
export function quoteFunding(input: FundingQuoteInput): FundingQuote {
  const providerCostAtomic = input.providerCostAtomic;
  if (typeof providerCostAtomic !== 'bigint')
    throw new TypeError('providerCostAtomic must be a bigint');
  if (providerCostAtomic <= 0n || providerCostAtomic > UINT256_MAX)
    throw new RangeError('providerCostAtomic must be 1 to uint256 max');
  const feeBps = quoteBps('feeBps', input.feeBps);
  const spreadBps = quoteBps('spreadBps', input.spreadBps ?? DEFAULT_SPREAD_BPS);
  const feeAtomic = applyBps(providerCostAtomic, feeBps, 'CEIL');
  const spreadAtomic = applyBps(providerCostAtomic, spreadBps, 'CEIL');
  const fundingAtomic = providerCostAtomic + feeAtomic + spreadAtomic;
  // A funding amount must be payable on chain: an EIP-3009 value is a uint256.
  if (fundingAtomic > UINT256_MAX) throw new RangeError('the funding amount exceeds uint256 max');
  return { providerCostAtomic, feeAtomic, spreadAtomic, fundingAtomic };
}

function quoteBps(name: string, bps: unknown): bigint {
  if (typeof bps !== 'bigint') throw new TypeError(`${name} must be a bigint`);
  if (bps < 0n || bps > MAX_QUOTE_BPS) throw new RangeError(`${name} must be 0–${MAX_QUOTE_BPS}`);
  return bps;
}

export type RailScalingReason = 'INEXACT_SCALING';

/** The settlement amount has no exact equal in the funding asset's smaller unit: nothing is rounded. */
export class RailScalingError extends Error {
  readonly reason: RailScalingReason = 'INEXACT_SCALING';

  constructor(
    readonly amountAtomic: bigint,
    readonly fromDecimals: number,
    readonly toDecimals: number,
  ) {
    super(
      `${amountAtomic} at ${fromDecimals} decimals has no exact value at ${toDecimals} decimals`,
    );
    this.name = 'RailScalingError';
  }
}

/**
 * An amount of the settlement asset (USDC on eip155:8453) in atomic units of the funding asset
 * (USDT0 on eip155:196). Both are USD stablecoins paired by configuration and taken one display
 * unit for one display unit; no price feed, the spread carries the peg risk. Equal decimals: the
 * same atomic number. Different decimals: a power-of-ten change of unit, done only when exact
 * (always when the funding asset has more decimals; when it has fewer, only if nothing would be
 * cut off), otherwise RailScalingError.
 */
export function settlementToFundingAtomic(
  amountAtomic: bigint,
  settlementDecimals: number,
  fundingDecimals: number,
): bigint {
  if (typeof amountAtomic !== 'bigint') throw new TypeError('amountAtomic must be a bigint');
  assertAssetDecimals(settlementDecimals);
  assertAssetDecimals(fundingDecimals);
  if (fundingDecimals === settlementDecimals) return amountAtomic;
  if (fundingDecimals > settlementDecimals)
    return amountAtomic * 10n ** BigInt(fundingDecimals - settlementDecimals);
  const divisor = 10n ** BigInt(settlementDecimals - fundingDecimals);
  if (amountAtomic % divisor !== 0n)
    throw new RailScalingError(amountAtomic, settlementDecimals, fundingDecimals);
  return amountAtomic / divisor;
}

export interface CrossRailQuoteInput {
  /** The merchant's price in atomic units of the settlement asset. */
  readonly settlementCostAtomic: bigint;
  readonly settlementDecimals: number;
  readonly fundingDecimals: number;
  readonly feeBps: bigint;
  readonly spreadBps?: bigint;
}

/** The quote in the funding asset (cost first moved exactly, then fee and spread on it), plus what the merchant is paid. */
export interface CrossRailQuote extends FundingQuote {
  readonly settlementCostAtomic: bigint;
}

export function quoteCrossRailFunding(input: CrossRailQuoteInput): CrossRailQuote {
  const providerCostAtomic = settlementToFundingAtomic(
    input.settlementCostAtomic,
    input.settlementDecimals,
    input.fundingDecimals,
  );
  const quote = quoteFunding({
    providerCostAtomic,
    feeBps: input.feeBps,
    spreadBps: input.spreadBps,
  });
  return { settlementCostAtomic: input.settlementCostAtomic, ...quote };
}

/** A quote id from a request or a row: `cq_` + 18 lowercase hex, or 400 REQUEST_INVALID. */
export function assertQuoteId(value: unknown): asserts value is string {
  if (!isQuoteId(value))
    throw new AppError(
      'REQUEST_INVALID',
      'A quoteId is cq_ followed by 18 lowercase hex characters.',
    );
}

/** The instant a quote made at `quotedAt` stops being usable. */
export function quoteExpiresAt(quotedAt: Date): Date {
  return new Date(instantMs('quotedAt', quotedAt) + QUOTE_TTL_SECONDS * 1000);
}

/** Fresh strictly before expiresAt; at the expiry instant the quote is already dead. */
export function isQuoteFresh(expiresAt: Date, now: Date): boolean {
  return instantMs('now', now) < instantMs('expiresAt', expiresAt);
}

/** 409 QUOTE_EXPIRED unless fresh; the details name the quote and when it expired. */
export function assertQuoteFresh(
  quote: { readonly quoteId: string; readonly expiresAt: Date },
  now: Date,
): void {
  assertQuoteId(quote.quoteId);
  if (isQuoteFresh(quote.expiresAt, now)) return;
  throw new AppError('QUOTE_EXPIRED', undefined, {
    quoteId: quote.quoteId,
    expiresAt: quote.expiresAt.toISOString(),
  });
}

function instantMs(name: string, value: Date): number {
  const ms = value instanceof Date ? value.getTime() : Number.NaN;
  if (!Number.isFinite(ms)) throw new RangeError(`${name} must be a valid Date`);
  return ms;
}
