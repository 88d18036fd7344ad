// The payment record of x402 payments that fund a consumer intent (purpose FUNDING, migration
// 0008): the claim (at most one live funding payment per intent), the park when the chain is
// silent (SUSPENSE_MOVE Dr SUSPENSE:<payment> / Cr USER_OBLIGATION:<policy>: if the money
// arrived, the service owes it), its clearing, and marking the payment SETTLED with its FUNDING
// group. The FUNDING group itself is posted by the intent subgraph, which consumes the intent's
// reservation with it and moves the intent to FUNDED in the same transaction as these writes
// (subgraphs/intent/consumer/funding/booking.ts); that is why the writes here take its client.
import type { Pool, PoolClient } from 'pg';
import type { Db } from '../../../platform/db';
import { accountId } from '../accounts/names';
import { postGroup } from '../posting/writes';
import { findPayment, getPayment } from './reads';
import { inLedgerTransaction } from './transaction';
import { insertClaim } from './writes';
import {
  type ClaimOutcome,
  type FundingTarget,
  fromRow,
  LEASE_SQL,
  ledgerAsset,
  type PaymentClaim,
  type Row,
  type ServicePayment,
  type ServicePaymentState,
  type UnconfirmedSettlement,
  withLease,
} from './record';

/** A claim, the existing record of this authorization, or the other payment that funds (or is funding) the intent. */
export type FundingClaimOutcome =
  | ClaimOutcome
  | { readonly claimed: false; readonly payment: null; readonly fundedBy: ServicePayment | null };

/**
 * Claims an authorization that funds `target` (state SETTLING, leased). Refused, with nothing
 * inserted, when another authorization already funds or is funding the same intent: that second
 * authorization is then never settled.
 */
export async function claimFundingPayment(
  db: Db,
  claim: PaymentClaim,
  target: FundingTarget,
  leaseMs: number,
): Promise<FundingClaimOutcome> {
  const claimed = await insertClaim(db, claim, leaseMs, target);
  if (claimed) return { claimed: true, payment: claimed };
  const existing = await findPayment(db, claim);
  if (existing) return { claimed: false, payment: existing };
  // The intent's live funding key names the other payment (ledger migration 0015).
  const live = await db.query<{ payment_id: string }>(
    'SELECT payment_id FROM ledger.live_fundings WHERE intent_ref = $1',
    [target.intentRef],
  );
  const other = live.rows[0] ? await getPayment(db, live.rows[0].payment_id) : null;
  return { claimed: false, payment: null, fundedBy: other };
}

/** The funding payment, locked for the caller's transaction, when it is in one of `states`; else null. */
export async function lockFundingPayment(
  client: PoolClient,
  paymentId: string,
  states: readonly ServicePaymentState[],
): Promise<ServicePayment | null> {
  const result = await client.query<Row>(
    `SELECT * FROM ledger.service_payments WHERE payment_id = $1 AND purpose = 'FUNDING' FOR UPDATE`,
    [paymentId],
  );
  const row = result.rows[0];
  return row && states.includes(row.state) ? fromRow(row) : null;
}

function targetOf(payment: ServicePayment): FundingTarget {
  if (payment.purpose !== 'FUNDING' || payment.funding === null)
    throw new Error(`service payment ${payment.paymentId} does not fund an intent`);
  return payment.funding;
}

/**
 * The chain has not decided a funding payment: park it (SUSPENSE_MOVE Dr SUSPENSE:<payment> / Cr
 * USER_OBLIGATION:<policy>) and mark it PENDING. The intent stays AWAITING_FUNDING.
 */
