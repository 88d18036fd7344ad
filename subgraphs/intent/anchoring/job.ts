// The anchoring job (docs/receipts.md "Anchoring"): one round hashes decision receipts waiting for
// a digest, settles batches a previous round recorded but did not finish (crash, RPC failure),
// then closes batches at ANCHOR_BATCH_SIZE leaves or ANCHOR_BATCH_SECONDS after the oldest, each
// recorded with its root and proofs before its one `anchor(root, firstSeq, count)` transaction.
// Rounds are serialised across processes by an advisory lock held in a transaction of its own
// (platform/db/lockHolder.ts, safe behind PgBouncer): one writer, one nonce stream.
// A batch is anchored at most once: before sending (again) the contract is asked whether the root
// is there (batchOf), and a refusal is checked the same way before the batch is called failed.
// Re-orgs: a landed batch is called ANCHORED only once its block is `confirmations` deep (1: the
// block itself); until then it stays SENDING and each round looks for it again, so a batch whose
// block was re-orged away is not found and is sent again, at the same contract positions. Once its
// block is `recheckDepth` deep (ANCHOR_RECHECK_DEPTH) an ANCHORED batch is read again: still there
// with the same transaction, it is confirmed (final); gone, it goes back to SENDING and is sent
// again. Batches refused with NotWriter are requeued (their receipts released for a later batch,
// the refused batch kept as the record) once the contract lists the writer.
import { BaseError, ContractFunctionRevertedError, type Address, type Hex } from 'viem';
import type { Pool, PoolClient } from 'pg';
import { receiptAnchorAbi } from '../../../contracts/artifacts/abis';
import type { ChainPublicClient, ChainWalletClient } from '../../../platform/chain/clients';
import { TransactionRevertedError } from '../../../platform/chain/errors';
import {
  anchorBatch,
  readAnchoredEvent,
  readBatch,
  readWriterState,
} from '../../../platform/chain/receiptAnchor';
import { openLockHolder } from '../../../platform/db';
import type { Logger } from '../../../platform/log';
import {
  anchoredToRecheck,
  type AnchorTarget,
  type BatchRow,
  closeBatch,
  enqueueDecisionReceipts,
  fillDecisionDigests,
  markAnchored,
  markConfirmed,
  markFailed,
  markReorged,
  refusedForWriter,
  requeueRefusedBatch,
  sendingBatches,
} from './store';

/** The advisory lock every anchoring round holds (one writer at a time, any number of workers). */
export const ANCHOR_LOCK_KEY = 0x616e63686f72; // "anchor"
export const DEFAULT_ANCHOR_BATCH_SIZE = 100;
export const DEFAULT_ANCHOR_BATCH_SECONDS = 2;
/** Blocks (the landing one included) at which an ANCHORED batch is read again; ANCHOR_RECHECK_DEPTH. */
export const DEFAULT_ANCHOR_RECHECK_DEPTH = 64;
/** Decision receipts hashed per query while filling digests. */
const DIGEST_CHUNK = 1000;

export interface AnchorJobDeps {
  readonly db: Pool;
  readonly publicClient: ChainPublicClient;
  /** The writer's wallet (its key is an authorised writer of the contract, or will be). */
  readonly writer: ChainWalletClient;
  readonly contract: Address;
  readonly batchSize: number;
  readonly batchSeconds: number;
  /**
   * How long before T a batch smaller than batchSize closes, so that its oldest receipt is
   * ANCHORED by T and not one round plus a transaction after it (the looping worker sets it to its
   * round interval plus the send time); 0 closes exactly at T.
   */
  readonly closeLeadMs?: number;
  readonly now: () => Date;
  readonly log: Logger;
  readonly receiptTimeoutMs?: number;
  /** ANCHOR_CONFIRMATIONS: blocks (the landing block included) before a batch is ANCHORED; default 1. */
  readonly confirmations?: number;
  /** ANCHOR_RECHECK_DEPTH: blocks (the landing block included) at which an ANCHORED batch is read again. */
  readonly recheckDepth?: number;
}

export interface AnchorRoundResult {
  /** False when another worker held the lock: this round did nothing. */
  readonly ran: boolean;
  /** ANCHORED batches a re-org had dropped, sent again this round. */
  readonly reorged?: number;
  /** Receipts of NotWriter-refused batches released for a later batch this round. */
  readonly requeued?: number;
  readonly anchored: number;
  readonly failed: number;
  /** Batches left SENDING (the chain did not answer); the next round settles them. */
  readonly sending: number;
}

