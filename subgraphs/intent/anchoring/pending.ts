// A policy's receipts whose anchor is not settled yet (docs/receipts.md "Following anchors live"):
// the first message of anchorsUpdated(policyId), so a subscriber starts from the current state and
// then hears each change. Unsettled: a decision receipt still PENDING (queued or not), a consumer
// receipt queued and in no batch or in one still SENDING. Settled receipts never change again, so
// they are not listed. The owner of the policy or an admin only (lists/access.ts).
import type { SubgraphContext } from '../../kit';
import { requirePolicyReader } from '../lists/access';
import { pageSize } from '../lists/paging';
import { reportedAnchor } from './reads';

type Json = Record<string, unknown>;

export const PENDING_ANCHORS_DEFAULT = 100;

const UNSETTLED = `
  WITH candidates AS (
    SELECT r.receipt_id, r.created_at AS at
      FROM intent.decision_receipts r
      JOIN intent.decisions d ON d.decision_id = r.decision_id
     WHERE r.state = 'PENDING' AND d.policy_id = $1
    UNION ALL
    SELECT l.receipt_id, l.enqueued_at AS at
      FROM intent.consumer_intents i
      JOIN intent.consumer_receipts c ON c.intent_id = i.intent_id
      JOIN intent.anchor_leaves l ON l.receipt_id = c.receipt_id
      LEFT JOIN intent.anchor_batches b ON b.batch_id = l.batch_id
     WHERE i.policy_id = $1::numeric AND (l.batch_id IS NULL OR b.state = 'SENDING')
  )
  SELECT x.receipt_id, x.at, count(*) OVER () AS total,
         jsonb_build_object('state', 'PENDING', 'receiptId', x.receipt_id) AS anchor
    FROM candidates x
   ORDER BY x.at, x.receipt_id
   LIMIT $2`;

/** The unsettled receipts of one policy, oldest first, at most `first` (1–200) of them, with their total. */
export async function pendingAnchors(
  ctx: SubgraphContext,
  policyId: string,
  first: number | null,
): Promise<Json> {
  const limit = pageSize(first ?? PENDING_ANCHORS_DEFAULT);
  await requirePolicyReader(ctx, policyId);
  const asOf = ctx.now();
  const { rows } = await ctx.db.query<{ anchor: Json; total: string }>(UNSETTLED, [
    policyId,
    limit,
  ]);
  const pending = rows.map((row) => reportedAnchor(ctx, row.anchor));
  const total = rows.length === 0 ? 0 : Number(rows[0]?.total);
  return { policyId, asOf: asOf.toISOString(), pendingTotal: total, pending };
}
