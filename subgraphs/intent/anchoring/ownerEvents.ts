// `receipt.anchored` for the owners' webhooks: one event per receipt of a batch that just became
// ANCHORED, recorded through the policy subgraph's published policy.record_owner_event inside the
// anchoring commit's transaction (store.ts markAnchored), so the event exists exactly when the
// anchor does. The data is the receipt's public anchor object plus its policy.
import type { Db } from '../../../platform/db';

/** Records the batch's receipt.anchored events; returns the deliveries queued. */
export async function recordReceiptsAnchored(db: Db, batchId: string): Promise<number> {
  const result = await db.query<{ queued: string | null }>(
    `SELECT sum(policy.record_owner_event(
              owned.policy_id, 'receipt.anchored',
              intent.anchor_object(l, b) || jsonb_build_object('policyId', owned.policy_id, 'kind', l.kind),
              b.updated_at, 'receipt.anchored:' || l.receipt_id))::text AS queued
       FROM intent.anchor_leaves l
       JOIN intent.anchor_batches b ON b.batch_id = l.batch_id AND b.state = 'ANCHORED'
       JOIN LATERAL (
         SELECT d.policy_id FROM intent.decision_receipts r JOIN intent.decisions d ON d.decision_id = r.decision_id
          WHERE l.kind = 'decision' AND r.receipt_id = l.receipt_id
         UNION ALL
         SELECT c.policy_id::text FROM intent.consumer_receipts r JOIN intent.consumer_intents c ON c.intent_id = r.intent_id
          WHERE l.kind = 'consumer' AND r.receipt_id = l.receipt_id
       ) owned ON true
      WHERE l.batch_id = $1`,
    [batchId],
  );
  return Number(result.rows[0]?.queued ?? 0);
}
