// What execution reads from an intent's quote: the typed leg (legs.ts, checked once when the row was
// read) with its amounts as bigints and its expiry as a Date. A quote lacking a field execution
// needs is a defect: 500 CONSUMER_INTENT_LEG_INVALID naming the missing fields, never guessed
// around.
import type { HexAddress } from '../../../../core/consumer/paymentCapability';
import { AppError } from '../../../../core/errors';
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

function missing(intentId: string, fields: string[]): AppError {
  return new AppError('CONSUMER_INTENT_LEG_INVALID', undefined, { intentId, leg: 'quote', fields });
}

/** The quote execution pays by; throws when the stored quote lacks a field execution needs. */
export function quoteOf(row: ConsumerIntentRow): ExecutionQuote {
  const quote = row.quote;
  if (quote === null) throw missing(row.intentId, ['(root)']);
  const { quoteId, expiresAt, providerCost: cost, fee, spread, funding, merchant } = quote;
  const required = { quoteId, expiresAt, providerCost: cost, fee, spread, funding, merchant };
  const absent = Object.keys(required).filter(
    (key) => required[key as keyof typeof required] === undefined,
  );
  if (funding?.amount === undefined) absent.push('funding.amount');
  if (merchant?.payTo === undefined) absent.push('merchant.payTo');
  if (merchant?.url === undefined) absent.push('merchant.url');
  const expiry = new Date(expiresAt ?? '');
  if (!Number.isFinite(expiry.getTime())) absent.push('expiresAt');
  if (absent.length > 0) throw missing(row.intentId, [...new Set(absent)]);
  return {
    quoteId: quoteId!,
    expiresAt: expiry,
    providerCost: BigInt(cost!.amount),
    costAsset: cost!.asset,
    costNetwork: cost!.network,
    fee: BigInt(fee!),
    spread: BigInt(spread!),
    funding: { network: funding!.network, asset: funding!.asset, amount: BigInt(funding!.amount!) },
    payTo: merchant!.payTo!.toLowerCase() as HexAddress,
    url: merchant!.url!,
    method: merchant!.method ?? 'GET',
  };
}
