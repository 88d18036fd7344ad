// Claiming consumer intents for a job, as the other jobs do: candidate rows are picked with
// FOR UPDATE SKIP LOCKED, and each one a worker takes is held by a session advisory lock on one
// dedicated connection for as long as the worker works on it. The lock, unlike a lease, dies with
// the connection: a worker killed mid-step frees its intents at once, and the next round finds
// them in the state the last committed step left (which is how a restart tells "in flight
// elsewhere" from "left by a crash"). Any number of workers may run against one database.
import type { PoolClient } from 'pg';
import type { ConsumerIntentState } from '../../../../core/consumer/lifecycle';
import type { DbPool } from '../../../../platform/db';

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
  /** Releases the advisory locks and the connection. */
  release(): Promise<void>;
}

async function tryLocks(client: PoolClient, candidates: readonly string[]): Promise<string[]> {
  const taken: string[] = [];
  for (const intentId of candidates) {
    const result = await client.query<{ ok: boolean }>(
      'SELECT pg_try_advisory_lock($1, hashtext($2)) AS ok',
      [CONSUMER_JOB_LOCK_NAMESPACE, intentId],
    );
    if (result.rows[0]?.ok) taken.push(intentId);
  }
  return taken;
}

export async function claimIntents(pool: DbPool, filter: ClaimFilter): Promise<Claim> {
  const client = await pool.connect();
  let intentIds: string[] = [];
  try {
    await client.query('BEGIN');
    const candidates = await client.query<{ intent_id: string }>(
      `SELECT intent_id FROM intent.consumer_intents
        WHERE state = ANY($1::text[]) ${filter.where ? `AND (${filter.where})` : ''}
          AND ($3::text[] IS NULL OR intent_id = ANY($3::text[]))
        ORDER BY updated_at LIMIT $2
        FOR UPDATE SKIP LOCKED`,
      [filter.states, filter.limit, filter.intentIds ?? null],
    );
    intentIds = await tryLocks(
      client,
      candidates.rows.map((row) => row.intent_id),
    );
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    client.release(true);
    throw error;
  }
  let released = false;
  return {
    intentIds,
    async release() {
      if (released) return;
      released = true;
      let broken = false;
      for (const intentId of intentIds) {
        await client
          .query('SELECT pg_advisory_unlock($1, hashtext($2))', [
            CONSUMER_JOB_LOCK_NAMESPACE,
            intentId,
          ])
          .catch(() => {
            broken = true;
          });
      }
      client.release(broken);
    },
  };
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
