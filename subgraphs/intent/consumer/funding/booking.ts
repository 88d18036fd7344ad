// Booking an x402 payment that funds a consumer intent (POST /consumer/intents/:intentId/fund),
// once the chain shows its Transfer to the funding treasury. One transaction: the payment record
// is locked (SETTLING, or PENDING when it was parked), a park is cleared, the intent's reservation
// is consumed with the FUNDING group (Dr TREASURY:float / Cr USER_OBLIGATION:<policy>, key
// `funding:<intentId>`, through intent.consume_reservation), the intent moves AWAITING_FUNDING →
// FUNDED with its `funding` JSON, and the payment is marked SETTLED with the group.
//
// A payment that arrives for an intent that can no longer be funded (it expired, its quote or its
// reservation lapsed while the payment was on its way: only a parked or slow settlement gets
// here, the fund route refuses such intents before any 402) is never lost: the same FUNDING group
// is booked without a reservation, then a REFUND owed (Dr USER_OBLIGATION / Cr REFUND_PAYABLE,
// key `refund-owed:<intentId>`), and the intent keeps its state with `funding.refundOwed` set.
import type { PoolClient } from 'pg';
import { AppError } from '../../../../core/errors';
import type { DbPool } from '../../../../platform/db';
import { withTransaction } from '../../../../platform/db/transaction';
import { appErrorFromSql } from '../../../kit';
import {
  accountId,
  assetId,
  FLOAT_REF,
  ledgerErrorFrom,
  lockFundingPayment,
  markFundingSettled,
  postFunding,
  postFundingParkClear,
  postRefund,
  type ServicePayment,
} from '../../../ledger';
import { consumeReservationIn } from '../../reservations/consumeOrRelease';
import { INTENT_SQLSTATES } from '../../sql';
import { type ConsumerIntentRow, getConsumerIntent } from '../store';
import { transitionConsumerIntent, updateConsumerIntent } from '../transition';

/** A reservation that is not ACTIVE before its deadline (intent.consume_reservation). */
const RESERVATION_GONE = 'IN002';

export interface FundingBookingOptions {
  /** Lease (ms) for the caller to run the paid call; null: none (the reconciler only books). */
  readonly leaseMs: number | null;
  readonly now?: () => Date;
}

/** Why a paid intent could not be funded, or null when it can be. */
function unfundableReason(intent: ConsumerIntentRow, payment: ServicePayment, now: Date) {
  if (intent.state !== 'AWAITING_FUNDING') return `the intent is ${intent.state}`;
  if (intent.quoteExpiresAt === null || intent.quoteExpiresAt.getTime() <= now.getTime())
    return 'the quote expired';
  if (intent.reservationId === null) return 'the intent holds no reservation';
  if (intent.fundingAmount !== payment.amountAtomic) return 'the funding amount differs';
  return null;
}

function fundingJson(payment: ServicePayment, txHash: string, groupId: string, now: Date) {
  return {
    paymentId: payment.paymentId,
    payer: payment.payer,
    payTo: payment.payTo,
    network: payment.network,
    asset: payment.asset,
    amount: payment.amountAtomic.toString(),
    txHash: txHash.toLowerCase(),
    groupId,
    fundedAt: now.toISOString(),
  };
}

/** Consumes the reservation with the FUNDING group and moves the intent to FUNDED; null when the reservation is gone. */
async function fund(
  client: PoolClient,
  intent: ConsumerIntentRow,
  payment: ServicePayment,
  txHash: string,
  now: Date,
): Promise<string | null> {
  const asset = assetId(payment.network, payment.asset);
  await client.query('SAVEPOINT consumer_funding');
  try {
    const reservation = await consumeReservationIn(
      client,
      intent.reservationId!,
      [
        {
          kind: 'FUNDING',
          asset,
          entries: [
            {
              account: accountId('TREASURY', asset, FLOAT_REF),
              amountAtomic: payment.amountAtomic,
            },
            {
              account: accountId('USER_OBLIGATION', asset, intent.policyId),
              amountAtomic: -payment.amountAtomic,
            },
          ],
          idempotencyKey: `funding:${intent.intentId}`,
          memo: `x402 funding of ${intent.intentId} by ${payment.payer} in ${txHash}`,
        },
      ],
      () => now,
    );
    const groupId = reservation.groupIds[0]!;
    const funded = await transitionConsumerIntent(
      client,
      intent.intentId,
      'AWAITING_FUNDING',
      'FUNDED',
      { now, changes: { funding: fundingJson(payment, txHash, groupId, now) } },
    );
    if (!funded) throw new Error(`consumer intent ${intent.intentId} moved while locked`);
    await client.query('RELEASE SAVEPOINT consumer_funding');
    return groupId;
  } catch (error) {
    if ((error as { code?: string }).code !== RESERVATION_GONE) throw error;
    await client.query('ROLLBACK TO SAVEPOINT consumer_funding');
    return null;
  }
}

