// One call per group kind, encoding the accounting of docs/ledger.md (SERVICE_FEE, FUNDING,
// SETTLEMENT, RECOGNITION of a provider cost, REFUND, SUSPENSE_MOVE; recognition of a purchase is
// in recognition.ts). Each builds the entries and posts them through ledger.post_group.
//
// Account refs: TREASURY `float`; USER_OBLIGATION and REFUND_PAYABLE the policy id;
// PROVIDER_SETTLEMENT and COST_OF_GOODS the provider; FEE_REVENUE the revenue stream (x402 route
// name, or `purchase` for quote fees); SPREAD_REVENUE and CROSS_RAIL_CLEARING the other rail
// (`eip155-8453`); SUSPENSE the intent ref.
import type { Db } from '../../../platform/db';
import { accountId, FEE_RECEIVER_REF, FLOAT_REF } from '../accounts/names';
import { positive } from './amounts';
import { postGroup, type PostGroupInput } from './writes';

/** The fee revenue stream of a purchase quote's service fee. */
export const PURCHASE_FEE_REF = 'purchase';

export interface GroupContext {
  readonly idempotencyKey: string;
  readonly intentRef?: string | null;
  readonly policyId?: string | null;
  readonly memo?: string | null;
}

export function context(
  input: GroupContext,
): Pick<PostGroupInput, 'idempotencyKey' | 'intentRef' | 'policyId' | 'memo'> {
  return {
    idempotencyKey: input.idempotencyKey,
    intentRef: input.intentRef,
    policyId: input.policyId,
    memo: input.memo,
  };
}

export interface ServiceFeeInput extends GroupContext {
  /** The funding-rail asset the x402 fee was settled in. */
  readonly asset: string;
  readonly feeAtomic: bigint;
  /** The paid route's name, e.g. `preflight_payment`. */
  readonly route: string;
}

/** SERVICE_FEE: an x402 call fee settled to the fee receiver. Dr TREASURY:fee-receiver / Cr FEE_REVENUE:<route>. */
export function serviceFeeGroup(input: ServiceFeeInput): PostGroupInput {
  const fee = positive('feeAtomic', input.feeAtomic);
  return {
    kind: 'SERVICE_FEE',
    asset: input.asset,
    entries: [
      { account: accountId('TREASURY', input.asset, FEE_RECEIVER_REF), amountAtomic: fee },
      { account: accountId('FEE_REVENUE', input.asset, input.route), amountAtomic: -fee },
    ],
    ...context(input),
  };
}

/** Posts one SERVICE_FEE group (serviceFeeGroup). */
export function postServiceFee(db: Db, input: ServiceFeeInput): Promise<string> {
  return postGroup(db, serviceFeeGroup(input));
}

export interface FundingInput extends GroupContext {
  readonly asset: string;
  readonly amountAtomic: bigint;
  readonly policyId: string;
  readonly intentRef: string;
}

/** FUNDING: the user funds a purchase; the service now owes it. Dr TREASURY / Cr USER_OBLIGATION. */
export function postFunding(db: Db, input: FundingInput): Promise<string> {
  const amount = positive('amountAtomic', input.amountAtomic);
  return postGroup(db, {
    kind: 'FUNDING',
    asset: input.asset,
    entries: [
      { account: accountId('TREASURY', input.asset, FLOAT_REF), amountAtomic: amount },
      { account: accountId('USER_OBLIGATION', input.asset, input.policyId), amountAtomic: -amount },
    ],
    ...context(input),
  });
}

export interface SettlementInput extends GroupContext {
  /** The settlement-rail asset the provider was paid in. */
  readonly asset: string;
  readonly amountAtomic: bigint;
  readonly provider: string;
  readonly intentRef: string;
}

