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
import {
  type DbPool,
  type LockHolder,
  openLockHolder,
  tryNamedLockSql,
} from '../../../../platform/db';

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

/** The intents matching `filter` now (only `intentIds`, when given), oldest change first. */
function matchingSql(filter: ClaimFilter): string {
  return `SELECT intent_id, updated_at FROM intent.consumer_intents
      WHERE state = ANY($1::text[]) ${filter.where ? `AND (${filter.where})` : ''}
        AND ($3::text[] IS NULL OR intent_id = ANY($3::text[]))
      ORDER BY updated_at LIMIT $2`;
}

/**
 * Picks the candidates and locks them in one statement: MATERIALIZED, so the lock is tried on the
 * picked rows only (never on a row the LIMIT would drop), each once, and never waited for.
 * Returns the ones locked.
 */
async function pickAndLock(holder: LockHolder, filter: ClaimFilter): Promise<string[]> {
  const { rows } = await holder.client.query<{ intent_id: string }>(
    `WITH candidates AS MATERIALIZED (${matchingSql(filter)})
     SELECT intent_id FROM candidates
      WHERE ${tryNamedLockSql('$4', 'intent_id')}
      ORDER BY updated_at`,
    [filter.states, filter.limit, filter.intentIds ?? null, CONSUMER_JOB_LOCK_NAMESPACE],
  );
  return rows.map((row) => row.intent_id);
}

/** Of the `locked` intents, those that still match `filter`. */
async function stillMatching(
  holder: LockHolder,
  filter: ClaimFilter,
  locked: readonly string[],
): Promise<string[]> {
  const { rows } = await holder.client.query<{ intent_id: string }>(
    `SELECT intent_id FROM (${matchingSql(filter)}) candidates`,
    [filter.states, locked.length, locked],
  );
  return rows.map((row) => row.intent_id);
}

export async function claimIntents(pool: DbPool, filter: ClaimFilter): Promise<Claim> {
  const holder = await openLockHolder(pool);
  try {
    const locked = await pickAndLock(holder, filter);
    // READ COMMITTED: this statement, taken once the locks are held, sees every step a previous
    // holder committed before letting go (the picking statement's snapshot may predate it).
    const intentIds = locked.length === 0 ? [] : await stillMatching(holder, filter, locked);
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
