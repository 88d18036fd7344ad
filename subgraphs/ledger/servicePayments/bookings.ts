// Changes of the x402 payment record that mean money moved: settled, parked in SUSPENSE when the
// chain is silent, confirmed, or failed on chain proof. Each is written in one transaction with
// the ledger group that books it, deciding from the locked row so two reconcilers never book
// contradicting groups (migrations 0003_service_payments.sql and 0006_service_payment_chain_proof.sql
// hold the rules the database enforces). Chain access and the protocol live in gateway/x402.
import type { Pool, PoolClient } from 'pg';
import { accountId, FEE_RECEIVER_REF } from '../accounts/names';
import { TurnBatches } from '../../../platform/turnBatch';
import { serviceFeeGroup } from '../posting/groupKinds';
import { groupsParam, postGroup, reverseGroup } from '../posting/writes';
import { recordFundingPending } from './funding';
import { inLedgerTransaction } from './transaction';
import {
  type FailureEvidence,
  feeStreamOf,
  fromRow,
  LEASE_SQL,
  ledgerAsset,
  type Row,
  type ServicePayment,
  type ServicePaymentState,
  type UnconfirmedSettlement,
  withLease,
} from './record';

async function update(
  client: PoolClient,
  sql: string,
  params: unknown[],
): Promise<ServicePayment | null> {
  const result = await client.query<Row>(sql, params);
  return result.rows[0] ? fromRow(result.rows[0]) : null;
}

/**
 * The record, locked for this transaction, when it is in one of `states`; null when it moved on.
 * Deciding from the locked row means two reconcilers never book contradicting groups.
 */
async function lockIn(
  client: PoolClient,
  paymentId: string,
  states: readonly ServicePaymentState[],
): Promise<ServicePayment | null> {
  const result = await client.query<Row>(
    `SELECT * FROM ledger.service_payments WHERE payment_id = $1 FOR UPDATE`,
    [paymentId],
  );
  const row = result.rows[0];
  return row && states.includes(row.state) ? fromRow(row) : null;
}

/**
 * The chain confirmed the Transfer of a claimed payment: SERVICE_FEE (Dr TREASURY:fee-receiver / Cr
 * FEE_REVENUE:<route>) and SETTLED, in one transaction. The lease stays: the caller runs the call.
 * Calls on the same pool in the same event-loop turn (the members of one settlement group) are
 * booked in one transaction: their fee groups in one ledger.post_groups, their rows in one UPDATE.
 * If that transaction fails, each is booked alone, so each gets the answer or error it would have.
 */
export function recordSettled(
  pool: Pool,
  payment: ServicePayment,
  txHash: string,
): Promise<ServicePayment> {
  return settledBatches.add(pool, { payment, txHash });
}

interface SettledFee {
  readonly payment: ServicePayment;
  readonly txHash: string;
}

const settledBatches = new TurnBatches<Pool, SettledFee, ServicePayment>((pool) => ({
  alone: (item) => recordSettledAlone(pool, item),
  together: (items) => recordSettledTogether(pool, items),
  // A settlement group is at most 64 by default; a turn may release more than one.
  maxSize: 256,
}));

/** The batches of recordSettled on `pool` (for tests and benches): how many went together. */
export function settledBookingStats(pool: Pool) {
  return settledBatches.stats(pool);
}

function serviceFeeOf({ payment, txHash }: SettledFee) {
  return serviceFeeGroup({
    asset: ledgerAsset(payment),
    feeAtomic: payment.amountAtomic,
    route: feeStreamOf(payment.route),
    idempotencyKey: `x402:fee:${payment.paymentId}`,
    memo: `x402 ${payment.route} paid by ${payment.payer} in ${txHash}`,
  });
}

function recordSettledAlone(pool: Pool, item: SettledFee): Promise<ServicePayment> {
  const { payment, txHash } = item;
  return inLedgerTransaction(pool, async (client) => {
    const feeGroupId = await postGroup(client, serviceFeeOf(item));
    const updated = await update(
      client,
      `UPDATE ledger.service_payments SET state = 'SETTLED', tx_hash = $2, fee_group_id = $3, settled_at = now()
        WHERE payment_id = $1 AND state = 'SETTLING' RETURNING *`,
      [payment.paymentId, txHash.toLowerCase(), feeGroupId],
    );
    if (!updated)
      throw new Error(`service payment ${payment.paymentId} left SETTLING while being settled`);
    return updated;
  });
}

/**
 * Two or more settled fees in one statement (ledger.settle_service_fees: their SERVICE_FEE groups
 * and their rows, all or nothing); throws, keeping nothing, unless every one is booked.
 */
async function recordSettledTogether(
  pool: Pool,
  items: readonly SettledFee[],
): Promise<ServicePayment[]> {
  // A refusal needs no translation here: the batch then books each payment alone, which reports it.
  const result = await pool.query<Row>(
    'SELECT * FROM ledger.settle_service_fees($1::jsonb, $2::text[], $3::text[])',
    [
      groupsParam(items.map(serviceFeeOf)),
      items.map((item) => item.payment.paymentId),
      items.map((item) => item.txHash.toLowerCase()),
    ],
  );
  return result.rows.map(fromRow);
}

/**
 * The chain has not decided the payment: sent with no answer in time, or reverted while the
 * authorization stays usable. The fee is parked (SERVICE_FEE with Dr SUSPENSE:<paymentId>) and the
 * call is not run until the reconciler sees the chain decide.
 */
