// Consumer receipts in the database (migration 0016): written by refreshReceipt, which store.ts
// calls after every successful compare-and-set of an intent, on the same connection and so in the
// same transaction (store.ts opens one when it was handed the pool). A crash at any point then
// leaves either both the intent change and its receipt or neither; the database's deferred check
// refuses a COMMIT that would leave them apart.
import {
  buildConsumerReceipt,
  type ConsumerReceipt,
  type ReceiptSource,
} from '../../../../core/consumer/receipt';
import type { ConsumerIntentState } from '../../../../core/consumer/lifecycle';
import type { Db } from '../../../../platform/db';

/**
 * What store.ts hands over: its ConsumerIntentRow (typed structurally here, so the two modules do
 * not import each other); serviceVerified is read when the row carries it (issue #18 item 1).
 */
export type ReceiptSourceRow = ReceiptSource;

/** States an intent is in only before any funding could have been recorded: no receipt yet. */
const NEVER_FUNDED: ReadonlySet<ConsumerIntentState> = new Set<ConsumerIntentState>([
  'CREATED',
  'DISCOVERING',
  'QUOTED',
  'POLICY_CHECKING',
  'AWAITING_APPROVAL',
  'APPROVED',
]);

/**
 * Whether a change of an intent seen in `expected`, setting `funding` as given, may write a
 * receipt (so store.ts must run it in a transaction). False only when none can exist before or
 * after it: the intent has never been funded and is not being funded now.
 */
export function mayTouchReceipt(expected: ConsumerIntentState, fundingChange: unknown): boolean {
  return !NEVER_FUNDED.has(expected) || (fundingChange !== undefined && fundingChange !== null);
}

function sourceOf(row: ReceiptSourceRow): ReceiptSource {
  return {
    intentId: row.intentId,
    policyId: row.policyId,
    capability: row.capability,
    state: row.state,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    quote: row.quote,
    decision: row.decision,
    funding: row.funding,
    settlement: row.settlement,
    providerAttested: row.providerAttested,
    serviceVerified: row.serviceVerified ?? null,
    resolution: row.resolution ?? null,
  };
}

/**
 * Writes the receipt of the intent as `row` shows it, inside the caller's transaction: inserted
 * when the intent has a funding leg and no receipt yet, rewritten while it is not final (its
 * anchor object is kept as stored), left alone once final. An intent without a funding leg and
 * without a receipt has nothing to publish.
 */
export async function refreshReceipt(db: Db, row: ReceiptSourceRow): Promise<void> {
  if (row.funding === null && NEVER_FUNDED.has(row.state)) return;
  const receipt = buildConsumerReceipt(sourceOf(row));
  const values = [
    receipt.anchor.receiptId,
    row.intentId,
    receipt,
    receipt.integrity.digest,
    row.state,
    row.updatedAt,
  ];
  const update = `body = jsonb_set($3::jsonb, '{anchor}', intent.consumer_receipts.body->'anchor'),
         digest = $4, intent_state = $5, intent_updated_at = $6, written_at = now()`;
  if (row.funding === null) {
    // Funding taken back (a reorg): the receipt, if there is one, follows; none is started.
    await db.query(
      `UPDATE intent.consumer_receipts SET ${update}
        WHERE receipt_id = $1 AND intent_id = $2 AND NOT final`,
      values,
    );
    return;
  }
  await db.query(
    `INSERT INTO intent.consumer_receipts
       (receipt_id, intent_id, body, digest, intent_state, intent_updated_at)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (intent_id) DO UPDATE SET ${update}
     WHERE NOT intent.consumer_receipts.final`,
    values,
  );
}

export interface StoredConsumerReceipt {
  readonly receiptId: string;
  readonly intentId: string;
  readonly seq: string;
  readonly body: ConsumerReceipt;
  readonly digest: string;
  readonly final: boolean;
  readonly writtenAt: Date;
}

/** The receipt of an intent as last written, or null (none yet, or no such intent). */
export async function getConsumerReceipt(
  db: Db,
  intentId: string,
): Promise<StoredConsumerReceipt | null> {
  const result = await db.query<{
    receipt_id: string;
    intent_id: string;
    seq: string;
    body: ConsumerReceipt;
    digest: string;
    final: boolean;
    written_at: Date;
  }>(
    `SELECT receipt_id, intent_id, seq::text AS seq, body, digest, final, written_at
       FROM intent.consumer_receipts WHERE intent_id = $1`,
    [intentId],
  );
  const found = result.rows[0];
  if (found === undefined) return null;
  return {
    receiptId: found.receipt_id,
    intentId: found.intent_id,
    seq: found.seq,
    body: found.body,
    digest: found.digest,
    final: found.final,
    writtenAt: found.written_at,
  };
}