/** The payment arrived for an intent that cannot be funded: FUNDING without a reservation, then REFUND owed. */
async function bookAndOweBack(
  client: PoolClient,
  intent: ConsumerIntentRow,
  payment: ServicePayment,
  txHash: string,
  context: { now: Date; reason: string },
): Promise<{ fundingGroupId: string; refundGroupId: string }> {
  const { now, reason } = context;
  const asset = assetId(payment.network, payment.asset);
  const owed = {
    asset,
    amountAtomic: payment.amountAtomic,
    policyId: intent.policyId,
    intentRef: intent.intentId,
  };
  const fundingGroupId = await postFunding(client, {
    ...owed,
    idempotencyKey: `funding:${intent.intentId}`,
    memo: `x402 funding of ${intent.intentId} by ${payment.payer} in ${txHash}; not fundable: ${reason}`,
  });
  const refundGroupId = await postRefund(client, {
    ...owed,
    stage: 'OWED',
    idempotencyKey: `refund-owed:${intent.intentId}`,
    memo: `funding of ${intent.intentId} arrived when ${reason}; owed back to ${payment.payer}`,
  });
  if (intent.funding === null) {
    const funding = {
      ...fundingJson(payment, txHash, fundingGroupId, now),
      refundOwed: { groupId: refundGroupId, amount: payment.amountAtomic.toString(), reason },
    };
    await updateConsumerIntent(client, intent.intentId, intent.state, { funding }, now);
  }
  return { fundingGroupId, refundGroupId };
}

/**
 * Books a funding payment the chain has confirmed in `txHash` (see the top of this file). Returns
 * the payment SETTLED, or null when it had already moved on (another replica booked it).
 */
export async function bookFundingPayment(
  pool: DbPool,
  payment: ServicePayment,
  txHash: string,
  options: FundingBookingOptions,
): Promise<ServicePayment | null> {
  const clock = options.now ?? (() => new Date());
  try {
    return await withTransaction(pool, async (client) => {
      const current = await lockFundingPayment(client, payment.paymentId, ['SETTLING', 'PENDING']);
      if (!current) return null;
      const clearGroupId =
        current.state === 'PENDING' ? await postFundingParkClear(client, current, txHash) : null;
      const intentId = current.funding!.intentRef;
      const intent = await getConsumerIntent(client, intentId, { forUpdate: true });
      if (!intent || intent.policyId !== current.funding!.policyId)
        throw new AppError('INTERNAL_ERROR', `funding payment for unknown intent ${intentId}`);
      const now = clock();
      let reason = unfundableReason(intent, current, now);
      let fundingGroupId =
        reason === null ? await fund(client, intent, current, txHash, now) : null;
      let refundGroupId: string | null = null;
      if (fundingGroupId === null) {
        reason ??= 'the reservation lapsed';
        ({ fundingGroupId, refundGroupId } = await bookAndOweBack(client, intent, current, txHash, {
          now,
          reason,
        }));
      }
      return markFundingSettled(client, current, {
        txHash,
        fundingGroupId,
        refundGroupId,
        clearGroupId,
        leaseMs: options.leaseMs,
      });
    });
  } catch (error) {
    throw appErrorFromSql(error, INTENT_SQLSTATES) ?? ledgerErrorFrom(error) ?? error;
  }
}
