// Reads of the x402 payment record: by authorization, by id, and the reconciler's sweep of
// unresolved payments in payment-id order. No lock is taken; writes re-check under their own.
import type { Db } from '../../../platform/db';
import { type AuthorizationKey, fromRow, type Row, type ServicePayment } from './record';

/**
 * The record of this authorization, if any: its key names the payment, whose record is read from
 * its month (ledger migration 0015). None when its month is archived.
 */
export async function findPayment(db: Db, key: AuthorizationKey): Promise<ServicePayment | null> {
  const result = await db.query<Row>(
    `SELECT * FROM ledger.payment_by_authorization($1, $2, $3, $4)`,
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
