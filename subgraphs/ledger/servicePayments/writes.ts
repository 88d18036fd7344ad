// Changes of the x402 payment record that move no money: the claim (exactly one caller wins an
// authorization), lease takeover and release, forgetting a claim that never reached the chain,
// and keeping the call's answer for replays. The database's triggers refuse illegal changes.
import { newServicePaymentId } from '../../../core/canon/ids';
import type { Pool } from 'pg';
import type { Db } from '../../../platform/db';
import { TurnBatches } from '../../../platform/turnBatch';
import { findPayment } from './reads';
import {
  type ClaimOutcome,
  type FundingTarget,
  fromRow,
  LEASE_SQL,
  type PaymentClaim,
  type Row,
  type ServicePayment,
  withLease,
} from './record';

/**
 * Records a claim (state SETTLING, leased for `leaseMs`); null when a unique rule refused it. A fee
 * claim conflicts only on its authorization; a funding claim (`funding` set) also on its intent's
 * one live funding payment. The keys those rules hold live beside the monthly records (ledger
 * migration 0015), so a claim is made by the ledger's claim functions, never by a bare INSERT.
 */
export async function insertClaim(
  db: Db,
  claim: PaymentClaim,
  leaseMs: number,
  funding: FundingTarget | null,
): Promise<ServicePayment | null> {
  if (funding === null) return (await insertFeeClaims(db, [{ claim, leaseMs }]))[0]!;
  const inserted = await db.query<Row>(
    `SELECT * FROM ledger.claim_funding_payment($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
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
      funding.policyId,
      funding.intentRef,
    ],
  );
  return inserted.rows[0] ? fromRow(inserted.rows[0]) : null;
}

/**
 * Inserts the claim (state SETTLING, leased for `leaseMs`) unless this authorization already has a
 * record; either way returns the record. Exactly one of any number of concurrent callers claims.
 * Claims made on the same pool in the same event-loop turn share one INSERT (each row decided on
 * its own, as alone); should that statement fail, each is inserted alone.
 */
export async function claimPayment(
  pool: Pool,
  claim: PaymentClaim,
  leaseMs: number,
): Promise<ClaimOutcome> {
  const claimed = await claimBatches.add(pool, { claim, leaseMs });
  if (claimed) return { claimed: true, payment: claimed };
  const existing = await findPayment(pool, claim);
  // The key stays when a record's month is archived (ledger migration 0015), and archive takes only
  // months whose authorizations have all expired, which the paywall refuses before claiming.
  if (!existing)
    throw new Error('the record of this authorization is gone (its month archived) or vanished');
  return { claimed: false, payment: existing };
}

interface FeeClaim {
  readonly claim: PaymentClaim;
  readonly leaseMs: number;
}

const claimBatches = new TurnBatches<Pool, FeeClaim, ServicePayment | null>((pool) => ({
  alone: (item) => insertClaim(pool, item.claim, item.leaseMs, null),
  together: (items) => insertFeeClaims(pool, items),
  maxSize: 256,
}));

/**
 * Fee claims in one statement (ledger.claim_fee_payments): each is recorded unless its
 * authorization has a record (or an earlier claim of the same call took it); each claim gets its
 * record, or null.
 */
async function insertFeeClaims(
  db: Db,
  items: readonly FeeClaim[],
): Promise<Array<ServicePayment | null>> {
  const ids = items.map(() => newServicePaymentId());
  const column = <T>(pick: (claim: PaymentClaim) => T) => items.map((item) => pick(item.claim));
  const inserted = await db.query<Row>(
    `SELECT * FROM ledger.claim_fee_payments($1::text[], $2::text[], $3::text[], $4::text[], $5::text[],
       $6::text[], $7::numeric[], $8::numeric[], $9::text[], $10::text[], $11::integer[])`,
    [
      ids,
      column((claim) => claim.network),
      column((claim) => claim.asset),
      column((claim) => claim.payer),
      column((claim) => claim.nonce),
      column((claim) => claim.payTo),
      column((claim) => claim.amountAtomic.toString()),
      column((claim) => claim.validBefore.toString()),
      column((claim) => claim.route),
      column((claim) => claim.requestDigest),
      items.map((item) => item.leaseMs),
    ],
  );
  const byId = new Map(inserted.rows.map((row) => [row.payment_id, fromRow(row)]));
  return ids.map((id) => byId.get(id) ?? null);
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

/**
 * The paid call answered: keep the answer for every later presentation of the same payment; null
 * when the record is not SETTLED (already answered, or moved on). Answers recorded on the same pool
 * in the same event-loop turn share one UPDATE; should it fail, each is recorded alone.
 */
export function recordAnswer(
  pool: Pool,
  paymentId: string,
  status: number,
  body: unknown,
): Promise<ServicePayment | null> {
  return answerBatches.add(pool, { paymentId, status, body: JSON.stringify(body ?? null) });
}

interface Answer {
  readonly paymentId: string;
  readonly status: number;
  /** The answer body as JSON text. */
  readonly body: string;
}

const answerBatches = new TurnBatches<Pool, Answer, ServicePayment | null>((pool) => ({
  alone: (answer) => recordAnswers(pool, [answer]).then((rows) => rows[0]!),
  together: (answers) => recordAnswers(pool, answers),
  maxSize: 256,
}));

/**
 * One UPDATE for every answer; each gets its updated record, or null where it was not SETTLED. The
 * ids, as values, name the months the UPDATE reads.
 */
async function recordAnswers(
  db: Db,
  answers: readonly Answer[],
): Promise<Array<ServicePayment | null>> {
  // The same payment twice in one batch: the first answer is recorded, the second finds it ANSWERED.
  const first = answers.filter(
    (answer, index) => answers.findIndex((other) => other.paymentId === answer.paymentId) === index,
  );
  const result = await db.query<Row>(
    `UPDATE ledger.service_payments p
        SET state = 'ANSWERED', answer_status = t.status, answer_body = t.body::json,
            answered_at = now(), lease_until = NULL
       FROM unnest($1::text[], $2::integer[], $3::text[]) AS t(payment_id, status, body)
      WHERE p.payment_id = t.payment_id AND p.payment_id = ANY ($1::text[]) AND p.state = 'SETTLED'
      RETURNING p.*`,
    [
      first.map((answer) => answer.paymentId),
      first.map((answer) => answer.status),
      first.map((answer) => answer.body),
    ],
  );
  const byId = new Map(result.rows.map((row) => [row.payment_id, fromRow(row)]));
  return answers.map((answer) =>
    first.includes(answer) ? (byId.get(answer.paymentId) ?? null) : null,
  );
}
