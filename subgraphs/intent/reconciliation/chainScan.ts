// Reads a rail's token Transfer events for a reconciliation: the blocks whose timestamps fall in
// the period (found by binary search on block timestamps), the transfers into and out of the
// treasury in them (getLogs on the indexed from/to, in pages of the rail's CHAIN_LOG_PAGE_BLOCKS,
// platform/chain/eip3009Facts), and the transfers of each booked leg's own transaction (its
// receipt), so a leg mined just outside the period still matches. Bounded: every
// RPC call of one report is taken from its RpcBudget (RECONCILE_MAX_RPC_CALLS); what the budget
// does not cover is not read, and the scan says so.
import type { Hex } from 'viem';
import type { ChainTransfer, Rail } from '../../../core/reconciliation/chainCheck';
import {
  type TokenTransfer,
  findTransfersTouching,
  readReceipt,
  transfersInReceipt,
} from '../../../platform/chain/eip3009Facts';
import { DEFAULT_LOG_PAGE_BLOCKS } from '../../../platform/chain/logSearch';
import type { ConsumerRailAsset } from '../../kit';
import { railClient } from '../consumer/execution/chainTruth';

/** RPC calls one report may make when RECONCILE_MAX_RPC_CALLS is not configured. */
export const DEFAULT_REPORT_RPC_CALLS = 1_000;

/** The RPC calls one report may still make; every chain read takes its calls from it first. */
export class RpcBudget {
  private used = 0;

  constructor(readonly limit: number) {}

  /** Takes `calls` when that many are left (true); otherwise takes nothing (false). */
  take(calls: number): boolean {
    if (this.used + calls > this.limit) return false;
    this.used += calls;
    return true;
  }

  get left(): number {
    return this.limit - this.used;
  }

  get spent(): number {
    return this.used;
  }
}

export interface BlockWindow {
  readonly fromBlock: bigint;
  /** Inclusive; fromBlock - 1 when no block of the chain falls in the period. */
  readonly toBlock: bigint;
}

export interface RailScan {
  readonly rail: Rail;
  /** Null when the budget did not cover finding the period's blocks. */
  readonly window: BlockWindow | null;
  /** False when the budget ran out first: the window (or part of it) was not read. */
  readonly complete: boolean;
  readonly transfers: ChainTransfer[];
}

/** The first block whose timestamp is at or after `unixSeconds` (latest + 1 when none is). */
async function firstBlockAtOrAfter(rail: ConsumerRailAsset, unixSeconds: bigint, latest: bigint) {
  const client = railClient(rail);
  let low = 0n;
  let high = latest + 1n;
  while (low < high) {
    const middle = (low + high) / 2n;
    const block = await client.getBlock({ blockNumber: middle });
    if (block.timestamp >= unixSeconds) high = middle;
    else low = middle + 1n;
  }
  return low;
}

/** The period's blocks; null when the budget cannot cover the two binary searches. */
export async function blockWindow(
  rail: ConsumerRailAsset,
  from: Date,
  to: Date,
  budget: RpcBudget,
): Promise<BlockWindow | null> {
  if (!budget.take(1)) return null;
  const latest = await railClient(rail).getBlockNumber();
  // Each search reads at most bitLength(latest + 1) + 1 blocks.
  if (!budget.take(2 * ((latest + 1n).toString(2).length + 1))) return null;
  const seconds = (date: Date) => BigInt(Math.floor(date.getTime() / 1000));
  const fromBlock = await firstBlockAtOrAfter(rail, seconds(from), latest);
  const toBlock = (await firstBlockAtOrAfter(rail, seconds(to), latest)) - 1n;
  return { fromBlock, toBlock };
}

function chainTransferOf(rail: Rail, transfer: TokenTransfer): ChainTransfer {
  const { txHash, logIndex, blockNumber, from, to, value } = transfer;
  return { rail, txHash, logIndex, blockNumber, from, to, valueAtomic: value };
}

/** Transfers into and out of the rail's treasury inside the window, page by page (two calls a page). */
export async function scanTreasuryTransfers(
  railName: Rail,
  rail: ConsumerRailAsset,
  window: BlockWindow | null,
  budget: RpcBudget,
): Promise<RailScan> {
  if (window === null) return { rail: railName, window, complete: false, transfers: [] };
  const bounds = {
    ...window,
    pageBlocks: rail.logPageBlocks ?? DEFAULT_LOG_PAGE_BLOCKS,
    maxPages: Math.floor(budget.left / 2),
  };
  const scan = await findTransfersTouching(railClient(rail), rail.token, rail.treasury, bounds);
  budget.take(2 * scan.pages);
  const transfers = scan.found.map((transfer) => chainTransferOf(railName, transfer));
  return { rail: railName, window, complete: scan.complete, transfers };
}

/** The rail token's transfers touching the treasury in one transaction (none when it is unknown). */
export async function transfersOfTransaction(
  railName: Rail,
  rail: ConsumerRailAsset,
  txHash: string,
): Promise<ChainTransfer[]> {
  // Not mined (or never sent): the leg is not on chain. Any other failure is not an answer.
  const receipt = await readReceipt(railClient(rail), txHash as Hex);
  if (receipt === undefined || receipt.status !== 'success') return [];
  const treasury = rail.treasury.toLowerCase();
  return transfersInReceipt(receipt, rail.token)
    .filter((transfer) => transfer.from === treasury || transfer.to === treasury)
    .map((transfer) => chainTransferOf(railName, transfer));
}
