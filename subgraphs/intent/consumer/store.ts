// Consumer intents in the database (migration 0014): the row as code reads it, and the one way a
// state changes: a compare-and-set UPDATE from the state the caller saw to a state the lifecycle
// table lists, bumping state_version. The table is checked here (assertTransition, 409
// ILLEGAL_STATE_TRANSITION) and again by the database's trigger (IN004), which also writes the
// outbox row `consumer_intent.state_changed` and NOTIFYs `consumer_intent` in the same
// transaction. Losing the compare-and-set (another writer moved it first) returns null: the
// caller re-reads and decides again; nothing is overwritten. Every successful change also
// rewrites the intent's public receipt (receipts/store.ts refreshReceipt) in the same transaction:
// the caller's, or one opened here when the caller handed over the pool. A move into an outcome the
// owner is told about (COMPLETED, MANUAL_REVIEW, REFUNDED) also queues the owner's notice through
// the policy's function (notices/outcome.ts), in that same transaction.
import {
  assertTransition,
  type ConsumerIntentState,
  isConsumerIntentState,
} from '../../../core/consumer/lifecycle';
import { type Db, type DbPool, withTransaction } from '../../../platform/db';
import { appErrorFromSql } from '../../kit';
import { INTENT_SQLSTATES } from '../sql';
import { isOwnerOutcome, queueOutcomeNotice } from './notices/outcome';
import { mayTouchReceipt, refreshReceipt } from './receipts/store';

