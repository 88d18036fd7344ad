// The anchoring tables (migration intent 0017): leaves waiting for a batch, batches and their
// states, and each receipt's anchor object. Every write here runs on the connection that holds the
// anchoring lock (job.ts), inside a transaction of its own where it writes more than one row.
import type { PoolClient } from 'pg';
import { type Hex, bytesToHex } from 'viem';
import { buildMerkleTree, receiptLeafData, receiptMerkleHash } from '../../../core/canon/merkle';
import { proofToHex } from '../../../core/canon/merkle';
import { decisionReceiptBodyOf, decisionReceiptDigest } from '../../../core/receipts/anchor';
import type { Db } from '../../../platform/db';
import { recordReceiptsAnchored } from './ownerEvents';

/** Where batches go: the chain (CAIP-2) and the ReceiptAnchor contract, lowercase. */
export interface AnchorTarget {
  readonly chain: string;
  readonly contract: string;
}

export interface BatchRow {
  readonly batchId: string;
  readonly root: Hex;
  readonly firstSeq: bigint;
  readonly count: number;
  readonly createdAt: Date;
}

async function inTransaction<T>(client: PoolClient, work: () => Promise<T>): Promise<T> {
  await client.query('BEGIN');
  try {
    const result = await work();
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
}

interface DecisionRow {
  seq: string;
  receipt_id: string;
  intent_hash: string;
  policy_id: string;
  policy_hash: string | null;
  policy_version: number | null;
  decision: string;
  evaluated_at: Date;
}

/** Queues up to `limit` decision receipts not queued yet, oldest first; returns how many. */
export async function enqueueDecisionReceipts(db: Db, limit: number): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    'SELECT intent.enqueue_decision_receipts($1) AS n',
    [limit],
  );
  return rows[0]?.n ?? 0;
}

/** Hashes the public body of decision receipts enqueued without a digest; returns how many. */
export async function fillDecisionDigests(db: Db, limit: number): Promise<number> {
  const { rows } = await db.query<DecisionRow>(
    `SELECT l.seq, l.receipt_id, d.intent_hash, d.policy_id, d.policy_hash, d.policy_version,
            d.decision, d.evaluated_at
       FROM intent.anchor_leaves l
       JOIN intent.decision_receipts r ON r.receipt_id = l.receipt_id
       JOIN intent.decisions d ON d.decision_id = r.decision_id
      WHERE l.digest IS NULL
      ORDER BY l.seq
      LIMIT $1`,
    [limit],
  );
  if (rows.length === 0) return 0;
  const digests = rows.map((row) =>
    decisionReceiptDigest(
      decisionReceiptBodyOf({
        receiptId: row.receipt_id,
        intentHash: row.intent_hash,
        policyId: row.policy_id,
        policyHash: row.policy_hash,
        policyVersion: row.policy_version,
        decision: row.decision,
        evaluatedAt: row.evaluated_at.toISOString(),
      }),
    ),
  );
  await db.query(
    `UPDATE intent.anchor_leaves l SET digest = v.digest
       FROM unnest($1::bigint[], $2::text[]) AS v(seq, digest)
      WHERE l.seq = v.seq AND l.digest IS NULL`,
    [rows.map((row) => row.seq), digests],
  );
  return rows.length;
}

const batchColumns = `batch_id::text AS "batchId", root, first_seq::text AS "firstSeq", count,
  created_at AS "createdAt"`;

function batchOf(row: Omit<BatchRow, 'firstSeq'> & { firstSeq: string }): BatchRow {
  return { ...row, firstSeq: BigInt(row.firstSeq) };
}

/** Batches recorded but not known to have landed or been refused, oldest first. */
export async function sendingBatches(db: Db, target: AnchorTarget): Promise<BatchRow[]> {
  const { rows } = await db.query<BatchRow & { firstSeq: string }>(
    `SELECT ${batchColumns} FROM intent.anchor_batches
      WHERE state = 'SENDING' AND chain = $1 AND contract = $2 ORDER BY batch_id`,
    [target.chain, target.contract],
  );
  return rows.map(batchOf);
}

export interface CloseBatchOptions {
  readonly target: AnchorTarget;
  /** The contract's nextSeq(): the first position of the batch. */
  readonly firstSeq: bigint;
  readonly batchSize: number;
  /** Close a batch smaller than batchSize once its oldest leaf was enqueued at or before this. */
  readonly closeOlderThan: Date;
}