type Outcome = 'ANCHORED' | 'ANCHOR_FAILED' | 'SENDING';

function targetOf(deps: AnchorJobDeps): AnchorTarget {
  return {
    chain: `eip155:${deps.publicClient.chain.id}`,
    contract: deps.contract.toLowerCase(),
  };
}

/** The contract's refusal as a sentence, or null when the failure is not a refusal (transport, timeout). */
export function refusalOf(
  error: unknown,
  deps: Pick<AnchorJobDeps, 'writer' | 'contract'>,
): string | null {
  if (error instanceof TransactionRevertedError)
    return `the anchor transaction ${error.txHash} reverted`;
  if (!(error instanceof BaseError)) return null;
  const reverted = error.walk((cause) => cause instanceof ContractFunctionRevertedError);
  if (!(reverted instanceof ContractFunctionRevertedError)) return null;
  const name = reverted.data?.errorName ?? 'revert';
  if (name === 'NotWriter')
    return (
      `NotWriter: ${deps.writer.account.address} is not an authorised writer of ReceiptAnchor ` +
      `${deps.contract} (add it with proposeWriter, then executeWriter once the contract's delay has passed)`
    );
  const args = (reverted.data?.args ?? []).map((arg) => String(arg)).join(', ');
  return `${name}(${args})${reverted.reason ? `: ${reverted.reason}` : ''}`;
}

/** If the root is on chain already: its batch's landing (from the Anchored event), else null. */
async function landed(
  deps: AnchorJobDeps,
  batch: BatchRow,
): Promise<{ txHash: Hex; blockNumber: bigint } | 'ELSEWHERE' | null> {
  const onChain = await readBatch(deps.publicClient, deps.contract, batch.root);
  if (onChain === null) return null;
  if (onChain.firstSeq !== batch.firstSeq || onChain.count !== batch.count) return 'ELSEWHERE';
  const event = await readAnchoredEvent(deps.publicClient, deps.contract, { root: batch.root });
  if (event === null) return null;
  return { txHash: event.txHash, blockNumber: event.blockNumber };
}

/** Marks the batch ANCHORED once its landing block is deep enough; SENDING (look again) before. */
async function anchoredWhenDeep(
  deps: AnchorJobDeps,
  client: PoolClient,
  batch: BatchRow,
  landing: { txHash: Hex; blockNumber: bigint },
): Promise<Outcome> {
  const needed = BigInt(deps.confirmations ?? 1);
  if (needed > 1n) {
    const head = await deps.publicClient.getBlockNumber({ cacheTime: 0 });
    if (head - landing.blockNumber + 1n < needed) {
      deps.log.debug(
        { batchId: batch.batchId, blockNumber: landing.blockNumber, head },
        'anchor batch landed, waiting for confirmations',
      );
      return 'SENDING';
    }
  }
  await markAnchored(client, batch.batchId, landing);
  return 'ANCHORED';
}

/**
 * Brings one recorded batch to ANCHORED or ANCHOR_FAILED, or leaves it SENDING when the chain is
 * unreachable or its landing is not deep enough yet.
 */
export async function settleBatch(
  deps: AnchorJobDeps,
  client: PoolClient,
  batch: BatchRow,
): Promise<Outcome> {
  const before = await landed(deps, batch);
  if (before === 'ELSEWHERE') {
    await markFailed(client, batch.batchId, 'the same root is anchored under other positions');
    return 'ANCHOR_FAILED';
  }
  if (before !== null) return anchoredWhenDeep(deps, client, batch, before);
  try {
    const mined = await anchorBatch({
      publicClient: deps.publicClient,
      writer: deps.writer,
      contract: deps.contract,
      root: batch.root,
      firstSeq: batch.firstSeq,
      count: batch.count,
      timeoutMs: deps.receiptTimeoutMs,
    });
    return await anchoredWhenDeep(deps, client, batch, mined);
  } catch (error) {
    const refusal = refusalOf(error, deps);
    if (refusal === null) {
      deps.log.warn(
        { err: error, batchId: batch.batchId },
        'anchor not sent; the next round retries',
      );
      return 'SENDING';
    }
    // Refused now, but an earlier send of the same batch may have landed meanwhile.
    const after = await landed(deps, batch);
    if (after !== null && after !== 'ELSEWHERE')
      return anchoredWhenDeep(deps, client, batch, after);
    await markFailed(client, batch.batchId, refusal);
    deps.log.warn({ batchId: batch.batchId, reason: refusal }, 'anchor batch refused');
    return 'ANCHOR_FAILED';
  }
}

