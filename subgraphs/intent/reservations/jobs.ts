// The background work of reservations: a reservation whose deadline has passed stops counting at
// once (the window subtracts it), but it stays ACTIVE until this sweep marks it EXPIRED. Without
// the sweep every decision of the day would read all of the day's lapsed reservations again (the
// window's lapsed-reservation read grows with them) and `ACTIVE` would keep meaning two things.
// Each policy's lapsed reservations expire in a transaction of their own under the policy's
// decision lock, the lock preflight and settlement take: a decision never sees one half-moved,
// and the running totals (their trigger) move in the same transaction. Any number of workers may
// run it; a reservation already moved is left alone.
import type { DbPool } from '../../../platform/db';
import { withTransaction } from '../../../platform/db/transaction';
import { lockPolicyDecisions } from '../decisionLock/lock';

/** Policies looked at per sweep statement; the sweep repeats until none are left. */
export const RESERVATION_SWEEP_POLICIES = 100;

/** Marks every ACTIVE reservation whose deadline is at or before `now` EXPIRED; returns how many this call moved. */
export async function sweepLapsedReservations(db: DbPool, now: Date): Promise<number> {
  let expired = 0;
  let after = '';
  for (;;) {
    const due = await db.query<{ policy_id: string }>(
      `SELECT DISTINCT policy_id FROM intent.reservations
        WHERE state = 'ACTIVE' AND expires_at <= $1 AND policy_id > $2
        ORDER BY policy_id LIMIT $3`,
      [now, after, RESERVATION_SWEEP_POLICIES],
    );
    for (const { policy_id: policyId } of due.rows) {
      expired += await withTransaction(db, async (client) => {
        await lockPolicyDecisions(client, policyId);
        const moved = await client.query(
          `UPDATE intent.reservations SET state = 'EXPIRED', updated_at = $2
            WHERE policy_id = $1 AND state = 'ACTIVE' AND expires_at <= $2`,
          [policyId, now],
        );
        return moved.rowCount ?? 0;
      });
    }
    if (due.rows.length < RESERVATION_SWEEP_POLICIES) return expired;
    after = due.rows[due.rows.length - 1]!.policy_id;
  }
}
