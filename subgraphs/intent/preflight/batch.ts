// Preflights decided in batches (group commit, batchQueue.ts): a batch runs in rounds inside one
// transaction (each policy's first preflight, then its second, …), each round one call of
// `intent.preflight_windows` (the locks and every window) and one of `intent.preflight_records`
// (every decision), with BEGIN and the durable COMMIT paid once per batch (migrations 0003, 0004,
// 0011). A decision's time is its clock read once the policy's lock is held (decide.ts decides it);
// a repeat of an intent whose approval still holds its reservation is answered with that decision
// and writes nothing.
import type { QueryResult } from 'pg';
import { newReceiptId, newReservationId } from '../../../core/canon/ids';
import { AppError } from '../../../core/errors';
import type { DbPool } from '../../../platform/db';
import { escalationToOpen } from '../decisions/escalation';
import { APPROVAL_LOST_SQLSTATE } from '../sql';
import type { Json } from '../views';
import {
  BatchNotCommitted,
  type BatchQueueOptions,
  type BatchSignals,
  KeyedBatchQueue,
  type Settled,
} from './batchQueue';
import {
  type DecidedPreflight,
  type DecisionDraws,
  decidePreflight,
  type PreflightToDecide,
  type PreflightWindowRow,
  readingOf,
  replayAnswer,
} from './decide';
import { policyOf } from './policy';
import { type HeldRules, knownRules } from './rulesCache';
import { windowItem } from './window';

/** One preflight waiting for its batch: validated, its policyId in its one spelling. */
export interface PreflightRequest extends PreflightToDecide {
  /** The queue's key: a policy is in one batch at a time, and its preflights run in arrival order. */
  readonly policyId: string;
  /** The caller's clock, read for the decision once the policy's lock is held: its evaluatedAt. */
  readonly clock: () => Date;
}

/** Fresh ids, and a fresh single-use reply code for an escalation (decisions/escalation.ts). */
const FRESH_DRAWS: DecisionDraws = {
  // Called through the module at each draw, never held: tests replace an id generator in place.
  receiptId: () => newReceiptId(),
  reservationId: () => newReservationId(),
  escalation: (policy, decision, sealingKey) => escalationToOpen({ policy, decision, sealingKey }),
};

/**
 * An error PostgreSQL answered while the session lives on (severity ERROR): the transaction is
 * aborted or, for COMMIT, rolled back, so nothing of it committed. A lost connection, or a FATAL
 * or PANIC that ends the session, leaves a COMMIT's outcome unknown.
 */
function abortedByServer(error: unknown): boolean {
  const { code, severity } = (error ?? {}) as { code?: unknown; severity?: unknown };
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && severity === 'ERROR';
}

type WindowRow = PreflightWindowRow & { item: number };
type RecordRow = {
  item: number;
  escalation_poll_ref: string | null;
  escalation_expires_at: Date | null;
};

/** A batch's requests in rounds: round r holds the (r+1)-th request of each policy, by index. */
function roundsOf(requests: readonly PreflightRequest[]): number[][] {
  const seen = new Map<string, number>();
  const rounds: number[][] = [];
  requests.forEach((request, index) => {
    const round = seen.get(request.policyId) ?? 0;
    seen.set(request.policyId, round + 1);
    (rounds[round] ??= []).push(index);
  });
  return rounds;
}

function notCommitted(cause: unknown): BatchNotCommitted {
  const code = (cause as { code?: unknown } | null)?.code;
  return new BatchNotCommitted(
    code === APPROVAL_LOST_SQLSTATE
      ? new AppError('INTERNAL_ERROR', 'An owner approval was used concurrently.')
      : cause,
  );
}

/**
 * A dollar-quoted literal of `text`: taken verbatim by PostgreSQL (no escapes to write or undo),
 * with a tag the text does not contain. pg's escapeLiteral walks the string in JavaScript, ~10 µs
 * per KiB on the event loop.
 */
export function dollarQuoted(text: string): string {
  let tag = '$json$';
  for (let attempt = 1; text.includes(tag); attempt += 1) tag = `$json${attempt}$`;
  return `${tag}${text}${tag}`;
}

