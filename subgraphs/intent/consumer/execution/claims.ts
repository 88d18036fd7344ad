// Claiming consumer intents for a job, without session state (safe behind PgBouncer in transaction
// mode): each intent a worker takes is held by a transaction-scoped advisory lock inside one
// transaction left open on a dedicated connection for as long as the worker works on it
// (platform/db/lockHolder.ts). The lock, unlike a timed lease, dies with the connection: a worker
// killed mid-step frees its intents at once, and the next round finds them in the state the last
// committed step left (which is how a restart tells "in flight elsewhere" from "left by a crash").
// Once its locks are held, the claim reads the candidates' states again: another worker may have
// moved one on and let go of it between the pick and the lock, and that intent is not claimed.
// Any number of workers may run against one database.
import type { ConsumerIntentState } from '../../../../core/consumer/lifecycle';
import { type DbPool, type LockHolder, openLockHolder } from '../../../../platform/db';

/** The advisory-lock namespace of consumer-intent jobs (first key of the two-key form). */
export const CONSUMER_JOB_LOCK_NAMESPACE = 0x0c17;

export interface ClaimFilter {
  readonly states: readonly ConsumerIntentState[];
  /** Extra SQL condition on the row (no parameters), e.g. `settlement ? 'authorization'`. */
  readonly where?: string;
  /** Only these intents (a worker woken for one intent claims just that one). */
  readonly intentIds?: readonly string[];
  readonly limit: number;
}

export interface Claim {
  readonly intentIds: readonly string[];
  /** Ends the holding transaction (the locks with it) and gives the connection back. */
  release(): Promise<void>;
}

/** The intents matching `filter` now, oldest change first: the candidates (`lock`: locked too). */
async function matching(
  holder: LockHolder,
  filter: ClaimFilter,
  intentIds: readonly string[] | null,
  limit: number,
  lock: boolean,
): Promise<string[]> {
  const candidates = `SELECT intent_id, updated_at FROM intent.consumer_intents
      WHERE state = ANY($1::text[]) ${filter.where ? `AND (${filter.where})` : ''}
        AND ($3::text[] IS NULL OR intent_id = ANY($3::text[]))
      ORDER BY updated_at LIMIT $2`;
  // Locking in the statement that picks: MATERIALIZED, so the lock is tried on the picked
  // candidates only (never on a row the LIMIT would drop), each once, and never waited for.
  const { rows } = await holder.client.query<{ intent_id: string }>(
    lock
      ? `WITH candidates AS MATERIALIZED (${candidates})
         SELECT intent_id FROM candidates
          WHERE pg_try_advisory_xact_lock($4, hashtext(intent_id))
          ORDER BY updated_at`
      : `SELECT intent_id FROM (${candidates}) candidates`,
    lock
      ? [filter.states, limit, intentIds, CONSUMER_JOB_LOCK_NAMESPACE]
      : [filter.states, limit, intentIds],
  );
  return rows.map((row) => row.intent_id);
}

export async function claimIntents(pool: DbPool, filter: ClaimFilter): Promise<Claim> {
  const holder = await openLockHolder(pool);
  try {
    const locked = await matching(holder, filter, filter.intentIds ?? null, filter.limit, true);
    // READ COMMITTED: this statement, taken once the locks are held, sees every step a previous
    // holder committed before letting go (the picking statement's snapshot may predate it).
    const intentIds =
      locked.length === 0 ? [] : await matching(holder, filter, locked, locked.length, false);
    return { intentIds, release: () => holder.release() };
  } catch (error) {
    await holder.release();
    throw error;
  }
}

/** Runs `work` on each claimed intent (in parallel), then releases the claim; returns how many ran. */
export async function withClaimedIntents(
  pool: DbPool,
  filter: ClaimFilter,
  work: (intentId: string) => Promise<void>,
  onError: (intentId: string, error: unknown) => void,
): Promise<number> {
  const claim = await claimIntents(pool, filter);
  try {
    await Promise.all(
      claim.intentIds.map((intentId) =>
        work(intentId).catch((error: unknown) => onError(intentId, error)),
      ),
    );
    return claim.intentIds.length;
  } finally {
    await claim.release();
  }
}
