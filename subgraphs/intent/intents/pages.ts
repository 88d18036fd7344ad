// The dashboard's list of a policy's bound intents: newest first, filtered by time, with opaque
// keyset cursors (created_at in microseconds, then intentHash). Admin or the policy's owner only.
import type { SubgraphContext } from '../../kit';
import { requirePolicyReader } from '../lists/access';
import { afterCursor, cursorOf, pageSize } from '../lists/paging';
import type { PageArgs } from '../lists/pages';
import type { SpendIntentConnection } from './schema';

export async function intentsPage(
  ctx: SubgraphContext,
  policyId: string,
  args: PageArgs,
): Promise<SpendIntentConnection> {
  await requirePolicyReader(ctx, policyId);
  const first = pageSize(args.first);
  const after = afterCursor(args.after, /^i:([0-9]{1,16}):(0x[0-9a-f]{64})$/);
  const result = await ctx.db.query<{
    intent_hash: string;
    policy_id: string;
    agent_id: string;
    amount: string;
    created_at: Date;
    micros: string;
  }>(
    `SELECT intent_hash, policy_id::text AS policy_id, agent_id, amount::text AS amount, created_at,
            (extract(epoch FROM created_at) * 1000000)::bigint::text AS micros
       FROM intent.spend_intents
      WHERE policy_id = $1::numeric
        AND ($2::timestamptz IS NULL OR created_at >= $2)
        AND ($3::timestamptz IS NULL OR created_at < $3)
        AND ($4::bigint IS NULL OR ((extract(epoch FROM created_at) * 1000000)::bigint, intent_hash) < ($4::bigint, $5::text))
      ORDER BY created_at DESC, intent_hash DESC
      LIMIT $6`,
    [
      policyId,
      args.from ?? null,
      args.to ?? null,
      after?.[1] ?? null,
      after?.[2] ?? null,
      first + 1,
    ],
  );
  const kept = result.rows.slice(0, first);
  const last = kept[kept.length - 1];
  return {
    nodes: kept.map((row) => ({
      intentHash: row.intent_hash,
      policyId: row.policy_id,
      agentId: row.agent_id,
      amountAtomic: row.amount,
      createdAt: row.created_at,
    })),
    pageInfo: {
      endCursor: last === undefined ? null : cursorOf(`i:${last.micros}:${last.intent_hash}`),
      hasNextPage: result.rows.length > first,
    },
  };
}
