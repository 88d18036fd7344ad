// The ReceiptAnchor contract from TypeScript: deployment configs (mainnet: three-day writer delay
// and no writer until one waits it out; devnet: seconds and the writer from the start), anchoring a
// batch, the writer timelock, and reading a batch back by root or first sequence position.
// Writes simulate first, so a refused call fails with the contract's decoded error and costs no gas.
import { type Address, type Hex, getAddress } from 'viem';
import { receiptAnchorAbi, receiptAnchorBytecode } from '../../contracts/artifacts/abis';
import type { ChainPublicClient, ChainWalletClient } from './clients';
import { type Deployment, deployArtifact } from './deploy';
import { TransactionRevertedError } from './errors';
import { DEFAULT_RECEIPT_TIMEOUT_MS, type MinedTransaction } from './tokens';

/** Three days: the immutable writer-set timelock of a mainnet deployment (interface spec). */
export const MAINNET_WRITER_DELAY_SECONDS = 3 * 24 * 60 * 60;
/** Long enough to be a real timelock in tests and demos, short enough to wait out. */
export const DEVNET_WRITER_DELAY_SECONDS = 5;
/** The contract's MAX_WRITER_DELAY (365 days); longer delays are refused before sending. */
export const MAX_WRITER_DELAY_SECONDS = 365 * 24 * 60 * 60;
/** The contract's `count` is a uint32. */
export const MAX_BATCH_COUNT = 2 ** 32 - 1;
const MAX_SEQ = 2n ** 64n - 1n;

export interface ReceiptAnchorConfig {
  readonly delaySeconds: number;
  readonly admin: Address;
  /** Writers from the start, without the delay; empty means every writer waits it out. */
  readonly writers: readonly Address[];
}

/**
 * Mainnet: no writer at deployment. The service's writer is proposed afterwards and anchors only
 * once the three days have passed; until then its batches report ANCHOR_FAILED.
 */
export function mainnetReceiptAnchorConfig(admin: Address): ReceiptAnchorConfig {
  return { delaySeconds: MAINNET_WRITER_DELAY_SECONDS, admin, writers: [] };
}

export function devnetReceiptAnchorConfig(admin: Address, writer: Address): ReceiptAnchorConfig {
  return { delaySeconds: DEVNET_WRITER_DELAY_SECONDS, admin, writers: [writer] };
}

export async function deployReceiptAnchor(
  publicClient: ChainPublicClient,
  deployer: ChainWalletClient,
  config: ReceiptAnchorConfig,
): Promise<Deployment> {
  const { delaySeconds } = config;
  if (
    !Number.isSafeInteger(delaySeconds) ||
    delaySeconds < 1 ||
    delaySeconds > MAX_WRITER_DELAY_SECONDS
  ) {
    throw new RangeError(
      `delaySeconds must be an integer in [1, ${MAX_WRITER_DELAY_SECONDS}], got ${delaySeconds}`,
    );
  }
  return deployArtifact({
    publicClient,
    walletClient: deployer,
    contractName: 'ReceiptAnchor',
    abi: receiptAnchorAbi,
    bytecode: receiptAnchorBytecode,
    args: [BigInt(delaySeconds), config.admin, [...config.writers]],
  });
}

export interface AnchorBatchParameters {
  readonly publicClient: ChainPublicClient;
  readonly writer: ChainWalletClient;
  readonly contract: Address;
  readonly root: Hex;
  readonly firstSeq: bigint;
  readonly count: number;
  readonly timeoutMs?: number;
}

type WriteFunctionName = 'anchor' | 'proposeWriter' | 'executeWriter' | 'cancelWriterProposal';

async function send(
  publicClient: ChainPublicClient,
  sender: ChainWalletClient,
  contract: Address,
  call: { functionName: WriteFunctionName; args: readonly unknown[] },
  timeoutMs: number | undefined,
): Promise<MinedTransaction> {
  // The union of the four calls' argument tuples cannot be narrowed through viem's generics.
  const { request } = await publicClient.simulateContract({
    address: contract,
    abi: receiptAnchorAbi,
    functionName: call.functionName,
    args: call.args,
    account: sender.account,
  } as never);
  const txHash = await sender.writeContract(request);
  const receipt = await publicClient.waitForTransactionReceipt({
    hash: txHash,
    timeout: timeoutMs ?? DEFAULT_RECEIPT_TIMEOUT_MS,
  });
  if (receipt.status !== 'success') throw new TransactionRevertedError(call.functionName, txHash);
  return { txHash, blockNumber: receipt.blockNumber, gasUsed: receipt.gasUsed };
}

