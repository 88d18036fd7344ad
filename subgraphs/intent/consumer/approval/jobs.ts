// The consumer intents' worker jobs, run in the escalation worker's round (cli/worker.ts):
// advanceConsumerApprovals moves intents whose escalation was decided outside the approve route (a
// channel reply, the dashboard, the timeout); expireConsumerIntents ends unfunded intents past
// their quote's expiry, giving their reservation back. Each move is a compare-and-set, so any
// number of workers may run them at once: the loser of a race skips the intent.
import { STATE_REASON, stateReason } from '../../../../core/consumer/reasons';
import type { Pool } from 'pg';
import { releaseReservation } from '../../reservations/consumeOrRelease';
import type { ConsumerDeps } from '../policyCheck';
import { CONSUMER_INTENT_COLUMNS, type ConsumerIntentDbRow, fromRow } from '../store';
import { transitionConsumerIntent } from '../transition';
import { advanceApproval } from './advance';

/** Intents looked at per round; the next round takes the rest. */
const BATCH = 100;

export interface ConsumerJobDeps {
  readonly db: Pool;
  /** Seals a fresh escalation's reply code, should a repeated decision escalate again. */
  readonly sealingKey?: Buffer;
}

/** AWAITING_APPROVAL intents whose escalation is no longer pending, advanced; how many moved. */
export async function advanceConsumerApprovals(deps: ConsumerJobDeps, now: Date): Promise<number> {
  // The rows themselves (typed once by fromRow), not ids read again one by one.
  const due = await deps.db.query<ConsumerIntentDbRow>(
    `SELECT ${CONSUMER_INTENT_COLUMNS} FROM intent.consumer_intents
      WHERE intent_id IN (
        SELECT ci.intent_id
          FROM intent.consumer_intents ci
          CROSS JOIN LATERAL policy.escalation_outcome(ci.poll_ref, $1) e
         WHERE ci.state = 'AWAITING_APPROVAL' AND ci.poll_ref IS NOT NULL AND e.state <> 'PENDING'
         ORDER BY ci.updated_at, ci.intent_id
         LIMIT $2)
      ORDER BY updated_at, intent_id`,
    [now, BATCH],
  );
  const decideDeps: ConsumerDeps = { db: deps.db, now: () => now, sealingKey: deps.sealingKey };
  let moved = 0;
  for (const row of due.rows.map(fromRow)) {
    const after = await advanceApproval(decideDeps, row);
    if (after !== null && after.state !== row.state) moved += 1;
  }
  return moved;
}

/** Unfunded intents past their quote's expiry → EXPIRED, their reservation released; how many. */
export async function expireConsumerIntents(db: Pool, now: Date): Promise<number> {
  const due = await db.query<{
    intent_id: string;
    state: 'AWAITING_APPROVAL' | 'APPROVED' | 'AWAITING_FUNDING';
  }>(
    `SELECT intent_id, state FROM intent.consumer_intents
      WHERE state IN ('AWAITING_APPROVAL', 'APPROVED', 'AWAITING_FUNDING')
        AND quote_expires_at <= $1
      ORDER BY quote_expires_at, intent_id
      LIMIT $2`,
    [now, BATCH],
  );
  let expired = 0;
  for (const { intent_id: intentId, state } of due.rows) {
    const row = await transitionConsumerIntent(db, intentId, state, 'EXPIRED', {
      now,
      reason: stateReason(STATE_REASON.QUOTE_EXPIRED),
    });
    if (row === null) continue;
    expired += 1;
    // After the move, so a fund racing it finds the intent no longer fundable first.
    if (row.reservationId !== null) await releaseReservation(db, row.reservationId, () => now);
  }
  return expired;
}