/**
 * Hashes waiting decision receipts, then records the next due batch (root, positions, proofs)
 * without sending it; null when none is due.
 */
export async function closeDueBatch(
  deps: AnchorJobDeps,
  client: PoolClient,
): Promise<BatchRow | null> {
  // Decision receipts are queued here, in bulk, not by the preflights that issue them (0017).
  while ((await enqueueDecisionReceipts(client, DIGEST_CHUNK)) === DIGEST_CHUNK);
  while ((await fillDecisionDigests(client, DIGEST_CHUNK)) === DIGEST_CHUNK);
  const firstSeq = await deps.publicClient.readContract({
    address: deps.contract,
    abi: receiptAnchorAbi,
    functionName: 'nextSeq',
  });
  return closeBatch(client, {
    target: targetOf(deps),
    firstSeq,
    batchSize: deps.batchSize,
    closeOlderThan: new Date(
      deps.now().getTime() - Math.max(0, deps.batchSeconds * 1000 - (deps.closeLeadMs ?? 0)),
    ),
  });
}

/**
 * Reads again every unconfirmed ANCHORED batch whose block is recheckDepth deep: confirmed when
 * its root is still there from the same transaction, back to SENDING otherwise. Returns how many
 * went back.
 */
async function recheckAnchored(deps: AnchorJobDeps, client: PoolClient): Promise<number> {
  const depth = BigInt(deps.recheckDepth ?? DEFAULT_ANCHOR_RECHECK_DEPTH);
  const head = await deps.publicClient.getBlockNumber({ cacheTime: 0 });
  let reorged = 0;
  for (const batch of await anchoredToRecheck(client, targetOf(deps), head - depth + 1n)) {
    const now = await landed(deps, batch);
    const same =
      now !== null &&
      now !== 'ELSEWHERE' &&
      now.txHash.toLowerCase() === batch.txHash &&
      now.blockNumber === batch.blockNumber;
    if (same) {
      await markConfirmed(client, batch.batchId);
      continue;
    }
    deps.log.warn(
      { batchId: batch.batchId, root: batch.root },
      'anchored batch not found at its recheck depth (re-org); sending it again',
    );
    await markReorged(client, batch.batchId);
    reorged += 1;
  }
  return reorged;
}

/** Releases the receipts of NotWriter-refused batches once the contract lists the writer. */
async function requeueOnceWriter(deps: AnchorJobDeps, client: PoolClient): Promise<number> {
  const refused = await refusedForWriter(client, targetOf(deps));
  if (refused.length === 0) return 0;
  const writer = deps.writer.account.address;
  const state = await readWriterState(deps.publicClient, deps.contract, writer);
  if (!state.isWriter) return 0;
  let released = 0;
  for (const batchId of refused) released += await requeueRefusedBatch(client, batchId);
  deps.log.info({ batches: refused.length, receipts: released }, 'refused receipts requeued');
  return released;
}

async function anchorUnderLock(
  deps: AnchorJobDeps,
  client: PoolClient,
): Promise<AnchorRoundResult> {
  const reorged = await recheckAnchored(deps, client);
  const requeued = await requeueOnceWriter(deps, client);
  const counts = { ANCHORED: 0, ANCHOR_FAILED: 0, SENDING: 0 };
  for (const batch of await sendingBatches(client, targetOf(deps))) {
    counts[await settleBatch(deps, client, batch)] += 1;
  }
  // New batches only once every recorded one is settled: positions come from the contract.
  while (counts.SENDING === 0) {
    const batch = await closeDueBatch(deps, client);
    if (batch === null) break;
    counts[await settleBatch(deps, client, batch)] += 1;
  }
  return {
    ran: true,
    reorged,
    requeued,
    anchored: counts.ANCHORED,
    failed: counts.ANCHOR_FAILED,
    sending: counts.SENDING,
  };
}

/** One anchoring round; does nothing (ran: false) while another worker's round holds the lock. */
export async function runAnchorRound(deps: AnchorJobDeps): Promise<AnchorRoundResult> {
  const holder = await openLockHolder(deps.db);
  try {
    if (!(await holder.tryLock({ key: ANCHOR_LOCK_KEY })))
      return { ran: false, anchored: 0, failed: 0, sending: 0 };
    const client = await deps.db.connect();
    let broken = false;
    try {
      return await anchorUnderLock(deps, client);
    } catch (error) {
      broken = true;
      throw error;
    } finally {
      client.release(broken);
    }
  } finally {
    await holder.release();
  }
}
