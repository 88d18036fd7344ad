// RECOGNITION of a purchase: the user's obligation is discharged into the provider's settlement,
// the fee and the spread. On one rail that is one group; across rails it is two groups (one per
// asset, joined through CROSS_RAIL_CLEARING, no exchange rate) posted in one statement.
import { AppError } from '../../../core/errors';
import type { Db } from '../../../platform/db';
import { accountId, parseAssetId, railRef } from '../accounts/names';
import { nonNegative, positive } from './amounts';
import { context, type GroupContext, PURCHASE_FEE_REF } from './groupKinds';
import { type LedgerEntryInput, postGroup, postPair, type PostedPair } from './writes';

export interface SameRailRecognitionInput extends GroupContext {
  readonly asset: string;
  readonly providerCostAtomic: bigint;
  readonly feeAtomic: bigint;
  readonly spreadAtomic: bigint;
  readonly provider: string;
  readonly policyId: string;
  readonly intentRef: string;
}

/**
 * RECOGNITION on one rail (provider paid in the funding asset): the obligation is discharged.
 * Dr USER_OBLIGATION (cost + fee + spread) / Cr PROVIDER_SETTLEMENT cost / Cr FEE_REVENUE fee /
 * Cr SPREAD_REVENUE spread. Zero fee or spread lines are left out (an entry is never 0).
 */
export function postSameRailRecognition(db: Db, input: SameRailRecognitionInput): Promise<string> {
  const cost = positive('providerCostAtomic', input.providerCostAtomic);
  const fee = nonNegative('feeAtomic', input.feeAtomic);
  const spread = nonNegative('spreadAtomic', input.spreadAtomic);
  const { chain } = parseAssetId(input.asset);
  const entries: LedgerEntryInput[] = [
    {
      account: accountId('USER_OBLIGATION', input.asset, input.policyId),
      amountAtomic: cost + fee + spread,
    },
    { account: accountId('PROVIDER_SETTLEMENT', input.asset, input.provider), amountAtomic: -cost },
  ];
  if (fee > 0n)
    entries.push({
      account: accountId('FEE_REVENUE', input.asset, PURCHASE_FEE_REF),
      amountAtomic: -fee,
    });
  if (spread > 0n)
    entries.push({
      account: accountId('SPREAD_REVENUE', input.asset, railRef(chain)),
      amountAtomic: -spread,
    });
  return postGroup(db, { kind: 'RECOGNITION', asset: input.asset, entries, ...context(input) });
}

export interface CrossRailRecognitionInput extends GroupContext {
  /** What the user funded, on the funding rail (e.g. 50250 USDT0 on eip155:196). */
  readonly funding: { readonly asset: string; readonly amountAtomic: bigint };
  /** What the provider was paid, on the settlement rail (e.g. 50000 USDC on eip155:8453). */
  readonly settlement: { readonly asset: string; readonly amountAtomic: bigint };
  readonly feeAtomic: bigint;
  readonly spreadAtomic: bigint;
  readonly provider: string;
  readonly policyId: string;
  readonly intentRef: string;
}

/** The funding rail's group: Dr the obligation, Cr clearing the remainder, the fee and the spread. */
function fundingRailEntries(
  input: CrossRailRecognitionInput,
  amounts: { funded: bigint; remainder: bigint; fee: bigint; spread: bigint },
  settlementChain: string,
): LedgerEntryInput[] {
  const { funded, remainder, fee, spread } = amounts;
  const entries: LedgerEntryInput[] = [
    {
      account: accountId('USER_OBLIGATION', input.funding.asset, input.policyId),
      amountAtomic: funded,
    },
    {
      account: accountId('CROSS_RAIL_CLEARING', input.funding.asset, railRef(settlementChain)),
      amountAtomic: -remainder,
    },
  ];
  if (fee > 0n)
    entries.push({
      account: accountId('FEE_REVENUE', input.funding.asset, PURCHASE_FEE_REF),
      amountAtomic: -fee,
    });
  if (spread > 0n) {
    entries.push({
      account: accountId('SPREAD_REVENUE', input.funding.asset, railRef(settlementChain)),
      amountAtomic: -spread,
    });
  }
  return entries;
}

/**
 * RECOGNITION across rails: two groups, one per asset, each through CROSS_RAIL_CLEARING; no
 * exchange rate links them. Funding rail: Dr USER_OBLIGATION funding / Cr FEE_REVENUE fee /
 * Cr SPREAD_REVENUE spread / Cr CROSS_RAIL_CLEARING remainder (parked until an operator sweep).
 * Settlement rail: Dr CROSS_RAIL_CLEARING / Cr PROVIDER_SETTLEMENT, the amount paid. Keys get
 * `:funding` and `:settlement` appended.
 */
export function postCrossRailRecognition(
  db: Db,
  input: CrossRailRecognitionInput,
): Promise<PostedPair> {
  const funded = positive('funding.amountAtomic', input.funding.amountAtomic);
  const paid = positive('settlement.amountAtomic', input.settlement.amountAtomic);
  const fee = nonNegative('feeAtomic', input.feeAtomic);
  const spread = nonNegative('spreadAtomic', input.spreadAtomic);
  const remainder = funded - fee - spread;
  if (remainder <= 0n)
    throw new AppError(
      'LEDGER_GROUP_INVALID',
      'fee and spread leave nothing of the funding to clear',
    );
  const fundingChain = parseAssetId(input.funding.asset).chain;
  const settlementChain = parseAssetId(input.settlement.asset).chain;
  if (input.funding.asset === input.settlement.asset) {
    throw new AppError(
      'LEDGER_GROUP_INVALID',
      'a cross-rail recognition joins two different assets',
    );
  }
  const fundingEntries = fundingRailEntries(
    input,
    { funded, remainder, fee, spread },
    settlementChain,
  );
  const shared = { intentRef: input.intentRef, policyId: input.policyId, memo: input.memo };
  return postPair(
    db,
    {
      kind: 'RECOGNITION',
      asset: input.funding.asset,
      entries: fundingEntries,
      idempotencyKey: `${input.idempotencyKey}:funding`,
      ...shared,
    },
    {
      kind: 'RECOGNITION',
      asset: input.settlement.asset,
      entries: [
        {
          account: accountId('CROSS_RAIL_CLEARING', input.settlement.asset, railRef(fundingChain)),
          amountAtomic: paid,
        },
        {
          account: accountId('PROVIDER_SETTLEMENT', input.settlement.asset, input.provider),
          amountAtomic: -paid,
        },
      ],
      idempotencyKey: `${input.idempotencyKey}:settlement`,
      ...shared,
    },
  );
}