/** A statement with its one JSON argument inlined as a literal (for a multi-statement simple query). */
const withJsonArgument = (
  fn: 'preflight_windows' | 'preflight_records',
  argument: Json[],
): string => `SELECT * FROM intent.${fn}(${dollarQuoted(JSON.stringify(argument))}::jsonb)`;

/** Runs statements as one simple query on the batch's connection; each statement's result, in order. */
type Runner = (statements: readonly string[]) => Promise<QueryResult[]>;

/** A round's windows and, for each (by `item`), the instant its decision is made at. */
interface RoundReading {
  readonly rows: WindowRow[];
  readonly nows: Date[];
}

/**
 * The first round's windows were read in the round trip that took the locks, at readings taken
 * just before (`readAt`). Once the locks are held each request's clock is read again: that is its
 * decision time. A window that could differ at that instant (outside [readAt, valid_until)) is read
 * again at it, under the locks already held (one more round trip, rare: a whole second or a
 * counted call's hour ended in between). Later rounds read their clocks under the locks already.
 */
async function decisionTimes(
  run: Runner,
  round: readonly PreflightRequest[],
  known: Array<HeldRules | undefined>,
  rows: WindowRow[],
  readAt: Date[],
): Promise<RoundReading> {
  const nows = round.map((request) => request.clock());
  const stale = rows.filter((row) => {
    const now = nows[row.item]!.getTime();
    return now < readAt[row.item]!.getTime() || now >= row.valid_until.getTime();
  });
  if (stale.length === 0) return { rows, nows };
  const items = stale.map((row) =>
    windowItem(
      round[row.item]!.policyId,
      round[row.item]!.intent,
      nows[row.item]!,
      known[row.item],
    ),
  );
  const results = await run([withJsonArgument('preflight_windows', items)]);
  const fresh = new Map(
    (results[0]!.rows as WindowRow[]).map((row) => [
      stale[row.item]!.item,
      { ...row, item: stale[row.item]!.item },
    ]),
  );
  return { rows: rows.map((row) => fresh.get(row.item) ?? row), nows };
}

type Recording = {
  decided: Array<{ index: number; decision: DecidedPreflight }>;
  rows: RecordRow[];
};

/**
 * One batch of preflights in one transaction on one connection. Round by round (the first
 * preflight of each policy, then the second, …, so a policy's later preflight reads the window its
 * earlier one wrote, in the same transaction): read the round's windows
 * (intent.preflight_windows, which takes the policies' locks in key order; a lock already held is
 * held again), run the engine at each request's clock read under the lock, write the round's
 * decisions (intent.preflight_records). Statements travel together as one simple query, one round
 * trip each: `BEGIN; windows(1)`, then `records(r); windows(r+1)`, then `records(last); COMMIT`.
 * PostgreSQL runs a simple query's statements in order and skips the rest after a failure, so a
 * refused write never reaches the COMMIT behind it. A request the engine step refuses is left out
 * of the write; a repeat answered from its earlier approval writes nothing. Anything that fails
 * before the last round trip, or an ERROR in it, leaves nothing committed (BatchNotCommitted: the
 * queue runs each request again alone); a failure with an unknown outcome (the connection lost, a
 * FATAL) is every request's answer.
 */
async function runPreflightBatch(
  pool: DbPool,
  requests: readonly PreflightRequest[],
  signals: BatchSignals,
): Promise<Array<Settled<Json>>> {
  const settled: Array<Settled<Json>> = new Array(requests.length);
  const client = await pool.connect();
  let broken = false;
  const run: Runner = async (statements) => {
    const results = (await client.query(statements.join('; '))) as QueryResult | QueryResult[];
    return Array.isArray(results) ? results : [results];
  };
  const rollback = async (): Promise<void> => {
    broken = await client.query('ROLLBACK').then(
      () => false,
      () => true,
    );
  };
  try {
    let recordings: Recording[];
    let last: Recording | null;
    try {
      ({ recordings, last } = await decideRounds(run, requests, settled));
    } catch (error) {
      // Nothing was committed: COMMIT was never sent.
      await rollback();
      throw notCommitted(error);
    }
    if (recordings.length === 0) {
      await rollback();
      return settled;
    }
    try {
      const write =
        last === null
          ? []
          : [
              withJsonArgument(
                'preflight_records',
                last.decided.map((entry) => entry.decision.record),
              ),
            ];
      const committing = run([...write, 'COMMIT']);
      signals.committing(); // the next batch may read its windows while this one commits
      const results = await committing;
      if (last !== null) last.rows = results[0]!.rows as RecordRow[];
    } catch (error) {
      if (!abortedByServer(error)) {
        broken = true;
        throw error; // the connection failed or the session ended: the COMMIT's outcome is unknown
      }
      // The write was refused (PostgreSQL skipped the COMMIT behind it) or the COMMIT rolled back.
      await rollback();
      throw notCommitted(error);
    }
    for (const recording of recordings) {
      for (const row of recording.rows) {
        const entry = recording.decided[row.item]!;
        settled[entry.index] = { ok: true, value: entry.decision.respond(row) };
      }
    }
    return settled;
  } finally {
    client.release(broken);
  }
}

