// Balance checkpoints (ledger migration 0011, docs/ledger.md "Balance checkpoints"): every balance
// the ledger reads is a checkpoint plus the entries after it, so its cost follows the entries since
// the last checkpoint, not the ledger's whole history. The worker advances the checkpoint in two
// statements of their own: the horizon is marked under a short SHARE lock on ledger.entries (no
// transaction inserting entries may still be open below it), then the entries up to it are added
// with no lock held. Each statement runs alone on the pool, so the lock lasts one statement.
import type { Db } from '../../../platform/db';

/** When the worker advances the checkpoint: enough new entries, or enough time with some. */
export interface CheckpointPolicy {
  /** New entries that make a checkpoint due at once (default 10,000). */
  readonly minEntries: number;
  /** Age after which any new entry makes one due (default 10 minutes). */
  readonly maxAgeMs: number;
  /** How long the horizon's lock is waited for; the next round tries again (default 50 ms). */
  readonly lockTimeoutMs: number;
}

export const DEFAULT_CHECKPOINT_POLICY: CheckpointPolicy = {
  minEntries: 10_000,
  maxAgeMs: 10 * 60_000,
  lockTimeoutMs: 50,
};

export interface CheckpointState {
  /** Every entry with seq <= throughSeq is in the checkpoint. */
  readonly throughSeq: bigint;
  readonly takenAt: Date;
  /** The highest entry seq drawn so far (some may belong to transactions still open, or rolled back). */
  readonly lastSeq: bigint;
}

export type CheckpointOutcome =
  | { readonly kind: 'NOT_DUE'; readonly state: CheckpointState }
  /** The horizon's lock was not granted in time (long transactions inserting entries); try again. */
  | { readonly kind: 'BUSY'; readonly state: CheckpointState }
  | { readonly kind: 'ADVANCED'; readonly from: bigint; readonly throughSeq: bigint };

export async function checkpointState(db: Db): Promise<CheckpointState> {
  const { rows } = await db.query<{ through_seq: string; taken_at: Date; last_seq: string }>(
    `SELECT k.through_seq::text AS through_seq, k.taken_at,
            (SELECT CASE WHEN s.is_called THEN s.last_value ELSE 0 END FROM ledger.entries_seq_seq s)::text AS last_seq
       FROM ledger.balance_checkpoint k`,
  );
  const row = rows[0]!;
  return {
    throughSeq: BigInt(row.through_seq),
    takenAt: row.taken_at,
    lastSeq: BigInt(row.last_seq),
  };
}

/** Whether a checkpoint is due under the policy, at `now`. */
export function checkpointDue(
  state: CheckpointState,
  policy: CheckpointPolicy,
  now: Date,
): boolean {
  const behind = state.lastSeq - state.throughSeq;
  if (behind <= 0n) return false;
  return (
    behind >= BigInt(policy.minEntries) ||
    now.getTime() - state.takenAt.getTime() >= policy.maxAgeMs
  );
}

/** Twice the policy's age without a checkpoint: worth an operator's look (the worker warns). */
export function checkpointOverdue(
  state: CheckpointState,
  now: Date,
  policy: CheckpointPolicy = DEFAULT_CHECKPOINT_POLICY,
): boolean {
  return now.getTime() - state.takenAt.getTime() >= 2 * policy.maxAgeMs;
}

/**
 * Marks the horizon and adds the entries up to it to the checkpoint. `db` must be the pool (or a
 * connection outside any transaction): the mark's lock lasts until its transaction ends. `before`:
 * the checkpoint as the caller just read it (read here when not given).
 */
export async function advanceCheckpoint(
  db: Db,
  lockTimeoutMs: number = DEFAULT_CHECKPOINT_POLICY.lockTimeoutMs,
  before?: CheckpointState,
): Promise<{ readonly marked: boolean; readonly from: bigint; readonly throughSeq: bigint }> {
  const from = (before ?? (await checkpointState(db))).throughSeq;
  const marked = await db.query<{ seq: string | null }>(
    'SELECT ledger.mark_checkpoint_horizon($1)::text AS seq',
    [lockTimeoutMs],
  );
  if (marked.rows[0]?.seq === null || marked.rows[0]?.seq === undefined)
    return { marked: false, from, throughSeq: from };
  const advanced = await db.query<{ through_seq: string }>(
    'SELECT ledger.advance_balance_checkpoint()::text AS through_seq',
  );
  return {
    marked: true,
    from,
    throughSeq: BigInt(advanced.rows[0]!.through_seq),
  };
}

/** The worker's step: advances the checkpoint when it is due. */
export async function checkpointBalances(
  db: Db,
  now: Date,
  policy: CheckpointPolicy = DEFAULT_CHECKPOINT_POLICY,
): Promise<CheckpointOutcome> {
  const state = await checkpointState(db);
  if (!checkpointDue(state, policy, now)) return { kind: 'NOT_DUE', state };
  const advanced = await advanceCheckpoint(db, policy.lockTimeoutMs, state);
  if (!advanced.marked) return { kind: 'BUSY', state };
  return { kind: 'ADVANCED', from: advanced.from, throughSeq: advanced.throughSeq };
}
