// Settling a reservation (internal; no route calls it yet — the payment paths will). Consume turns
// an ACTIVE, unexpired reservation into settled spend (state CONSUMED) with its one ledger group,
// through `intent.consume_reservation` (migration 0009), which refuses anything but exactly one
// group in the reservation's asset moving at most the reserved amount, posts it with
// `ledger.post_group` in this transaction and counts only what it moved (the rest is released).
// Release gives the authority back (RELEASED). Both take the policy's decision lock first and read
// the clock once it is held, so their instant is ordered with every decision's. Both are
// idempotent: consuming a consumed reservation returns the group it posted; releasing a released
// one, or one the sweep expired (jobs.ts), returns it unchanged.
import { isReservationId } from '../../../core/canon/ids';
import { AppError } from '../../../core/errors';
import type { Db, DbPool } from '../../../platform/db';
import { withTransaction } from '../../../platform/db/transaction';
import { appErrorFromSql } from '../../kit';
import { ledgerErrorFrom } from '../../ledger';
import { lockPolicyDecisions } from '../decisionLock/lock';
import { INTENT_SQLSTATES } from '../sql';

/** One ledger group, as `ledger.post_group` takes it (see docs/ledger.md for the accounting). */
export interface ReservationPosting {
  readonly kind:
    'FUNDING' | 'SETTLEMENT' | 'RECOGNITION' | 'SERVICE_FEE' | 'REFUND' | 'SUSPENSE_MOVE';
  /** The ledger asset id (`<chain>|<token>`); it must be the reservation's asset. */
  readonly asset: string;
  readonly entries: ReadonlyArray<{ readonly account: string; readonly amountAtomic: bigint }>;
  readonly idempotencyKey: string;
  readonly memo?: string | null;
}

export interface ReservationState {
  readonly reservationId: string;
  readonly state: 'ACTIVE' | 'CONSUMED' | 'RELEASED' | 'EXPIRED';
  readonly intentHash: string;
  readonly policyId: string;
  readonly amountAtomic: string;
  /** What the consumption moved (at most amountAtomic; the rest was released); null unless CONSUMED. */
  readonly settledAmountAtomic: string | null;
  readonly groupIds: readonly string[];
}

interface Row {
  reservation_id: string;
  state: ReservationState['state'];
  intent_hash: string;
  policy_id: string;
  amount: string;
  settled_amount: string | null;
  expires_at: Date;
  settled_group_id: string | null;
}

const COLUMNS =
  'reservation_id, state, intent_hash, policy_id, amount::text AS amount, settled_amount::text AS settled_amount, expires_at, settled_group_id';

/**
 * What consume_reservation and the reservation guard raise (IN002, IN003: sql.ts), else what
 * ledger.post_group raised inside the same transaction (the ledger's own map).
 */
function settlementErrorFrom(error: unknown): AppError | null {
  return appErrorFromSql(error, INTENT_SQLSTATES) ?? ledgerErrorFrom(error);
}

function stateOf(row: Row): ReservationState {
  return {
    reservationId: row.reservation_id,
    state: row.state,
    intentHash: row.intent_hash,
    policyId: row.policy_id,
    amountAtomic: row.amount,
    settledAmountAtomic: row.settled_amount,
    groupIds: row.settled_group_id === null ? [] : row.settled_group_id.split(','),
  };
}

/** The reservation, locked: the per-policy decision lock first (as preflight takes it), then the row. */
async function lockedReservation(client: Db, reservationId: string): Promise<Row> {
  if (!isReservationId(reservationId))
    throw new AppError('REQUEST_INVALID', 'A reservationId is rsv_ followed by 24 hex characters.');
  const policy = await client.query<{ policy_id: string }>(
    'SELECT policy_id FROM intent.reservations WHERE reservation_id = $1',
    [reservationId],
  );
  if (policy.rows[0] === undefined)
    throw new AppError('REQUEST_INVALID', 'No reservation with this id.', { reservationId });
  await lockPolicyDecisions(client, policy.rows[0].policy_id);
  const result = await client.query<Row>(
    `SELECT ${COLUMNS} FROM intent.reservations WHERE reservation_id = $1 FOR UPDATE`,
    [reservationId],
  );
  return result.rows[0]!;
}

/**
 * Consumes the reservation with `postings`, which must hold exactly one group (the database
 * refuses anything else with RESERVATION_SETTLEMENT_INVALID). `clock` is read once the decision
 * lock is held.
 */
export async function consumeReservation(
  pool: DbPool,
  reservationId: string,
  postings: readonly ReservationPosting[],
  clock: () => Date,
): Promise<ReservationState> {
  try {
    return await withTransaction(pool, (client) =>
      consumeReservationIn(client, reservationId, postings, clock),
    );
  } catch (error) {
    throw settlementErrorFrom(error) ?? error;
  }
}

/**
 * consumeReservation inside the caller's transaction (`client` has BEGUN): for a caller that
 * changes more with the same commit, e.g. a consumer intent funded by this group. SQL refusals
 * are thrown as they come; map them with the caller's own error handling.
 */
export async function consumeReservationIn(
  client: Db,
  reservationId: string,
  postings: readonly ReservationPosting[],
  clock: () => Date,
): Promise<ReservationState> {
  const row = await lockedReservation(client, reservationId);
  if (row.state === 'CONSUMED') return stateOf(row);
  const groups = postings.map((posting) => ({
    kind: posting.kind,
    asset: posting.asset,
    entries: posting.entries.map((entry) => ({
      account: entry.account,
      amount: entry.amountAtomic.toString(),
    })),
    idempotencyKey: posting.idempotencyKey,
    memo: posting.memo ?? null,
  }));
  const consumed = await client.query<Row>(
    `SELECT ${COLUMNS} FROM intent.consume_reservation($1, $2::jsonb, $3)`,
    [reservationId, JSON.stringify(groups), clock()],
  );
  return stateOf(consumed.rows[0]!);
}

/** Releases the reservation; `clock` is read once the decision lock is held. */
export async function releaseReservation(
  pool: DbPool,
  reservationId: string,
  clock: () => Date,
): Promise<ReservationState> {
  return withTransaction(pool, async (client) => {
    const row = await lockedReservation(client, reservationId);
    // Released already, or expired by the sweep: it holds no authority to give back.
    if (row.state === 'RELEASED' || row.state === 'EXPIRED') return stateOf(row);
    if (row.state !== 'ACTIVE') {
      throw new AppError(
        'ILLEGAL_STATE_TRANSITION',
        `A ${row.state} reservation cannot be released.`,
        { reservationId, state: row.state },
      );
    }
    const updated = await client.query<Row>(
      `UPDATE intent.reservations SET state = 'RELEASED', updated_at = $2 WHERE reservation_id = $1 RETURNING ${COLUMNS}`,
      [reservationId, clock()],
    );
    return stateOf(updated.rows[0]!);
  });
}