interface LeafRow {
  seq: string;
  receipt_id: Hex;
  digest: Hex;
  enqueued_at: Date;
}

/**
 * Closes the next batch, if one is due: the oldest `batchSize` hashed leaves in no batch, when
 * there are that many or the oldest is old enough. Records the batch (SENDING, its root) and every
 * leaf's index and audit path in one transaction, before anything is sent. Returns null when no
 * batch is due.
 */
export async function closeBatch(
  client: PoolClient,
  options: CloseBatchOptions,
): Promise<BatchRow | null> {
  return inTransaction(client, async () => {
    const { rows: leaves } = await client.query<LeafRow>(
      `SELECT seq, receipt_id, digest, enqueued_at FROM intent.anchor_leaves
        WHERE batch_id IS NULL AND digest IS NOT NULL
        ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED`,
      [options.batchSize],
    );
    if (leaves.length === 0) return null;
    const oldest = leaves.reduce((a, b) => (a.enqueued_at <= b.enqueued_at ? a : b));
    if (leaves.length < options.batchSize && oldest.enqueued_at > options.closeOlderThan)
      return null;
    const tree = buildMerkleTree(
      receiptMerkleHash,
      leaves.map((leaf) => receiptLeafData(leaf.receipt_id, leaf.digest)),
    );
    const root = bytesToHex(tree.root);
    const { rows } = await client.query<BatchRow & { firstSeq: string }>(
      `INSERT INTO intent.anchor_batches (chain, contract, first_seq, count, root)
       VALUES ($1, $2, $3, $4, $5) RETURNING ${batchColumns}`,
      [
        options.target.chain,
        options.target.contract,
        options.firstSeq.toString(),
        leaves.length,
        root,
      ],
    );
    const batch = batchOf(rows[0]);
    await client.query(
      `UPDATE intent.anchor_leaves l SET batch_id = $1, leaf_index = v.idx, proof = v.proof
         FROM unnest($2::bigint[], $3::int[], $4::jsonb[]) AS v(seq, idx, proof)
        WHERE l.seq = v.seq`,
      [
        batch.batchId,
        leaves.map((leaf) => leaf.seq),
        leaves.map((_, index) => index),
        leaves.map((_, index) => JSON.stringify(proofToHex(tree.inclusionProof(index)))),
      ],
    );
    return batch;
  });
}

/** Copies the batch's anchor object into the body of each final consumer receipt in it. */
async function publishToConsumerReceipts(db: Db, batchId: string): Promise<void> {
  await db.query(
    `UPDATE intent.consumer_receipts c
        SET body = jsonb_set(c.body, '{anchor}', intent.anchor_object(l, b))
       FROM intent.anchor_leaves l JOIN intent.anchor_batches b ON b.batch_id = l.batch_id
      WHERE l.batch_id = $1 AND l.kind = 'consumer' AND c.receipt_id = l.receipt_id`,
    [batchId],
  );
}

/** SENDING → ANCHORED, and the consumer receipts of the batch show it, in one transaction. */
export async function markAnchored(
  client: PoolClient,
  batchId: string,
  landed: { readonly txHash: Hex; readonly blockNumber: bigint },
): Promise<void> {
  await inTransaction(client, async () => {
    await client.query(
      `UPDATE intent.anchor_batches
          SET state = 'ANCHORED', tx_hash = $2, block_number = $3, updated_at = now()
        WHERE batch_id = $1 AND state = 'SENDING'`,
      [batchId, landed.txHash.toLowerCase(), landed.blockNumber.toString()],
    );
    await publishToConsumerReceipts(client, batchId);
    await recordReceiptsAnchored(client, batchId);
  });
}

/** ANCHORED batches not confirmed yet whose landing block is at or below `maxBlock`, oldest first. */
export async function anchoredToRecheck(
  db: Db,
  target: AnchorTarget,
  maxBlock: bigint,
): Promise<Array<BatchRow & { txHash: Hex; blockNumber: bigint }>> {
  const { rows } = await db.query<
    BatchRow & { firstSeq: string; txHash: Hex; blockNumber: string }
  >(
    `SELECT ${batchColumns}, tx_hash AS "txHash", block_number::text AS "blockNumber"
       FROM intent.anchor_batches
      WHERE state = 'ANCHORED' AND NOT confirmed AND chain = $1 AND contract = $2
        AND block_number <= $3 ORDER BY batch_id`,
    [target.chain, target.contract, maxBlock.toString()],
  );
  return rows.map((row) => ({
    ...batchOf(row),
    txHash: row.txHash,
    blockNumber: BigInt(row.blockNumber),
  }));
}

