// What execution reads from an intent's stored quote (shapes: `quote`, written by create), typed
// and checked once: a malformed quote is a defect, never guessed around.
import type { HexAddress } from '../../../../core/consumer/paymentCapability';
import type { ConsumerIntentRow } from '../store';

export interface ExecutionQuote {
  readonly quoteId: string;
  readonly expiresAt: Date;
  readonly providerCost: bigint;
  /** The settlement asset's token, as the quote names it. */
  readonly costAsset: string;
  readonly costNetwork: string;
  readonly fee: bigint;
  readonly spread: bigint;
  readonly funding: { readonly network: string; readonly asset: string; readonly amount: bigint };
  readonly payTo: HexAddress;
  readonly url: string;
  readonly method: string;
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const ATOMIC = /^[0-9]{1,78}$/;

function record(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error(`the stored quote has no ${what} object`);
  return value as Record<string, unknown>;
}

function atomic(value: unknown, what: string): bigint {
  if (typeof value !== 'string' || !ATOMIC.test(value))
    throw new Error(`the stored quote's ${what} is not an atomic decimal string`);
  return BigInt(value);
}

function text(value: unknown, what: string): string {
  if (typeof value !== 'string' || value.length === 0)
    throw new Error(`the stored quote's ${what} is missing`);
  return value;
}

export function quoteOf(row: ConsumerIntentRow): ExecutionQuote {
  const quote = record(row.quote, 'quote');
  const cost = record(quote.providerCost, 'providerCost');
  const funding = record(quote.funding, 'funding');
  const merchant = record(quote.merchant, 'merchant');
  const payTo = text(merchant.payTo, 'merchant.payTo');
  if (!ADDRESS.test(payTo)) throw new Error("the stored quote's merchant.payTo is not an address");
  const expiresAt = new Date(text(quote.expiresAt, 'expiresAt'));
  if (!Number.isFinite(expiresAt.getTime()))
    throw new Error("the stored quote's expiry is not a time");
  return {
    quoteId: text(quote.quoteId, 'quoteId'),
    expiresAt,
    providerCost: atomic(cost.amount, 'providerCost.amount'),
    costAsset: text(cost.asset, 'providerCost.asset'),
    costNetwork: text(cost.network, 'providerCost.network'),
    fee: atomic(quote.fee, 'fee'),
    spread: atomic(quote.spread, 'spread'),
    funding: {
      network: text(funding.network, 'funding.network'),
      asset: text(funding.asset, 'funding.asset'),
      amount: atomic(funding.amount, 'funding.amount'),
    },
    payTo: payTo.toLowerCase() as HexAddress,
    url: text(merchant.url, 'merchant.url'),
    method: typeof merchant.method === 'string' ? merchant.method : 'GET',
  };
}