export function recordPending(
  pool: Pool,
  payment: ServicePayment,
  settlement: UnconfirmedSettlement,
): Promise<ServicePayment> {
  // A payment funding a consumer intent parks against the user's obligation instead (funding.ts).
  if (payment.purpose === 'FUNDING') return recordFundingPending(pool, payment, settlement);
  const { txHash } = settlement;
  const unpaidTxHash = settlement.unpaidTxHash ?? null;
  return inLedgerTransaction(pool, async (client) => {
    const asset = ledgerAsset(payment);
    const feeGroupId = await postGroup(client, {
      kind: 'SERVICE_FEE',
      asset,
      entries: [
        {
          account: accountId('SUSPENSE', asset, payment.paymentId),
          amountAtomic: payment.amountAtomic,
        },
        {
          account: accountId('FEE_REVENUE', asset, feeStreamOf(payment.route)),
          amountAtomic: -payment.amountAtomic,
        },
      ],
      idempotencyKey: `x402:fee:${payment.paymentId}`,
      memo: unpaidTxHash
        ? `x402 ${payment.route} by ${payment.payer}: settlement ${unpaidTxHash} reverted; the authorization may still be used`
        : `x402 ${payment.route} by ${payment.payer}: settlement ${txHash ?? '(hash unknown)'} unconfirmed`,
    });
    const updated = await update(
      client,
      `UPDATE ledger.service_payments
          SET state = 'PENDING', tx_hash = COALESCE(tx_hash, $2), unpaid_tx_hash = $4, fee_group_id = $3, lease_until = NULL
        WHERE payment_id = $1 AND state = 'SETTLING' RETURNING *`,
      [
        payment.paymentId,
        txHash?.toLowerCase() ?? null,
        feeGroupId,
        unpaidTxHash?.toLowerCase() ?? null,
      ],
    );
    if (!updated)
      throw new Error(`service payment ${payment.paymentId} left SETTLING while being parked`);
    return updated;
  });
}

/**
 * The chain confirmed a parked payment: clear SUSPENSE into TREASURY:fee-receiver (SUSPENSE_MOVE) and mark it
 * SETTLED. Idempotent: a second reconciler finds it settled and changes nothing. `txHash` is the
 * transaction that paid; a different one recorded before (ours, overtaken) is kept as unpaid.
 * `leaseMs`: the caller will run the call now (a re-presentation); null: the reconciler only books it.
 */
export function recordConfirmed(
  pool: Pool,
  payment: ServicePayment,
  txHash: string,
  leaseMs: number | null,
): Promise<ServicePayment | null> {
  return inLedgerTransaction(pool, async (client) => {
    if (!(await lockIn(client, payment.paymentId, ['PENDING']))) return null;
    const asset = ledgerAsset(payment);
    const clearGroupId = await postGroup(client, {
      kind: 'SUSPENSE_MOVE',
      asset,
      entries: [
        {
          account: accountId('TREASURY', asset, FEE_RECEIVER_REF),
          amountAtomic: payment.amountAtomic,
        },
        {
          account: accountId('SUSPENSE', asset, payment.paymentId),
          amountAtomic: -payment.amountAtomic,
        },
      ],
      idempotencyKey: `x402:clear:${payment.paymentId}`,
      memo: `x402 settlement ${txHash} confirmed on chain`,
    });
    return update(
      client,
      withLease(
        `UPDATE ledger.service_payments
            SET state = 'SETTLED', tx_hash = $2, clear_group_id = $3, settled_at = now(),
                unpaid_tx_hash = CASE WHEN tx_hash IS NOT NULL AND tx_hash <> $2 THEN tx_hash ELSE unpaid_tx_hash END,
                lease_until = CASE WHEN $4::boolean THEN ${LEASE_SQL} ELSE NULL END
          WHERE payment_id = $1 AND state = 'PENDING' RETURNING *`,
        5,
      ),
      [payment.paymentId, txHash.toLowerCase(), clearGroupId, leaseMs !== null, leaseMs ?? 0],
    );
  });
}

/**
 * The chain proved the payment can never arrive: nothing moved and nothing will. A parked fee is
 * reversed in the same transaction. Returns null if the record had already moved on.
 */
export function recordFailed(
  pool: Pool,
  payment: ServicePayment,
  evidence: FailureEvidence,
): Promise<ServicePayment | null> {
  const { reason } = evidence;
  const chainTimeS = 'chainTimeS' in evidence ? evidence.chainTimeS.toString() : null;
  const usedByTxHash = 'usedByTxHash' in evidence ? evidence.usedByTxHash.toLowerCase() : null;
  return inLedgerTransaction(pool, async (client) => {
    const current = await lockIn(client, payment.paymentId, ['SETTLING', 'PENDING']);
    if (!current) return null;
    const reversalGroupId = current.feeGroupId
      ? await reverseGroup(client, {
          groupId: current.feeGroupId,
          reason: `x402 payment ${payment.paymentId} failed on chain: ${reason}`,
          idempotencyKey: `x402:reverse:${payment.paymentId}`,
        })
      : null;
    return update(
      client,
      `UPDATE ledger.service_payments
          SET state = 'FAILED', failure_reason = $2, reversal_group_id = $3, lease_until = NULL,
              evidence_block = $4, evidence_chain_time = $5, evidence_tx_hash = $6
        WHERE payment_id = $1 AND state IN ('SETTLING', 'PENDING') RETURNING *`,
      [
        payment.paymentId,
        reason,
        reversalGroupId,
        evidence.blockNumber.toString(),
        chainTimeS,
        usedByTxHash,
      ],
    );
  });
}
