// Reads of one `intent.spend_intents` row by its hash: as the entity, or as stored for a preflight
// by hash. Light on purpose: the decision thread loads it (no GraphQL classes). Amounts and policy
// ids are read as decimal text, never as JS numbers, so a uint256 survives exactly.
import type { Db } from '../../../platform/db';
import type { Json } from '../views';

export interface SpendIntentRow {
  readonly intentHash: string;
  readonly policyId: string;
  readonly agentId: string;
  readonly amountAtomic: string;
  readonly createdAt: Date;
}

export const INTENT_HASH = /^0x[0-9a-f]{64}$/;

export async function readSpendIntent(db: Db, intentHash: string): Promise<SpendIntentRow | null> {
  const result = await db.query<{
    intent_hash: string;
    policy_id: string;
    agent_id: string;
    amount: string;
    created_at: Date;
  }>(
    `SELECT intent_hash, policy_id::text AS policy_id, agent_id, amount::text AS amount, created_at
       FROM intent.spend_intents
      WHERE intent_hash = $1`,
    [intentHash],
  );
  const row = result.rows[0];
  if (row === undefined) return null;
  return {
    intentHash: row.intent_hash,
    policyId: row.policy_id,
    agentId: row.agent_id,
    amountAtomic: row.amount,
    createdAt: row.created_at,
  };
}

/** An intent as stored: its canonical wire form and the instant it was stored at. */
export interface StoredIntent {
  intent_hash: string;
  policy_id: string;
  policy_version: number;
  canonical: Json;
  created_at: Date;
}

export async function readStoredIntent(db: Db, intentHash: string): Promise<StoredIntent | null> {
  const result = await db.query<StoredIntent>(
    `SELECT intent_hash, policy_id::text AS policy_id, policy_version, canonical, created_at FROM intent.spend_intents WHERE intent_hash = $1`,
    [intentHash],
  );
  return result.rows[0] ?? null;
}
