// The record behind "one x402 authorization pays for exactly one call": claim, settle, park in
// SUSPENSE when the chain is silent, clear or reverse once it speaks, and keep the call's answer
// for replays. Every state that means money moved is written in the same transaction as the
// ledger group that books it (migrations 0003_service_payments.sql and 0006_service_payment_chain_proof.sql
// hold the rules the database enforces). Chain access and the protocol live in gateway/x402; this
// module only stores what they learned.
import type { Pool, PoolClient } from 'pg';
import { newServicePaymentId } from '../../core/canon/ids';
import { withTransaction } from '../../platform/db/transaction';
import { accountId, assetId, FEE_RECEIVER_REF } from './accounts';
import { ledgerErrorFrom, postGroup, postServiceFee, reverseGroup } from './posting';

export type ServicePaymentState = 'SETTLING' | 'PENDING' | 'SETTLED' | 'ANSWERED' | 'FAILED';

/** One authorization: EIP-3009 makes (token, authorizer, nonce) single use on chain. */
export interface AuthorizationKey {
  /** CAIP-2, e.g. eip155:196. */
  readonly network: string;
  /** Lowercase 0x-address of the token. */
  readonly asset: string;
  /** Lowercase 0x-address of the authorizer. */
  readonly payer: string;
  /** Lowercase 0x + 64 hex. */
  readonly nonce: string;
}

export interface PaymentClaim extends AuthorizationKey {
  readonly payTo: string;
  readonly amountAtomic: bigint;
  readonly validBefore: bigint;
  /** `METHOD /path` of the paid route as the table writes it. */
  readonly route: string;
  /** sha256 hex of the request (method, path, body): an authorization answers one request only. */
  readonly requestDigest: string;
}

export interface ServicePayment extends PaymentClaim {
  readonly paymentId: string;
  readonly state: ServicePaymentState;
  readonly leaseUntil: Date | null;
  /** The transaction that paid (or, while PENDING, the one sent and not yet confirmed). */
  readonly txHash: string | null;
  /** A settlement of ours that did not pay: it reverted, or another transaction used the authorization first. */
  readonly unpaidTxHash: string | null;
  readonly feeGroupId: string | null;
  readonly clearGroupId: string | null;
  readonly reversalGroupId: string | null;
  readonly failureReason: string | null;
  /** The chain facts a FAILED record was decided on (see FailureEvidence). */
  readonly evidenceBlock: bigint | null;
  readonly evidenceChainTimeS: bigint | null;
  readonly evidenceTxHash: string | null;
  readonly answerStatus: number | null;
  readonly answerBody: unknown;
  readonly createdAt: Date;
  readonly settledAt: Date | null;
}

interface Row {
  payment_id: string;
  network: string;
  asset: string;
  payer: string;
  nonce: string;
  pay_to: string;
  amount: string;
  valid_before: string;
  route: string;
  request_digest: string;
  state: ServicePaymentState;
  lease_until: Date | null;
  tx_hash: string | null;
  unpaid_tx_hash: string | null;
  fee_group_id: string | null;
  clear_group_id: string | null;
  reversal_group_id: string | null;
  failure_reason: string | null;
  evidence_block: string | null;
  evidence_chain_time: string | null;
  evidence_tx_hash: string | null;
  answer_status: number | null;
  answer_body: unknown;
  created_at: Date;
  settled_at: Date | null;
}

function fromRow(row: Row): ServicePayment {
  return {
    paymentId: row.payment_id,
    network: row.network,
    asset: row.asset,
    payer: row.payer,
    nonce: row.nonce,
    payTo: row.pay_to,
    amountAtomic: BigInt(row.amount),
    validBefore: BigInt(row.valid_before),
    route: row.route,
    requestDigest: row.request_digest,
    state: row.state,
    leaseUntil: row.lease_until,
    txHash: row.tx_hash,
    unpaidTxHash: row.unpaid_tx_hash,
    feeGroupId: row.fee_group_id,
    clearGroupId: row.clear_group_id,
    reversalGroupId: row.reversal_group_id,
    failureReason: row.failure_reason,
    evidenceBlock: row.evidence_block === null ? null : BigInt(row.evidence_block),
    evidenceChainTimeS: row.evidence_chain_time === null ? null : BigInt(row.evidence_chain_time),
    evidenceTxHash: row.evidence_tx_hash,
    answerStatus: row.answer_status,
    answerBody: row.answer_body,
    createdAt: row.created_at,
    settledAt: row.settled_at,
  };
}

