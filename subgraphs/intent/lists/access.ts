// Who may read a policy's lists (its intents, decisions, pending anchors): an admin every policy,
// an owner only the policies they own (asked of the policy subgraph through its published
// `policy.policy_owner`, since this subgraph never joins another's tables); anyone else is refused.
import { AppError } from '../../../core/errors';
import type { Db } from '../../../platform/db';
import { requireActor, type SubgraphContext } from '../../kit';
import { POLICY_ID_PATTERN } from '../../../core/canon/id-shapes';

/** The policy's owner address, lower-cased; null when there is no such policy. */
export async function policyOwner(db: Db, policyId: string): Promise<string | null> {
  const result = await db.query<{ owner: string | null }>(
    'SELECT policy.policy_owner($1) AS owner',
    [policyId],
  );
  return result.rows[0]?.owner?.toLowerCase() ?? null;
}

/** Admin: every policy; owner: their own; anyone else is refused. */
export async function requirePolicyReader(ctx: SubgraphContext, policyId: string): Promise<void> {
  const actor = requireActor(ctx, ['admin', 'owner']);
  if (actor.kind === 'admin') return;
  const owner = POLICY_ID_PATTERN.test(policyId) ? await policyOwner(ctx.db, policyId) : null;
  if (owner !== actor.address.toLowerCase())
    throw new AppError('FORBIDDEN', 'Only the policy’s owner sees its intents and decisions.');
}
