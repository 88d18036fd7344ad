// SQL access to `intent.spend_intents`. Amounts and policy ids are read as decimal text, never as
// JS numbers, so a uint256 survives exactly.
import type { Pool } from 'pg';

export interface SpendIntentRow {
  readonly intentHash: string;
  readonly policyId: string;
  readonly agentId: string;
  readonly amountAtomic: string;
  readonly createdAt: Date;
}

export const INTENT_HASH = /^0x[0-9a-f]{64}$/;

export async function readSpendIntent(
  db: Pool,
  intentHash: string,
): Promise<SpendIntentRow | null> {
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