/** The re-check found the batch where it was marked: final. */
export async function markConfirmed(client: PoolClient, batchId: string): Promise<void> {
  await client.query(
    `UPDATE intent.anchor_batches SET confirmed = true, updated_at = now()
      WHERE batch_id = $1 AND state = 'ANCHORED'`,
    [batchId],
  );
}

/** A re-org dropped the landing: ANCHORED → SENDING (sent again), its receipts PENDING again. */
export async function markReorged(client: PoolClient, batchId: string): Promise<void> {
  await inTransaction(client, async () => {
    await client.query(
      `UPDATE intent.anchor_batches
          SET state = 'SENDING', tx_hash = NULL, block_number = NULL, updated_at = now()
        WHERE batch_id = $1 AND state = 'ANCHORED' AND NOT confirmed`,
      [batchId],
    );
    await publishToConsumerReceipts(client, batchId);
  });
}

/** Batches the contract refused because the writer was not authorised, not requeued yet. */
export async function refusedForWriter(db: Db, target: AnchorTarget): Promise<string[]> {
  const { rows } = await db.query<{ batchId: string }>(
    `SELECT batch_id::text AS "batchId" FROM intent.anchor_batches
      WHERE state = 'ANCHOR_FAILED' AND requeued_at IS NULL AND reason LIKE 'NotWriter:%'
        AND chain = $1 AND contract = $2 ORDER BY batch_id`,
    [target.chain, target.contract],
  );
  return rows.map((row) => row.batchId);
}

/**
 * Releases a refused batch's receipts for a later batch (intent.requeue_failed_batch): the
 * consumer receipts among them show PENDING again. Returns how many receipts were released.
 */
export async function requeueRefusedBatch(client: PoolClient, batchId: string): Promise<number> {
  return inTransaction(client, async () => {
    await client.query(
      `UPDATE intent.consumer_receipts c
          SET body = jsonb_set(c.body, '{anchor}',
                jsonb_build_object('state', 'PENDING', 'receiptId', l.receipt_id))
         FROM intent.anchor_leaves l
        WHERE l.batch_id = $1 AND l.kind = 'consumer' AND c.receipt_id = l.receipt_id`,
      [batchId],
    );
    const { rows } = await client.query<{ n: number }>(
      'SELECT intent.requeue_failed_batch($1) AS n',
      [batchId],
    );
    return rows[0]?.n ?? 0;
  });
}

/** SENDING → ANCHOR_FAILED with the reason, the batch's consumer receipts likewise. */
export async function markFailed(
  client: PoolClient,
  batchId: string,
  reason: string,
): Promise<void> {
  await inTransaction(client, async () => {
    await client.query(
      `UPDATE intent.anchor_batches SET state = 'ANCHOR_FAILED', reason = $2, updated_at = now()
        WHERE batch_id = $1 AND state = 'SENDING'`,
      [batchId, reason],
    );
    await publishToConsumerReceipts(client, batchId);
  });
}

/**
 * The anchor object of a receipt (either kind) as the tables hold it, or null when no receipt has
 * this id. A receipt not enqueued yet (a consumer receipt before its intent is final) is PENDING.
 */
export async function readAnchorObject(
  db: Db,
  receiptId: string,
): Promise<Record<string, unknown> | null> {
  const { rows } = await db.query<{ anchor: Record<string, unknown> | null }>(
    `SELECT COALESCE(
              (SELECT intent.anchor_object(l, b) FROM intent.anchor_leaves l
                 LEFT JOIN intent.anchor_batches b ON b.batch_id = l.batch_id
                WHERE l.receipt_id = $1),
              (SELECT jsonb_build_object('state', 'PENDING', 'receiptId', receipt_id)
                 FROM intent.decision_receipts WHERE receipt_id = $1),
              (SELECT jsonb_build_object('state', 'PENDING', 'receiptId', receipt_id)
                 FROM intent.consumer_receipts WHERE receipt_id = $1)) AS anchor`,
    [receiptId],
  );
  return rows[0]?.anchor ?? null;
}