type Db = Pool | PoolClient;

/** The fee revenue stream of a route: `GET /cafe/order/latte` -> `cafe.order.latte`. */
export function feeStreamOf(route: string): string {
  const path = route.slice(route.indexOf(' ') + 1);
  return path.replace(/^\//, '').replace(/\//g, '.');
}

function ledgerAsset(payment: AuthorizationKey): string {
  return assetId(payment.network, payment.asset);
}

const LEASE_SQL = `now() + make_interval(secs => $LEASE::double precision / 1000)`;

function withLease(sql: string, leaseIndex: number): string {
  return sql.replace(/\$LEASE/g, `$${leaseIndex}`);
}

export type ClaimOutcome =
  | { readonly claimed: true; readonly payment: ServicePayment }
  | { readonly claimed: false; readonly payment: ServicePayment };

/**
 * Inserts the claim (state SETTLING, leased for `leaseMs`) unless this authorization already has a
 * record; either way returns the record. Exactly one of any number of concurrent callers claims.
 */
export async function claimPayment(
  db: Db,
  claim: PaymentClaim,
  leaseMs: number,
): Promise<ClaimOutcome> {
  const inserted = await db.query<Row>(
    withLease(
      `INSERT INTO ledger.service_payments
         (payment_id, network, asset, payer, nonce, pay_to, amount, valid_before, route, request_digest, state, lease_until)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'SETTLING', ${LEASE_SQL})
       ON CONFLICT ON CONSTRAINT service_payments_authorization_once DO NOTHING
       RETURNING *`,
      11,
    ),
    [
      newServicePaymentId(),
      claim.network,
      claim.asset,
      claim.payer,
      claim.nonce,
      claim.payTo,
      claim.amountAtomic.toString(),
      claim.validBefore.toString(),
      claim.route,
      claim.requestDigest,
      leaseMs,
    ],
  );
  if (inserted.rows[0]) return { claimed: true, payment: fromRow(inserted.rows[0]) };
  const existing = await findPayment(db, claim);
  if (!existing) throw new Error('service payment vanished between claim and read');
  return { claimed: false, payment: existing };
}

export async function findPayment(db: Db, key: AuthorizationKey): Promise<ServicePayment | null> {
  const result = await db.query<Row>(
    `SELECT * FROM ledger.service_payments WHERE network = $1 AND asset = $2 AND payer = $3 AND nonce = $4`,
    [key.network, key.asset, key.payer, key.nonce],
  );
  return result.rows[0] ? fromRow(result.rows[0]) : null;
}

export async function getPayment(db: Db, paymentId: string): Promise<ServicePayment | null> {
  const result = await db.query<Row>(
    `SELECT * FROM ledger.service_payments WHERE payment_id = $1`,
    [paymentId],
  );
  return result.rows[0] ? fromRow(result.rows[0]) : null;
}

/**
 * Takes the lease of a SETTLING or SETTLED record whose previous holder let it lapse (crashed or
 * gave up); null when someone else holds it or the state moved on.
 */
export async function takeLapsedLease(
  db: Db,
  paymentId: string,
  state: 'SETTLING' | 'SETTLED',
  leaseMs: number,
): Promise<ServicePayment | null> {
  const result = await db.query<Row>(
    withLease(
      `UPDATE ledger.service_payments SET lease_until = ${LEASE_SQL}
        WHERE payment_id = $1 AND state = $2 AND (lease_until IS NULL OR lease_until < now())
        RETURNING *`,
      3,
    ),
    [paymentId, state, leaseMs],
  );
  return result.rows[0] ? fromRow(result.rows[0]) : null;
}

/** A verification refused the authorization before anything was sent: forget the claim. */
export async function releaseClaim(db: Db, paymentId: string): Promise<void> {
  await db.query(
    `DELETE FROM ledger.service_payments WHERE payment_id = $1 AND state = 'SETTLING' AND tx_hash IS NULL`,
    [paymentId],
  );
}

/** Lets another presentation run the paid call (it failed with a server error, not an answer). */
export async function releaseLease(db: Db, paymentId: string): Promise<void> {
  await db.query(
    `UPDATE ledger.service_payments SET lease_until = NULL WHERE payment_id = $1 AND state = 'SETTLED'`,
    [paymentId],
  );
}

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

async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  try {
    return await withTransaction(pool, work);
  } catch (error) {
    throw ledgerErrorFrom(error) ?? error;
  }
}