export async function recordFundingPending(
  pool: Pool,
  payment: ServicePayment,
  settlement: UnconfirmedSettlement,
): Promise<ServicePayment> {
  const { txHash } = settlement;
  const unpaidTxHash = settlement.unpaidTxHash ?? null;
  const target = targetOf(payment);
  return inLedgerTransaction(pool, async (client) => {
    const asset = ledgerAsset(payment);
    const parkGroupId = await postGroup(client, {
      kind: 'SUSPENSE_MOVE',
      asset,
      entries: [
        {
          account: accountId('SUSPENSE', asset, payment.paymentId),
          amountAtomic: payment.amountAtomic,
        },
        {
          account: accountId('USER_OBLIGATION', asset, target.policyId),
          amountAtomic: -payment.amountAtomic,
        },
      ],
      idempotencyKey: `x402:fee:${payment.paymentId}`,
      intentRef: target.intentRef,
      policyId: target.policyId,
      memo: unpaidTxHash
        ? `funding of ${target.intentRef} by ${payment.payer}: settlement ${unpaidTxHash} reverted; the authorization may still be used`
        : `funding of ${target.intentRef} by ${payment.payer}: settlement ${txHash ?? '(hash unknown)'} unconfirmed`,
    });
    const result = await client.query<Row>(
      `UPDATE ledger.service_payments
            SET state = 'PENDING', tx_hash = COALESCE(tx_hash, $2), unpaid_tx_hash = $4, fee_group_id = $3, lease_until = NULL
          WHERE payment_id = $1 AND state = 'SETTLING' RETURNING *`,
      [
        payment.paymentId,
        txHash?.toLowerCase() ?? null,
        parkGroupId,
        unpaidTxHash?.toLowerCase() ?? null,
      ],
    );
    if (!result.rows[0])
      throw new Error(`service payment ${payment.paymentId} left SETTLING while being parked`);
    return fromRow(result.rows[0]);
  });
}

/** Unwinds the park of a confirmed funding payment (Dr USER_OBLIGATION / Cr SUSPENSE), in the caller's transaction. */
export function postFundingParkClear(
  client: PoolClient,
  payment: ServicePayment,
  txHash: string,
): Promise<string> {
  const target = targetOf(payment);
  const asset = ledgerAsset(payment);
  return postGroup(client, {
    kind: 'SUSPENSE_MOVE',
    asset,
    entries: [
      {
        account: accountId('USER_OBLIGATION', asset, target.policyId),
        amountAtomic: payment.amountAtomic,
      },
      {
        account: accountId('SUSPENSE', asset, payment.paymentId),
        amountAtomic: -payment.amountAtomic,
      },
    ],
    idempotencyKey: `x402:clear:${payment.paymentId}`,
    intentRef: target.intentRef,
    policyId: target.policyId,
    memo: `funding settlement ${txHash} confirmed on chain`,
  });
}

export interface FundingSettlement {
  /** The transaction carrying the payment's Transfer. */
  readonly txHash: string;
  readonly fundingGroupId: string;
  /** The REFUND owed when the intent could no longer be funded; null when it was funded. */
  readonly refundGroupId: string | null;
  /** The park's clearing, for a payment that was PENDING. */
  readonly clearGroupId: string | null;
  /** Lease for the caller to run the paid call (ms); null: none (the reconciler only books). A SETTLING claim keeps its lease. */
  readonly leaseMs: number | null;
}

/**
 * Marks a locked SETTLING or PENDING funding payment SETTLED with its groups, in the caller's
 * transaction (the one that posted them). A payment that was never parked points fee_group_id at
 * its FUNDING group.
 */
export async function markFundingSettled(
  client: PoolClient,
  payment: ServicePayment,
  settlement: FundingSettlement,
): Promise<ServicePayment> {
  const { txHash, fundingGroupId, refundGroupId, clearGroupId, leaseMs } = settlement;
  const result = await client.query<Row>(
    withLease(
      `UPDATE ledger.service_payments
          SET state = 'SETTLED', tx_hash = $2, settled_at = now(),
              fee_group_id = COALESCE(fee_group_id, $3), funding_group_id = $3, refund_group_id = $4,
              clear_group_id = $5,
              unpaid_tx_hash = CASE WHEN tx_hash IS NOT NULL AND tx_hash <> $2 THEN tx_hash ELSE unpaid_tx_hash END,
              lease_until = CASE WHEN state = 'SETTLING' THEN lease_until
                                 WHEN $6::boolean THEN ${LEASE_SQL} ELSE NULL END
        WHERE payment_id = $1 AND state IN ('SETTLING', 'PENDING') RETURNING *`,
      7,
    ),
    [
      payment.paymentId,
      txHash.toLowerCase(),
      fundingGroupId,
      refundGroupId,
      clearGroupId,
      leaseMs !== null,
      leaseMs ?? 0,
    ],
  );
  if (!result.rows[0])
    throw new Error(`service payment ${payment.paymentId} moved on while its funding was booked`);
  return fromRow(result.rows[0]);
}