/**
 * Every round but the last one's write: `BEGIN; windows(1)`, then `records(r); windows(r+1)`.
 * Answers repeats and engine refusals into `settled`; returns the rounds' decisions to write and
 * the last round's, still unwritten (it goes with the COMMIT; null when that round wrote nothing).
 */
async function decideRounds(
  run: Runner,
  requests: readonly PreflightRequest[],
  settled: Array<Settled<Json>>,
): Promise<{ recordings: Recording[]; last: Recording | null }> {
  const recordings: Recording[] = [];
  let lead: string[] = ['BEGIN']; // sent ahead of the next read: BEGIN, then the last round's write
  let leadRecording: Recording | null = null;
  for (const [number, round] of roundsOf(requests).entries()) {
    const roundRequests = round.map((index) => requests[index]!);
    const known = roundRequests.map((request) => knownRules(request.policyId));
    // Round 1 takes the locks in this round trip; later rounds hold them, so this reading is the decision's.
    const readAt = roundRequests.map((request) => request.clock());
    const items = roundRequests.map((request, position) =>
      windowItem(request.policyId, request.intent, readAt[position]!, known[position]),
    );
    const results = await run([...lead, withJsonArgument('preflight_windows', items)]);
    if (leadRecording !== null) leadRecording.rows = results[0]!.rows as RecordRow[];
    const rows = results[results.length - 1]!.rows as WindowRow[];
    const reading =
      number === 0
        ? await decisionTimes(run, roundRequests, known, rows, readAt)
        : { rows, nows: readAt };
    const decided: Recording['decided'] = [];
    for (const row of reading.rows) {
      const index = round[row.item]!;
      const request = requests[index]!;
      try {
        if (row.replay !== null)
          settled[index] = { ok: true, value: replayAnswer(request, row.replay) };
        else
          decided.push({
            index,
            decision: decidePreflight(
              request,
              readingOf(row, request.intent, policyOf(row, request.policyId, known[row.item])),
              reading.nows[row.item]!,
              FRESH_DRAWS,
            ),
          });
      } catch (error) {
        settled[index] = { ok: false, error };
      }
    }
    lead = [];
    leadRecording = null;
    if (decided.length > 0) {
      leadRecording = { decided, rows: [] };
      recordings.push(leadRecording);
      lead = [
        withJsonArgument(
          'preflight_records',
          decided.map((entry) => entry.decision.record),
        ),
      ];
    }
  }
  return { recordings, last: leadRecording };
}

/**
 * A batch holds at most 64 preflights and 16 of one policy; a second batch starts once the first is
 * committing or has run 20 ms, never more than two at once (measured on bench:preflight, see
 * docs/engine.md).
 */
export const PREFLIGHT_BATCH_OPTIONS: BatchQueueOptions = Object.freeze({
  maxItems: 64,
  maxInFlight: 2,
  maxPerKey: 16,
  spareAfterMs: 20,
});

const preflightQueues = new WeakMap<DbPool, KeyedBatchQueue<PreflightRequest, Json>>();

/** The preflight queue of a pool (one per pool, so every context of a server shares it). */
export function preflightQueue(pool: DbPool): KeyedBatchQueue<PreflightRequest, Json> {
  let queue = preflightQueues.get(pool);
  if (queue === undefined) {
    queue = new KeyedBatchQueue(
      (requests, signals) => runPreflightBatch(pool, requests, signals),
      PREFLIGHT_BATCH_OPTIONS,
      (request) => request.policyId,
    );
    preflightQueues.set(pool, queue);
  }
  return queue;
}