/**
 * The chain confirmed the Transfer of a claimed payment: SERVICE_FEE (Dr TREASURY:fee-receiver / Cr
 * FEE_REVENUE:<route>) and SETTLED, in one transaction. The lease stays: the caller runs the call.
 */
export function recordSettled(
  pool: Pool,
  payment: ServicePayment,
  txHash: string,
): Promise<ServicePayment> {
  return inTransaction(pool, async (client) => {
    const asset = ledgerAsset(payment);
    const feeGroupId = await postServiceFee(client, {
      asset,
      feeAtomic: payment.amountAtomic,
      route: feeStreamOf(payment.route),
      idempotencyKey: `x402:fee:${payment.paymentId}`,
      memo: `x402 ${payment.route} paid by ${payment.payer} in ${txHash}`,
    });
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

/** What a settlement attempt left: sent with outcome unknown (txHash; null if even that is unknown), or reverted. */
export interface UnconfirmedSettlement {
  readonly txHash: string | null;
  /** Mined without paying (reverted): it moved nothing, but the authorization may still be used. */
  readonly unpaidTxHash?: string | null;
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
  const { txHash } = settlement;
  const unpaidTxHash = settlement.unpaidTxHash ?? null;
  return inTransaction(pool, async (client) => {
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
  return inTransaction(pool, async (client) => {
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
 * The chain facts, read at one block, that prove an authorization can no longer move money: unused
 * at a block whose time is at or past validBefore, or its nonce used by a transaction that does not
 * pay this payment. The database refuses FAILED without them.
 */
export type FailureEvidence =
  | {
      readonly reason: 'invalid_exact_evm_payload_authorization_valid_before';
      readonly blockNumber: bigint;
      readonly chainTimeS: bigint;
    }
  | {
      readonly reason: 'invalid_exact_evm_nonce_already_used';
      readonly blockNumber: bigint;
      readonly usedByTxHash: string;
    };

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
  return inTransaction(pool, async (client) => {
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

/** The paid call answered: keep the answer for every later presentation of the same payment. */
export async function recordAnswer(
  db: Db,
  paymentId: string,
  status: number,
  body: unknown,
): Promise<ServicePayment | null> {
  const result = await db.query<Row>(
    `UPDATE ledger.service_payments
        SET state = 'ANSWERED', answer_status = $2, answer_body = $3::json, answered_at = now(), lease_until = NULL
      WHERE payment_id = $1 AND state = 'SETTLED' RETURNING *`,
    [paymentId, status, JSON.stringify(body ?? null)],
  );
  return result.rows[0] ? fromRow(result.rows[0]) : null;
}

/**
 * Up to `limit` payments for the reconciler: parked ones (unconfirmed, or reverted with the
 * authorization still usable) and lapsed claims (a crash between sending and recording), in
 * payment-id order after `afterPaymentId` so a sweep goes on where the last stopped. No lock is held
 * while the chain is asked: the writes above lock and re-check the row and post idempotently.
 */
export async function listUnresolved(
  db: Db,
  limit: number,
  afterPaymentId: string | null = null,
): Promise<ServicePayment[]> {
  const result = await db.query<Row>(
    `SELECT * FROM ledger.service_payments
      WHERE (state = 'PENDING' OR (state = 'SETTLING' AND lease_until < now()))
        AND ($2::text IS NULL OR payment_id > $2)
      ORDER BY payment_id
      LIMIT $1`,
    [limit, afterPaymentId],
  );
  return result.rows.map(fromRow);
}
