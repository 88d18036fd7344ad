// create_spend_intent: validate the intent (INTENT_MALFORMED), bind it to the policy's current
// version and store it, idempotent per intentHash (the first binding stays). A preflight of a
// given intent binds it the same way, inside its own batch (intent.preflight_records).
import { AppError } from '../../../core/errors';
import { spendIntentToWire, type SpendIntent } from '../../../core/validation/intent';
import type { Db } from '../../../platform/db';
import type { SubgraphContext } from '../../kit';
import { requirePolicyId, validIntent } from './input';
import { currentPolicy } from './policy';
import type { Json } from '../views';
import { readStoredIntent, type StoredIntent } from '../intents/reads';

async function storeIntent(
  db: Db,
  intent: SpendIntent,
  policyId: string,
  policyVersion: number,
  now: Date,
): Promise<StoredIntent> {
  await db.query(
    `INSERT INTO intent.spend_intents (intent_hash, policy_id, policy_version, agent_id, amount, canonical, created_at)
     VALUES ($1, $2::numeric, $3, $4, $5::numeric, $6, $7)
     ON CONFLICT (intent_hash) DO NOTHING`,
    [
      intent.intentHash,
      policyId,
      policyVersion,
      intent.agentId,
      intent.amountAtomic.toString(),
      JSON.stringify(spendIntentToWire(intent)),
      now,
    ],
  );
  const stored = await readStoredIntent(db, intent.intentHash);
  return stored!;
}

export async function createSpendIntent(
  ctx: SubgraphContext,
  policyIdRaw: unknown,
  raw: unknown,
): Promise<Json> {
  const now = ctx.now();
  const intent = validIntent(raw, now);
  const policyId = requirePolicyId(policyIdRaw);
  const policy = await currentPolicy(ctx.db, policyId);
  if (policy === null) throw new AppError('POLICY_NOT_FOUND', undefined, { policyId });
  const stored = await storeIntent(ctx.db, intent, policy.policyId, policy.version, now);
  return {
    intentHash: stored.intent_hash,
    canonicalIntent: stored.canonical,
    policyId: stored.policy_id,
    policyVersion: stored.policy_version,
    onchain: null,
  };
}
