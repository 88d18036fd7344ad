// Reads a rail's token Transfer events for a reconciliation with viem: the blocks whose
// timestamps fall in the period (found by binary search on block timestamps), the transfers into
// and out of the treasury in them (getLogs on the indexed from/to, in bounded spans), and the
// transfers of each booked leg's own transaction (its receipt), so a leg mined just outside the
// period still matches. Bounded: at most MAX_LOG_SPANS spans of LOG_SPAN_BLOCKS blocks per rail.
import {
  type Address,
  type Hex,
  parseAbi,
  parseEventLogs,
  TransactionReceiptNotFoundError,
} from 'viem';
import type { ChainTransfer, Rail } from '../../../core/reconciliation/chainCheck';
import type { ConsumerRailAsset } from '../../kit';
import { railClient } from '../consumer/execution/chainTruth';

export const LOG_SPAN_BLOCKS = 5_000n;
export const MAX_LOG_SPANS = 200;

const TRANSFER = parseAbi([
  'event Transfer(address indexed from, address indexed to, uint256 value)',
]);

export interface BlockWindow {
  readonly fromBlock: bigint;
  /** Inclusive; fromBlock - 1 when no block of the chain falls in the period. */
  readonly toBlock: bigint;
}

export interface RailScan {
  readonly rail: Rail;
  readonly window: BlockWindow;
  /** False when the window was longer than the scan bound: transfers past it were not read. */
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

export async function blockWindow(
  rail: ConsumerRailAsset,
  from: Date,
  to: Date,
): Promise<BlockWindow> {
  const latest = await railClient(rail).getBlockNumber();
  const seconds = (date: Date) => BigInt(Math.floor(date.getTime() / 1000));
  const fromBlock = await firstBlockAtOrAfter(rail, seconds(from), latest);
  const toBlock = (await firstBlockAtOrAfter(rail, seconds(to), latest)) - 1n;
  return { fromBlock, toBlock };
}

type TransferLog = {
  transactionHash: Hex | null;
  logIndex: number | null;
  blockNumber: bigint | null;
  args: { from?: Address; to?: Address; value?: bigint };
};

function transferOf(rail: Rail, log: TransferLog): ChainTransfer | null {
  const { from, to, value } = log.args;
  if (log.transactionHash === null || log.logIndex === null || log.blockNumber === null)
    return null;
  if (from === undefined || to === undefined || value === undefined) return null;
  return {
    rail,
    txHash: log.transactionHash.toLowerCase(),
    logIndex: log.logIndex,
    blockNumber: log.blockNumber,
    from: from.toLowerCase(),
    to: to.toLowerCase(),
    valueAtomic: value,
  };
}

/** Transfers into and out of the rail's treasury inside the window, span by span. */
export async function scanTreasuryTransfers(
  railName: Rail,
  rail: ConsumerRailAsset,
  window: BlockWindow,
): Promise<RailScan> {
  const client = railClient(rail);
  const transfers: ChainTransfer[] = [];
  let start = window.fromBlock;
  for (let span = 0; span < MAX_LOG_SPANS && start <= window.toBlock; span += 1) {
    const end =
      start + LOG_SPAN_BLOCKS - 1n < window.toBlock ? start + LOG_SPAN_BLOCKS - 1n : window.toBlock;
    const range = {
      address: rail.token,
      event: TRANSFER[0],
      fromBlock: start,
      toBlock: end,
    } as const;
    const [incoming, outgoing] = await Promise.all([
      client.getLogs({ ...range, args: { to: rail.treasury } }),
      client.getLogs({ ...range, args: { from: rail.treasury } }),
    ]);
    for (const log of [...incoming, ...outgoing]) {
      const transfer = transferOf(railName, log);
      if (transfer) transfers.push(transfer);
    }
    start = end + 1n;
  }
  return { rail: railName, window, complete: start > window.toBlock, transfers };
}

/** The rail token's transfers touching the treasury in one transaction (none when it is unknown). */
export async function transfersOfTransaction(
  railName: Rail,
  rail: ConsumerRailAsset,
  txHash: string,
): Promise<ChainTransfer[]> {
  const receipt = await railClient(rail)
    .getTransactionReceipt({ hash: txHash as Hex })
    .catch((error: unknown) => {
      // Not mined (or never sent): the leg is not on chain. Any other failure is not an answer.
      if (error instanceof TransactionReceiptNotFoundError) return null;
      throw error;
    });
  if (receipt === null || receipt.status !== 'success') return [];
  const treasury = rail.treasury.toLowerCase();
  return parseEventLogs({
    abi: TRANSFER,
    logs: receipt.logs.filter((log) => log.address.toLowerCase() === rail.token.toLowerCase()),
  })
    .map((log) => transferOf(railName, log))
    .filter((t): t is ChainTransfer => t !== null && (t.from === treasury || t.to === treasury));
}