/** One transaction for the whole batch; refused (NonContiguousBatch) if firstSeq was anchored already. */
export async function anchorBatch(params: AnchorBatchParameters): Promise<MinedTransaction> {
  const { firstSeq, count } = params;
  if (firstSeq < 0n || firstSeq > MAX_SEQ)
    throw new RangeError(`firstSeq must be a uint64, got ${firstSeq}`);
  if (!Number.isSafeInteger(count) || count < 1 || count > MAX_BATCH_COUNT) {
    throw new RangeError(`count must be an integer in [1, ${MAX_BATCH_COUNT}], got ${count}`);
  }
  return send(
    params.publicClient,
    params.writer,
    params.contract,
    { functionName: 'anchor', args: [params.root, firstSeq, count] },
    params.timeoutMs,
  );
}

export interface WriterChangeParameters {
  readonly publicClient: ChainPublicClient;
  /** The admin for propose and cancel; anyone for execute. */
  readonly sender: ChainWalletClient;
  readonly contract: Address;
  readonly account: Address;
  readonly timeoutMs?: number;
}

export function proposeWriter(
  params: WriterChangeParameters & { readonly allowed: boolean },
): Promise<MinedTransaction> {
  const args = [params.account, params.allowed] as const;
  return send(
    params.publicClient,
    params.sender,
    params.contract,
    { functionName: 'proposeWriter', args },
    params.timeoutMs,
  );
}

export function executeWriter(
  params: WriterChangeParameters & { readonly allowed: boolean },
): Promise<MinedTransaction> {
  const args = [params.account, params.allowed] as const;
  return send(
    params.publicClient,
    params.sender,
    params.contract,
    { functionName: 'executeWriter', args },
    params.timeoutMs,
  );
}

export function cancelWriterProposal(params: WriterChangeParameters): Promise<MinedTransaction> {
  return send(
    params.publicClient,
    params.sender,
    params.contract,
    { functionName: 'cancelWriterProposal', args: [params.account] },
    params.timeoutMs,
  );
}

export interface WriterState {
  readonly isWriter: boolean;
  /** The pending change, or null; `etaUnixS` is when it becomes executable. */
  readonly pending: { readonly allowed: boolean; readonly etaUnixS: bigint } | null;
}

export async function readWriterState(
  publicClient: ChainPublicClient,
  contract: Address,
  account: Address,
): Promise<WriterState> {
  const base = { address: contract, abi: receiptAnchorAbi } as const;
  const [isWriter, proposal] = await Promise.all([
    publicClient.readContract({ ...base, functionName: 'isWriter', args: [account] }),
    publicClient.readContract({ ...base, functionName: 'proposalOf', args: [account] }),
  ]);
  return {
    isWriter,
    pending: proposal.eta === 0n ? null : { allowed: proposal.allowed, etaUnixS: proposal.eta },
  };
}

export interface AnchoredBatch {
  readonly root: Hex;
  readonly firstSeq: bigint;
  readonly count: number;
  readonly writer: Address;
  readonly txHash: Hex;
  readonly blockNumber: bigint;
}

export interface BatchRecord {
  readonly firstSeq: bigint;
  readonly count: number;
  readonly blockNumber: bigint;
}

/** The contract's record of the batch under `root` (one eth_call, no log access), or null. */
export async function readBatch(
  publicClient: ChainPublicClient,
  contract: Address,
  root: Hex,
): Promise<BatchRecord | null> {
  const batch = await publicClient.readContract({
    address: contract,
    abi: receiptAnchorAbi,
    functionName: 'batchOf',
    args: [root],
  });
  return batch.count === 0
    ? null
    : { firstSeq: batch.firstSeq, count: batch.count, blockNumber: batch.blockNumber };
}

export type AnchoredBatchFilter = { readonly root: Hex } | { readonly firstSeq: bigint };

export interface ReadAnchoredEventOptions {
  /** Where a search by firstSeq starts; default the genesis block (public RPCs may limit ranges). */
  readonly fromBlock?: bigint;
}

/**
 * The `Anchored` event of one batch, or null when none matches. By root the contract's own record
 * names the block, so only that block's logs are read; by firstSeq the logs are searched.
 */
export async function readAnchoredEvent(
  publicClient: ChainPublicClient,
  contract: Address,
  filter: AnchoredBatchFilter,
  options: ReadAnchoredEventOptions = {},
): Promise<AnchoredBatch | null> {
  let range: { fromBlock: bigint; toBlock: bigint | 'latest' } = {
    fromBlock: options.fromBlock ?? 0n,
    toBlock: 'latest',
  };
  if ('root' in filter) {
    const batch = await readBatch(publicClient, contract, filter.root);
    if (batch === null) return null;
    range = { fromBlock: batch.blockNumber, toBlock: batch.blockNumber };
  }
  const logs = await publicClient.getContractEvents({
    address: contract,
    abi: receiptAnchorAbi,
    eventName: 'Anchored',
    args: 'root' in filter ? { root: filter.root } : { firstSeq: filter.firstSeq },
    ...range,
    strict: true,
  });
  const log = logs[0];
  if (log === undefined) return null;
  return {
    root: log.args.root,
    firstSeq: log.args.firstSeq,
    count: log.args.count,
    writer: getAddress(log.args.writer),
    txHash: log.transactionHash,
    blockNumber: log.blockNumber,
  };
}
