// The one way a consumer intent changes (issue #30: apart from store.ts, which keeps row I/O): a
// compare-and-set UPDATE from the state the caller saw to a state the lifecycle table lists,
// bumping state_version, with the reason's code and text (core/consumer/reasons.ts) and the legs it
// sets. The table is checked here (assertTransition, 409 ILLEGAL_STATE_TRANSITION) and again by the
// database's trigger (IN004), which also writes the outbox row `consumer_intent.state_changed` and
// NOTIFYs `consumer_intent` in the same transaction. Losing the compare-and-set (another writer
// moved it first) returns null: the caller re-reads and decides again; nothing is overwritten.
// Every successful change also rewrites the intent's public receipt (receipts/store.ts
// refreshReceipt) in the same transaction: the caller's, or one opened here when the caller handed
// over the pool. A move into an outcome the owner is told about (COMPLETED, MANUAL_REVIEW,
// REFUNDED) also queues the owner's notice (notices/outcome.ts), in that same transaction.
// workflow.ts lists which step takes which move.
import { assertTransition, type ConsumerIntentState } from '../../../core/consumer/lifecycle';
import { type StateReason, textReason } from '../../../core/consumer/reasons';
import { type Db, type DbPool, withTransaction } from '../../../platform/db';
import type {
  FundingLeg,
  ProviderAttestedLeg,
  QuoteLeg,
  ServiceVerifiedLeg,
  SettlementLeg,
} from './legs';
import { isOwnerOutcome, queueOutcomeNotice } from './notices/outcome';
import { mayTouchReceipt, refreshReceipt } from './receipts/store';
import {
  CONSUMER_INTENT_COLUMNS,
  type ConsumerIntentDbRow,
  type ConsumerIntentRow,
  consumerErrorFrom,
  fromRow,
} from './store';

/** The jsonb and scalar columns a state change may set along with the state. */
export interface ConsumerIntentChanges {
  readonly quote?: QuoteLeg | null;
  readonly quoteExpiresAt?: Date | null;
  readonly fundingAmount?: bigint | null;
  readonly spendIntent?: Record<string, unknown> | null;
  readonly intentHash?: string | null;
  readonly decision?: Record<string, unknown> | null;
  readonly pollRef?: string | null;
  readonly reservationId?: string | null;
  readonly funding?: FundingLeg | null;
  readonly settlement?: SettlementLeg | null;
  readonly providerAttested?: ProviderAttestedLeg | null;
  readonly refund?: Record<string, unknown> | null;
  readonly resolution?: Record<string, unknown> | null;
  /** The service's own delivery finding (ServiceVerified), never merged with providerAttested. */
  readonly serviceVerified?: ServiceVerifiedLeg | null;
  readonly deliveryAttempts?: number;
  readonly deliveryNextAttemptAt?: Date | null;
}

/** Change key → column (pg sends objects as JSON, bigints are sent as decimal text). */
const CHANGE_COLUMNS: Readonly<Record<keyof ConsumerIntentChanges, string>> = {
  quote: 'quote',
  quoteExpiresAt: 'quote_expires_at',
  fundingAmount: 'funding_amount',
  spendIntent: 'spend_intent',
  intentHash: 'intent_hash',
  decision: 'decision',
  pollRef: 'poll_ref',
  reservationId: 'reservation_id',
  funding: 'funding',
  settlement: 'settlement',
  providerAttested: 'provider_attested',
  refund: 'refund',
  resolution: 'resolution',
  serviceVerified: 'service_verified',
  deliveryAttempts: 'delivery_attempts',
  deliveryNextAttemptAt: 'delivery_next_attempt_at',
};

/**
 * Moves an intent from `from` to `to` (compare-and-set on the state), setting `changes` and the
 * reason with it (a plain string is free text with no code); null when the intent was no longer in `from`. A move the lifecycle does not
 * list throws 409 ILLEGAL_STATE_TRANSITION before any SQL runs.
 */
export async function transitionConsumerIntent(
  db: Db,
  intentId: string,
  from: ConsumerIntentState,
  to: ConsumerIntentState,
  options: { now: Date; reason?: StateReason | string | null; changes?: ConsumerIntentChanges },
): Promise<ConsumerIntentRow | null> {
  assertTransition(from, to);
  const reason = typeof options.reason === 'string' ? textReason(options.reason) : options.reason;
  return updateWhereState(
    db,
    [intentId, from, to, options.now, reason?.text ?? null, reason?.code ?? null],
    [
      'state = $3',
      'state_version = state_version + 1',
      'updated_at = $4',
      'state_reason = $5',
      'state_reason_code = $6',
    ],
    options.changes ?? {},
    isOwnerOutcome(to),
  );
}

/** Sets progress columns without a state change (no outbox row): e.g. the settlement's tx hash. */
export async function updateConsumerIntent(
  db: Db,
  intentId: string,
  expectedState: ConsumerIntentState,
  changes: ConsumerIntentChanges,
  now: Date,
): Promise<ConsumerIntentRow | null> {
  return updateWhereState(db, [intentId, expectedState, now], ['updated_at = $3'], changes, false);
}

/** The pool (not one connection): a change that may write a receipt opens its own transaction. */
function isPool(db: Db): db is DbPool {
  const candidate = db as Partial<DbPool>;
  return typeof candidate.connect === 'function' && typeof candidate.totalCount === 'number';
}

/**
 * `UPDATE … SET <sets>, <changes> WHERE intent_id = $1 AND state = $2 RETURNING …`: the one
 * compare-and-set statement both writers use; `params` holds $1, $2 and what `sets` names. A
 * change that went through rewrites the receipt on the same connection, in one transaction, and
 * a move into an owner outcome (`notifies`) queues the owner's notice there too.
 */
async function updateWhereState(
  db: Db,
  params: unknown[],
  sets: string[],
  changes: ConsumerIntentChanges,
  notifies: boolean,
): Promise<ConsumerIntentRow | null> {
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined) continue;
    const spec = CHANGE_COLUMNS[key as keyof ConsumerIntentChanges] as string | undefined;
    if (spec === undefined) throw new Error(`not a consumer intent change: ${key}`);
    params.push(typeof value === 'bigint' ? value.toString() : value);
    sets.push(`${spec} = $${params.length}`);
  }
  const sql = `UPDATE intent.consumer_intents SET ${sets.join(', ')}
        WHERE intent_id = $1 AND state = $2
        RETURNING ${CONSUMER_INTENT_COLUMNS}`;
  const change = async (handle: Db): Promise<ConsumerIntentRow | null> => {
    const result = await handle.query<ConsumerIntentDbRow>(sql, params);
    const row = result.rows[0] ? fromRow(result.rows[0]) : null;
    if (row !== null) await refreshReceipt(handle, row);
    if (row !== null && notifies) await queueOutcomeNotice(handle, row);
    return row;
  };
  try {
    const expected = params[1] as ConsumerIntentState;
    if (isPool(db) && (notifies || mayTouchReceipt(expected, changes.funding)))
      return await withTransaction(db, change);
    return await change(db);
  } catch (error) {
    throw consumerErrorFrom(error);
  }
}
