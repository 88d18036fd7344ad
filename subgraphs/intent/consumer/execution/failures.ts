// The two ways an execution stops short, each one transaction with its ledger postings:
// a failure before any payment could leave (FAILED_BEFORE_PAYMENT, then REFUND_PENDING with the
// REFUND owed group: the funded amount is owed back to the payer), and an ambiguous payment once
// a signed authorization may have left (MANUAL_REVIEW with reason PAYMENT_AMBIGUOUS and the cost
// parked in SUSPENSE on the settlement rail; nothing is re-sent, ever). Each state change writes
// its outbox row `consumer_intent.state_changed` through the trigger (the owner's notice).
import {
  carriedReason,
  STATE_REASON,
  type StateReason,
  stateReason,
} from '../../../../core/consumer/reasons';
import type { ConsumerIntentState } from '../../../../core/consumer/lifecycle';
import { type Db, type DbPool, withTransaction } from '../../../../platform/db';
import type { ConsumerRails } from '../../../kit';
import { accountId, assetId, postRefund, postSuspenseMove } from '../../../ledger';
import { type ConsumerIntentRow, getConsumerIntent } from '../store';
import { type ConsumerIntentChanges, transitionConsumerIntent } from '../transition';
import { quoteOf } from './quoteFields';
import { settlementWith } from '../legs';

export const AMBIGUOUS_REASON = STATE_REASON.PAYMENT_AMBIGUOUS;

/** Where the refund goes and how much: the funding leg as FUND recorded it. */
export function refundOwedOf(row: ConsumerIntentRow, rails: ConsumerRails) {
  const funding = row.funding;
  const payer = funding?.payer;
  const amount = funding?.amount;
  if (typeof payer !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(payer))
    throw new Error(`intent ${row.intentId} has no funding payer to refund`);
  if (typeof amount !== 'string' || !/^[1-9][0-9]{0,77}$/.test(amount))
    throw new Error(`intent ${row.intentId} has no funded amount to refund`);
  return {
    amount,
    to: payer.toLowerCase(),
    network: rails.funding.network,
    asset: rails.funding.token.toLowerCase(),
  };
}

/** REFUND (owed) and the move to REFUND_PENDING, inside the caller's transaction. */
export async function oweRefund(
  client: Db,
  row: ConsumerIntentRow,
  rails: ConsumerRails,
  now: Date,
  extra: ConsumerIntentChanges = {},
  reason: StateReason | null = carriedReason(row),
): Promise<ConsumerIntentRow> {
  const owed = refundOwedOf(row, rails);
  const groupId = await postRefund(client, {
    stage: 'OWED',
    asset: assetId(rails.funding.network, rails.funding.token),
    amountAtomic: BigInt(owed.amount),
    policyId: row.policyId,
    intentRef: row.intentId,
    idempotencyKey: `refund-owed:${row.intentId}`,
  });
  const moved = await transitionConsumerIntent(client, row.intentId, row.state, 'REFUND_PENDING', {
    now,
    reason,
    changes: { ...extra, refund: { ...owed, groupIds: [groupId] } },
  });
  if (moved === null) throw new Error(`intent ${row.intentId} moved under its row lock`);
  return moved;
}

/**
 * `from` → FAILED_BEFORE_PAYMENT with the reason, then → REFUND_PENDING (REFUND owed), one
 * transaction. Null when the intent was no longer in `from`.
 */
export async function failBeforePayment(
  pool: DbPool,
  intentId: string,
  from: ConsumerIntentState,
  reason: StateReason,
  rails: ConsumerRails,
  now: Date,
): Promise<ConsumerIntentRow | null> {
  return withTransaction(pool, async (client) => {
    const row = await getConsumerIntent(client, intentId, { forUpdate: true });
    if (row === null || row.state !== from) return null;
    const failed = await transitionConsumerIntent(client, intentId, from, 'FAILED_BEFORE_PAYMENT', {
      now,
      reason,
    });
    if (failed === null) return null;
    if (failed.funding === null) return failed;
    return oweRefund(client, failed, rails, now);
  });
}

/**
 * `from` (a state in which a signed authorization may have left) → MANUAL_REVIEW, reason
 * PAYMENT_AMBIGUOUS, with SUSPENSE_MOVE (park) of the cost on the settlement rail: Dr SUSPENSE:<intent>
 * / Cr TREASURY float. One transaction; null when the intent was no longer in `from`.
 */
export async function parkAmbiguous(
  pool: DbPool,
  intentId: string,
  from: ConsumerIntentState,
  detail: string,
  rails: ConsumerRails,
  now: Date,
): Promise<ConsumerIntentRow | null> {
  return withTransaction(pool, async (client) => {
    const row = await getConsumerIntent(client, intentId, { forUpdate: true });
    if (row === null || row.state !== from) return null;
    const quote = quoteOf(row);
    const asset = assetId(rails.settlement.network, rails.settlement.token);
    const groupId = await postSuspenseMove(client, {
      direction: 'PARK',
      asset,
      amountAtomic: quote.providerCost,
      counterAccount: accountId('TREASURY', asset, 'float'),
      intentRef: intentId,
      policyId: row.policyId,
      idempotencyKey: `suspense:${intentId}`,
    });
    return transitionConsumerIntent(client, intentId, from, 'MANUAL_REVIEW', {
      now,
      reason: stateReason(AMBIGUOUS_REASON, detail),
      changes: { settlement: settlementWith(row, { suspenseGroupId: groupId }) },
    });
  });
}
