// Who sees which money. Admins see everything; an owner sees the groups and entries of the
// policies they own (asked of the policy subgraph through its published policy.policy_owner);
// a consumer session sees its one policy; anonymous callers see nothing (AUTH_REQUIRED).
import { AppError } from '../../../core/errors';
import { requireActor, type SubgraphContext } from '../../kit';
import type { LedgerScope } from './views';

const ALL: LedgerScope = Object.freeze({ all: true });
const scopes = new WeakMap<SubgraphContext, Promise<LedgerScope>>();

/**
 * The distinct policy ids in the ledger, by a loose index scan (one index probe per policy,
 * not per group), kept to those the owner holds. A request asks at most once.
 */
async function ownedPolicies(ctx: SubgraphContext, owner: string): Promise<LedgerScope> {
  const result = await ctx.db.query<{ policy_id: string }>(
    `WITH RECURSIVE seen(policy_id) AS (
       (SELECT policy_id FROM ledger.groups WHERE policy_id IS NOT NULL ORDER BY policy_id LIMIT 1)
       UNION ALL
       SELECT (SELECT g.policy_id FROM ledger.groups g WHERE g.policy_id > seen.policy_id ORDER BY g.policy_id LIMIT 1)
         FROM seen WHERE seen.policy_id IS NOT NULL
     )
     SELECT policy_id FROM seen WHERE policy_id IS NOT NULL AND policy.policy_owner(policy_id) = $1`,
    [owner],
  );
  return { all: false, policyIds: result.rows.map((row) => row.policy_id) };
}

/** The scope of the request's actor, for lists and lookups. */
export function scopeFor(ctx: SubgraphContext): Promise<LedgerScope> {
  const actor = requireActor(ctx, ['admin', 'owner', 'consumer']);
  let scope = scopes.get(ctx);
  if (scope === undefined) {
    if (actor.kind === 'admin') scope = Promise.resolve(ALL);
    else if (actor.kind === 'consumer')
      scope = Promise.resolve({ all: false, policyIds: [actor.policyId] });
    else scope = ownedPolicies(ctx, actor.address);
    scopes.set(ctx, scope);
  }
  return scope;
}

/** The scope for one named policy: FORBIDDEN when the actor may not see that policy's money. */
export async function scopeForPolicy(ctx: SubgraphContext, policyId: string): Promise<LedgerScope> {
  const actor = requireActor(ctx, ['admin', 'owner', 'consumer']);
  if (actor.kind === 'admin') return ALL;
  if (actor.kind === 'consumer') {
    if (actor.policyId !== policyId)
      throw new AppError('FORBIDDEN', 'This session is bound to another policy.');
    return { all: false, policyIds: [policyId] };
  }
  const result = await ctx.db.query<{ owner: string | null }>(
    'SELECT policy.policy_owner($1) AS owner',
    [policyId],
  );
  if (result.rows[0].owner !== actor.address)
    throw new AppError('FORBIDDEN', 'Only the policy’s owner sees its money.');
  return { all: false, policyIds: [policyId] };
}
