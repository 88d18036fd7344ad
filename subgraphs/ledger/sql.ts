// The ledger's custom SQLSTATEs (raised by the SQL in migrations/) mapped to the AppError codes
// clients see, and the one function that turns a refusal PostgreSQL raised (also at COMMIT) into
// its AppError. Any other error passes through unmapped, for the caller to rethrow.
import type { QueryConfig, QueryResultRow } from 'pg';
import type { AppError } from '../../core/errors';
import type { Db } from '../../platform/db';
import { appErrorFromSql, DEFECT, type SqlStateMap } from '../kit';

/**
 * LG006 (the append-only guards and the x402 payment record's triggers) is a DEFECT: only our own
 * broken code can trip it, so it is no refusal to explain to a client (docs/ledger.md).
 */
export const LEDGER_SQLSTATES: SqlStateMap = {
  LG001: 'LEDGER_GROUP_UNBALANCED',
  LG002: 'LEDGER_GROUP_INVALID',
  LG003: 'LEDGER_GROUP_NOT_FOUND',
  LG004: 'LEDGER_ALREADY_REVERSED',
  LG005: 'LEDGER_IDEMPOTENCY_CONFLICT',
  LG006: DEFECT,
};

/** The AppError for a ledger refusal raised by PostgreSQL (also at COMMIT), or null for any other error. */
export function ledgerErrorFrom(error: unknown): AppError | null {
  return appErrorFromSql(error, LEDGER_SQLSTATES);
}

/** One statement, its first row; a ledger refusal rethrown as its AppError. */
export async function run<R extends QueryResultRow>(db: Db, config: QueryConfig): Promise<R> {
  try {
    const result = await db.query<R>(config);
    return result.rows[0];
  } catch (error) {
    throw ledgerErrorFrom(error) ?? error;
  }
}
