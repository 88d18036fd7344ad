// Who may read a spend intent. For now only an admin: letting the policy's owner read it needs the
// owner of intent.policy_id, which lives in the policy subgraph, and this subgraph never joins
// another's tables. Anyone else gets null, exactly as for a missing intent.
import type { SubgraphContext } from '../../kit';
import { INTENT_HASH, readSpendIntent, type SpendIntentRow } from './reads';

export async function readableSpendIntent(
  ctx: SubgraphContext,
  intentHash: string,
): Promise<SpendIntentRow | null> {
  if (ctx.actor.kind !== 'admin') return null;
  const normalised = intentHash.toLowerCase();
  if (!INTENT_HASH.test(normalised)) return null;
  return readSpendIntent(ctx.db, normalised);
}
