// Consumer intents in the database (migration 0014): the row as code reads it, its column list
// written once (CONSUMER_INTENT_COLUMNS, fromRow), the insert and the read. Row I/O only: every
// change of a stored intent goes through transition.ts (the compare-and-set, the receipt refresh
// and the owner notice).
import { type ConsumerIntentState, isConsumerIntentState } from '../../../core/consumer/lifecycle';
import type { Db } from '../../../platform/db';
import { appErrorFromSql } from '../../kit';
import { INTENT_SQLSTATES } from '../sql';
import {
  type FundingLeg,
  legsOf,
  type ProviderAttestedLeg,
  type QuoteLeg,
  type ServiceVerifiedLeg,
  type SettlementLeg,
} from './legs';

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
  /** The text a person reads (`CODE: detail`); the code beside it is stateReasonCode. */
  readonly stateReason: string | null;
  /** The reason's machine code (core/consumer/reasons.ts); null for free text or no reason. */
  readonly stateReasonCode: string | null;
  /** The legs are typed and checked once, when the row is read (legs.ts). */
  readonly quote: QuoteLeg | null;
  readonly quoteExpiresAt: Date | null;
  readonly fundingAmount: bigint | null;
  readonly spendIntent: Record<string, unknown> | null;
  readonly intentHash: string | null;
  readonly decision: Record<string, unknown> | null;
  readonly pollRef: string | null;
  readonly reservationId: string | null;
  readonly funding: FundingLeg | null;
  readonly settlement: SettlementLeg | null;
  readonly providerAttested: ProviderAttestedLeg | null;
  readonly refund: Record<string, unknown> | null;
  readonly resolution: Record<string, unknown> | null;
  readonly serviceVerified: ServiceVerifiedLeg | null;
  /** Delivery checks that found no usable answer so far (the job's bounded retries). */
  readonly deliveryAttempts: number;
  readonly deliveryNextAttemptAt: Date | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** Select list giving the row in the shape fromRow reads (numerics as text): the one column list. */
export const CONSUMER_INTENT_COLUMNS = `intent_id, policy_id::text AS policy_id, wallet, capability,
  provider, category, params, idempotency_key, state, state_version, state_reason,
  state_reason_code, quote,
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
  state_reason_code: string | null;
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
  const legs = legsOf(row.intent_id, {
    quote: row.quote,
    funding: row.funding,
    settlement: row.settlement,
    providerAttested: row.provider_attested,
    serviceVerified: row.service_verified,
  });
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
    stateReasonCode: row.state_reason_code,
    quote: legs.quote,
    quoteExpiresAt: row.quote_expires_at,
    fundingAmount: row.funding_amount === null ? null : BigInt(row.funding_amount),
    spendIntent: row.spend_intent,
    intentHash: row.intent_hash,
    decision: row.decision,
    pollRef: row.poll_ref,
    reservationId: row.reservation_id,
    funding: legs.funding,
    settlement: legs.settlement,
    providerAttested: legs.providerAttested,
    refund: row.refund,
    resolution: row.resolution,
    serviceVerified: legs.serviceVerified,
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
