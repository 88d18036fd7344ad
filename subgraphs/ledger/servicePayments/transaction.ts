// The transaction every payment-record booking runs in, shared by the fee and funding bookings.
import type { Pool, PoolClient } from 'pg';
import { withTransaction } from '../../../platform/db/transaction';
import { ledgerErrorFrom } from '../sql';

/** One transaction on `pool`; a ledger refusal PostgreSQL raised (also at COMMIT) becomes its AppError. */
export async function inLedgerTransaction<T>(
  pool: Pool,
  work: (client: PoolClient) => Promise<T>,
): Promise<T> {
  try {
    return await withTransaction(pool, work);
  } catch (error) {
    throw ledgerErrorFrom(error) ?? error;
  }
}