/** The jsonb and scalar columns a state change may set along with the state. */
export interface ConsumerIntentChanges {
  readonly quote?: Record<string, unknown> | null;
  readonly quoteExpiresAt?: Date | null;
  readonly fundingAmount?: bigint | null;
  readonly spendIntent?: Record<string, unknown> | null;
  readonly intentHash?: string | null;
  readonly decision?: Record<string, unknown> | null;
  readonly pollRef?: string | null;
  readonly reservationId?: string | null;
  readonly funding?: Record<string, unknown> | null;
  readonly settlement?: Record<string, unknown> | null;
  readonly providerAttested?: Record<string, unknown> | null;
  readonly refund?: Record<string, unknown> | null;
  readonly resolution?: Record<string, unknown> | null;
  /** The service's own delivery finding (ServiceVerified), never merged with providerAttested. */
  readonly serviceVerified?: Record<string, unknown> | null;
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

export interface ConsumerIntentRow {
  readonly intentId: string;
  readonly policyId: string;
  readonly wallet: string;
  readonly capability: string;
  readonly provider: string;
  readonly category: string;
  readonly params: Record<string, unknown>;
  readonly idempotencyKey: string | null;
  readonly state: ConsumerIntentState;
  readonly stateVersion: number;
  readonly stateReason: string | null;
  readonly quote: Record<string, unknown> | null;
  readonly quoteExpiresAt: Date | null;
  readonly fundingAmount: bigint | null;
  readonly spendIntent: Record<string, unknown> | null;
  readonly intentHash: string | null;
  readonly decision: Record<string, unknown> | null;
  readonly pollRef: string | null;
  readonly reservationId: string | null;
  readonly funding: Record<string, unknown> | null;
  readonly settlement: Record<string, unknown> | null;
  readonly providerAttested: Record<string, unknown> | null;
  readonly refund: Record<string, unknown> | null;
  readonly resolution: Record<string, unknown> | null;
  readonly serviceVerified: Record<string, unknown> | null;
  /** Delivery checks that found no usable answer so far (the job's bounded retries). */
  readonly deliveryAttempts: number;
  readonly deliveryNextAttemptAt: Date | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** Select list giving the row in the shape fromRow reads (numerics as text). */
export const CONSUMER_INTENT_COLUMNS = `intent_id, policy_id::text AS policy_id, wallet, capability,
  provider, category, params, idempotency_key, state, state_version, state_reason, quote,
  quote_expires_at, funding_amount::text AS funding_amount, spend_intent, intent_hash, decision,
  poll_ref, reservation_id, funding, settlement, provider_attested, refund, resolution,
  service_verified, delivery_attempts, delivery_next_attempt_at, created_at, updated_at`;

type Json = Record<string, unknown>;

export interface ConsumerIntentDbRow {
  intent_id: string;
  policy_id: string;
  wallet: string;
  capability: string;
  provider: string;
  category: string;
  params: Json;
  idempotency_key: string | null;
  state: string;
  state_version: number;
  state_reason: string | null;
  quote: Json | null;
  quote_expires_at: Date | null;
  funding_amount: string | null;
  spend_intent: Json | null;
  intent_hash: string | null;
  decision: Json | null;
  poll_ref: string | null;
  reservation_id: string | null;
  funding: Json | null;
  settlement: Json | null;
  provider_attested: Json | null;
  refund: Json | null;
  resolution: Json | null;
  service_verified: Json | null;
  delivery_attempts: number;
  delivery_next_attempt_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export function fromRow(row: ConsumerIntentDbRow): ConsumerIntentRow {
  if (!isConsumerIntentState(row.state))
    throw new Error(`consumer intent ${row.intent_id} has an unknown state ${row.state}`);
  return {
    intentId: row.intent_id,
    policyId: row.policy_id,
    wallet: row.wallet,
    capability: row.capability,
    provider: row.provider,
    category: row.category,
    params: row.params,
    idempotencyKey: row.idempotency_key,
    state: row.state,
    stateVersion: row.state_version,
    stateReason: row.state_reason,
    quote: row.quote,
    quoteExpiresAt: row.quote_expires_at,
    fundingAmount: row.funding_amount === null ? null : BigInt(row.funding_amount),
    spendIntent: row.spend_intent,
    intentHash: row.intent_hash,
    decision: row.decision,
    pollRef: row.poll_ref,
    reservationId: row.reservation_id,
    funding: row.funding,
    settlement: row.settlement,
    providerAttested: row.provider_attested,
    refund: row.refund,
    resolution: row.resolution,
    serviceVerified: row.service_verified,
    deliveryAttempts: row.delivery_attempts,
    deliveryNextAttemptAt: row.delivery_next_attempt_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** IN004 / IN005 raised by the triggers, as the AppError clients see; anything else unchanged. */
export function consumerErrorFrom(error: unknown): unknown {
  return appErrorFromSql(error, INTENT_SQLSTATES) ?? error;
}

export interface NewConsumerIntent {
  readonly intentId: string;
  readonly policyId: string;
  readonly wallet: string;
  readonly capability: string;
  readonly provider: string;
  readonly category: string;
  readonly params: Json;
  readonly idempotencyKey: string | null;
  readonly now: Date;
}

/**
 * Inserts a CREATED intent (the trigger writes its first outbox row). With an idempotency key
 * already used on this policy, nothing is inserted and the existing intent is returned with
 * `created: false`.
 */
export async function insertConsumerIntent(
  db: Db,
  intent: NewConsumerIntent,
): Promise<{ row: ConsumerIntentRow; created: boolean }> {
  try {
    const inserted = await db.query<ConsumerIntentDbRow>(
      `INSERT INTO intent.consumer_intents
         (intent_id, policy_id, wallet, capability, provider, category, params, idempotency_key,
          created_at, updated_at)
       VALUES ($1, $2, lower($3), $4, $5, $6, $7, $8, $9, $9)
       ON CONFLICT (policy_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
       RETURNING ${CONSUMER_INTENT_COLUMNS}`,
      [
        intent.intentId,
        intent.policyId,
        intent.wallet,
        intent.capability,
        intent.provider,
        intent.category,
        intent.params,
        intent.idempotencyKey,
        intent.now,
      ],
    );
    if (inserted.rows[0]) return { row: fromRow(inserted.rows[0]), created: true };
  } catch (error) {
    throw consumerErrorFrom(error);
  }
  const existing = await db.query<ConsumerIntentDbRow>(
    `SELECT ${CONSUMER_INTENT_COLUMNS} FROM intent.consumer_intents
      WHERE policy_id = $1 AND idempotency_key = $2`,
    [intent.policyId, intent.idempotencyKey],
  );
  if (!existing.rows[0]) throw new Error('idempotency conflict without an existing intent');
  return { row: fromRow(existing.rows[0]), created: false };
}

/** One intent by id; `forUpdate` locks the row for the caller's transaction. */
export async function getConsumerIntent(
  db: Db,
  intentId: string,
  options: { forUpdate?: boolean } = {},
): Promise<ConsumerIntentRow | null> {
  const result = await db.query<ConsumerIntentDbRow>(
    `SELECT ${CONSUMER_INTENT_COLUMNS} FROM intent.consumer_intents WHERE intent_id = $1
     ${options.forUpdate ? 'FOR UPDATE' : ''}`,
    [intentId],
  );
  return result.rows[0] ? fromRow(result.rows[0]) : null;
}

/**
 * Moves an intent from `from` to `to` (compare-and-set on the state), setting `changes` and the
 * reason with it; null when the intent was no longer in `from`. A move the lifecycle does not
 * list throws 409 ILLEGAL_STATE_TRANSITION before any SQL runs.
 */
export async function transitionConsumerIntent(
  db: Db,
  intentId: string,
  from: ConsumerIntentState,
  to: ConsumerIntentState,
  options: { now: Date; reason?: string | null; changes?: ConsumerIntentChanges },
): Promise<ConsumerIntentRow | null> {
  assertTransition(from, to);
  return updateWhereState(
    db,
    [intentId, from, to, options.now, options.reason ?? null],
    ['state = $3', 'state_version = state_version + 1', 'updated_at = $4', 'state_reason = $5'],
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
