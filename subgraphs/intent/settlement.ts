// Settling a reservation (internal; no route calls it yet — the payment paths will). Consume turns
// an ACTIVE, unexpired reservation into settled spend (state CONSUMED, counted in "settled today")
// together with its ledger postings, posted through the ledger's published `ledger.post_group` in
// the same transaction: both commit or neither does, and the ledger's balance check runs at our
// COMMIT. Release gives the authority back (RELEASED). Both are idempotent: consuming a consumed
// reservation returns the groups it posted; releasing a released one, or one the sweep expired
// (reservationJobs.ts), returns it unchanged.
import type { Pool, PoolClient } from 'pg';
import { isReservationId } from '../../core/canon/ids';
import { AppError } from '../../core/errors';
import { withTransaction } from '../../platform/db/transaction';
import { ledgerErrorFrom } from '../ledger/posting';
import { lockPolicyDecisions } from './preflight';

/** One ledger group, as `ledger.post_group` takes it (see docs/ledger.md for the accounting). */
export interface ReservationPosting {
  readonly kind: 'FUNDING' | 'SETTLEMENT' | 'RECOGNITION' | 'SERVICE_FEE' | 'REFUND' | 'SUSPENSE_MOVE';
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
  readonly groupIds: readonly string[];
}

interface Row {
  reservation_id: string;
  state: ReservationState['state'];
  intent_hash: string;
  policy_id: string;
  amount: string;
  expires_at: Date;
  settled_group_id: string | null;
}

function stateOf(row: Row): ReservationState {
  return {
    reservationId: row.reservation_id,
    state: row.state,
    intentHash: row.intent_hash,
    policyId: row.policy_id,
    amountAtomic: row.amount,
    groupIds: row.settled_group_id === null ? [] : row.settled_group_id.split(','),
  };
}

/** The reservation, locked: the per-policy decision lock first (as preflight takes it), then the row. */
async function lockedReservation(client: PoolClient, reservationId: string): Promise<Row> {
  if (!isReservationId(reservationId)) throw new AppError('REQUEST_INVALID', 'A reservationId is rsv_ followed by 24 hex characters.');
  const policy = await client.query<{ policy_id: string }>('SELECT policy_id FROM intent.reservations WHERE reservation_id = $1', [reservationId]);
  if (policy.rows[0] === undefined) throw new AppError('REQUEST_INVALID', 'No reservation with this id.', { reservationId });
  await lockPolicyDecisions(client, policy.rows[0].policy_id);
  const result = await client.query<Row>(
    `SELECT reservation_id, state, intent_hash, policy_id, amount::text AS amount, expires_at, settled_group_id
       FROM intent.reservations WHERE reservation_id = $1 FOR UPDATE`,
    [reservationId],
  );
  return result.rows[0]!;
}

export async function consumeReservation(
  pool: Pool,
  reservationId: string,
  postings: readonly ReservationPosting[],
  now: Date,
): Promise<ReservationState> {
  try {
    return await withTransaction(pool, async (client) => {
      const row = await lockedReservation(client, reservationId);
      if (row.state === 'CONSUMED') return stateOf(row);
      if (row.state !== 'ACTIVE' || row.expires_at.getTime() <= now.getTime()) {
        throw new AppError('ILLEGAL_STATE_TRANSITION', `A ${row.expires_at.getTime() <= now.getTime() && row.state === 'ACTIVE' ? 'expired' : row.state} reservation cannot be consumed.`, {
          reservationId,
          state: row.state,
        });
      }
      const groupIds: string[] = [];
      for (const posting of postings) {
        const entries = posting.entries.map((entry) => ({ account: entry.account, amount: entry.amountAtomic.toString() }));
        const posted = await client.query<{ group_id: string }>('SELECT ledger.post_group($1, $2, $3::jsonb, $4, $5, $6, $7) AS group_id', [
          posting.kind, posting.asset, JSON.stringify(entries), posting.idempotencyKey, row.intent_hash, row.policy_id, posting.memo ?? null,
        ]);
        groupIds.push(posted.rows[0]!.group_id);
      }
      const updated = await client.query<Row>(
        `UPDATE intent.reservations SET state = 'CONSUMED', settled_group_id = $2, updated_at = $3 WHERE reservation_id = $1
         RETURNING reservation_id, state, intent_hash, policy_id, amount::text AS amount, expires_at, settled_group_id`,
        [reservationId, groupIds.length === 0 ? null : groupIds.join(','), now],
      );
      return stateOf(updated.rows[0]!);
    });
  } catch (error) {
    throw ledgerErrorFrom(error) ?? error;
  }
}

export async function releaseReservation(pool: Pool, reservationId: string, now: Date): Promise<ReservationState> {
  return withTransaction(pool, async (client) => {
    const row = await lockedReservation(client, reservationId);
    // Released already, or expired by the sweep: it holds no authority to give back.
    if (row.state === 'RELEASED' || row.state === 'EXPIRED') return stateOf(row);
    if (row.state !== 'ACTIVE') {
      throw new AppError('ILLEGAL_STATE_TRANSITION', `A ${row.state} reservation cannot be released.`, { reservationId, state: row.state });
    }
    const updated = await client.query<Row>(
      `UPDATE intent.reservations SET state = 'RELEASED', updated_at = $2 WHERE reservation_id = $1
       RETURNING reservation_id, state, intent_hash, policy_id, amount::text AS amount, expires_at, settled_group_id`,
      [reservationId, now],
    );
    return stateOf(updated.rows[0]!);
  });
}