/** SETTLEMENT: the provider is paid from the float. Dr PROVIDER_SETTLEMENT / Cr TREASURY. */
export function postSettlement(db: Db, input: SettlementInput): Promise<string> {
  const amount = positive('amountAtomic', input.amountAtomic);
  return postGroup(db, {
    kind: 'SETTLEMENT',
    asset: input.asset,
    entries: [
      {
        account: accountId('PROVIDER_SETTLEMENT', input.asset, input.provider),
        amountAtomic: amount,
      },
      { account: accountId('TREASURY', input.asset, FLOAT_REF), amountAtomic: -amount },
    ],
    ...context(input),
  });
}

export interface ProviderCostInput extends GroupContext {
  readonly asset: string;
  readonly amountAtomic: bigint;
  readonly provider: string;
  readonly intentRef: string;
}

/**
 * RECOGNITION of a provider payment the service bears (paid, then the purchase failed and the
 * user was refunded). Dr COST_OF_GOODS / Cr PROVIDER_SETTLEMENT.
 */
export function postProviderCost(db: Db, input: ProviderCostInput): Promise<string> {
  const amount = positive('amountAtomic', input.amountAtomic);
  return postGroup(db, {
    kind: 'RECOGNITION',
    asset: input.asset,
    entries: [
      { account: accountId('COST_OF_GOODS', input.asset, input.provider), amountAtomic: amount },
      {
        account: accountId('PROVIDER_SETTLEMENT', input.asset, input.provider),
        amountAtomic: -amount,
      },
    ],
    ...context(input),
  });
}

export interface RefundInput extends GroupContext {
  /** OWED: the refund is decided (Dr USER_OBLIGATION / Cr REFUND_PAYABLE). PAID: it left the float (Dr REFUND_PAYABLE / Cr TREASURY). */
  readonly stage: 'OWED' | 'PAID';
  readonly asset: string;
  readonly amountAtomic: bigint;
  readonly policyId: string;
  readonly intentRef: string;
}

/** REFUND, in two steps so a refund that is owed but not yet sent stays visible. */
export function postRefund(db: Db, input: RefundInput): Promise<string> {
  const amount = positive('amountAtomic', input.amountAtomic);
  const payable = accountId('REFUND_PAYABLE', input.asset, input.policyId);
  const [debit, credit] =
    input.stage === 'OWED'
      ? [accountId('USER_OBLIGATION', input.asset, input.policyId), payable]
      : [payable, accountId('TREASURY', input.asset, FLOAT_REF)];
  return postGroup(db, {
    kind: 'REFUND',
    asset: input.asset,
    entries: [
      { account: debit, amountAtomic: amount },
      { account: credit, amountAtomic: -amount },
    ],
    ...context(input),
  });
}

export interface SuspenseMoveInput extends GroupContext {
  /** PARK: Dr SUSPENSE / Cr counterAccount. CLEAR: Dr counterAccount / Cr SUSPENSE. */
  readonly direction: 'PARK' | 'CLEAR';
  readonly asset: string;
  readonly amountAtomic: bigint;
  /**
   * PARK from where the money may have gone (usually the settlement TREASURY after an ambiguous
   * paid request); CLEAR to what the chain showed (PROVIDER_SETTLEMENT if paid, TREASURY if not).
   */
  readonly counterAccount: string;
  readonly intentRef: string;
}

/** SUSPENSE_MOVE: park an ambiguous amount per intent, and clear it once a human has decided. */
export function postSuspenseMove(db: Db, input: SuspenseMoveInput): Promise<string> {
  const amount = positive('amountAtomic', input.amountAtomic);
  const suspense = accountId('SUSPENSE', input.asset, input.intentRef);
  const sign = input.direction === 'PARK' ? 1n : -1n;
  return postGroup(db, {
    kind: 'SUSPENSE_MOVE',
    asset: input.asset,
    entries: [
      { account: suspense, amountAtomic: sign * amount },
      { account: input.counterAccount, amountAtomic: -sign * amount },
    ],
    ...context(input),
  });
}
