// The EIP-3009 facts every payment decision reads from a token, on the committed ABI
// (contracts/artifacts/abis.ts): an authorization's state (used or canceled) at a block, the
// transaction that used or canceled it (one paged, bounded log search: platform/chain/logSearch),
// a transaction's receipt, the token's Transfers and AuthorizationUsed events in that receipt (and
// which Transfer each authorization made, for a receipt carrying many), and
// the Transfers into or out of one account over a block span. Reads only; what the facts mean is
// judged in core/eip3009. Addresses in the answers are lower-case.
import type { Address, Hex, Log, TransactionReceipt } from 'viem';
import { eip3009TokenAbi } from '../../contracts/artifacts/abis';
import type { ChainPublicClient } from './clients';
import { abiEvent, eventWordsDecoder } from './eventWords';
import { type BlockSpan, type PagedLogs, searchLogPages } from './logSearch';

/** One Transfer event of the token. */
export interface TokenTransfer {
  readonly txHash: Hex;
  readonly logIndex: number;
  readonly blockNumber: bigint;
  readonly from: string;
  readonly to: string;
  readonly value: bigint;
}

/** One AuthorizationUsed event of the token. */
export interface AuthorizationUsedEvent {
  readonly authorizer: string;
  readonly nonce: string;
}

/** Where an authorization was used (or canceled): its transaction and block. */
export interface AuthorizationUse {
  readonly txHash: Hex;
  readonly blockNumber: bigint;
}

/** A search of `span`, `pageBlocks` blocks an eth_getLogs request, in `order` (default oldest first). */
export interface LogSearchBounds extends BlockSpan {
  readonly pageBlocks: bigint;
  readonly order?: 'oldest-first' | 'newest-first';
  /** Read at most this many pages; default: the whole span. */
  readonly maxPages?: number;
}

type MinedLog = {
  transactionHash: Hex | null;
  logIndex: number | null;
  blockNumber: bigint | null;
};

const lower = (value: string) => value.toLowerCase();
const sameAddress = (a: string, b: string) => lower(a) === lower(b);

/** The token's authorizationState: true once the nonce is used or canceled (at `blockNumber`, else latest). */
export function authorizationState(
  chain: ChainPublicClient,
  token: Address,
  authorizer: Address,
  nonce: Hex,
  blockNumber?: bigint,
): Promise<boolean> {
  return chain.readContract({
    address: token,
    abi: eip3009TokenAbi,
    functionName: 'authorizationState',
    args: [authorizer, nonce],
    ...(blockNumber === undefined ? {} : { blockNumber }),
  });
}

/**
 * The transaction that used (AuthorizationUsed) or canceled (AuthorizationCanceled) the
 * authorizer's nonce within the bounds, searched page by page and stopping at the find; undefined
 * when none is in the span. A nonce is spent once, so at most one such event exists.
 */
export async function findAuthorizationUse(
  chain: ChainPublicClient,
  token: Address,
  authorization: { readonly authorizer: Address; readonly nonce: Hex },
  bounds: LogSearchBounds,
): Promise<AuthorizationUse | undefined> {
  const search = (eventName: 'AuthorizationUsed' | 'AuthorizationCanceled', page: BlockSpan) =>
    chain.getContractEvents({
      address: token,
      abi: eip3009TokenAbi,
      eventName,
      args: { authorizer: authorization.authorizer, nonce: authorization.nonce },
      ...page,
    });
  const { found } = await searchLogPages(
    bounds,
    {
      pageBlocks: bounds.pageBlocks,
      order: bounds.order,
      maxPages: bounds.maxPages,
      firstOnly: true,
    },
    async (page) => {
      const [used, canceled] = await Promise.all([
        search('AuthorizationUsed', page),
        search('AuthorizationCanceled', page),
      ]);
      return [...used, ...canceled].filter(isMined);
    },
  );
  const log = found[0];
  return log ? { txHash: log.transactionHash, blockNumber: log.blockNumber } : undefined;
}

function isMined<T extends MinedLog>(
  log: T,
): log is T & { transactionHash: Hex; logIndex: number; blockNumber: bigint } {
  return log.transactionHash !== null && log.logIndex !== null && log.blockNumber !== null;
}

/** The receipt of `txHash`; undefined when the chain has none (not mined, never sent). */
export async function readReceipt(
  chain: ChainPublicClient,
  txHash: Hex,
): Promise<TransactionReceipt | undefined> {
  try {
    return await chain.getTransactionReceipt({ hash: txHash });
  } catch (error) {
    // Not found is an answer; any other failure is not. (By name: viem may be loaded twice.)
    if ((error as Error).name === 'TransactionReceiptNotFoundError') return undefined;
    throw error;
  }
}

type TransferArgs = { from?: Address; to?: Address; value?: bigint };

function transferOf(log: MinedLog, args: TransferArgs): TokenTransfer | undefined {
  const { from, to, value } = args;
  if (!isMined(log) || from === undefined || to === undefined || value === undefined)
    return undefined;
  return {
    txHash: lower(log.transactionHash) as Hex,
    logIndex: log.logIndex,
    blockNumber: log.blockNumber,
    from: lower(from),
    to: lower(to),
    value,
  };
}

function tokenLogs(logs: readonly Log[], token: Address): Log[] {
  return logs.filter((log) => sameAddress(log.address, token));
}

// A receipt's token events, decoded word by word (eventWords.ts): the group receipts carry two per
// member, and each paid call's outcome is read from one.
const decodeTransfer = eventWordsDecoder(abiEvent(eip3009TokenAbi, 'Transfer'));
const decodeAuthorizationUsed = eventWordsDecoder(abiEvent(eip3009TokenAbi, 'AuthorizationUsed'));

function transferInLog(log: Log): TokenTransfer | undefined {
  const fields = decodeTransfer(log);
  return fields ? transferOf(log, fields as TransferArgs) : undefined;
}

function authorizationUsedInLog(log: Log): AuthorizationUsedEvent | undefined {
  const fields = decodeAuthorizationUsed(log);
  return fields
    ? { authorizer: fields.authorizer as string, nonce: fields.nonce as string }
    : undefined;
}

/** The token's Transfer events in a receipt (of any status: a reverted one has no logs). */
export function transfersInReceipt(receipt: TransactionReceipt, token: Address): TokenTransfer[] {
  return tokenLogs(receipt.logs, token).flatMap((log) => transferInLog(log) ?? []);
}

/** The token's AuthorizationUsed events in a receipt. */
export function authorizationsUsedInReceipt(
  receipt: TransactionReceipt,
  token: Address,
): AuthorizationUsedEvent[] {
  return tokenLogs(receipt.logs, token).flatMap((log) => authorizationUsedInLog(log) ?? []);
}

/** An authorization a receipt shows used, with the Transfer it made (the token emits them as a pair). */
export interface AuthorizationTransfer extends AuthorizationUsedEvent {
  readonly transfer: TokenTransfer;
}

/**
 * Each AuthorizationUsed of the token in a receipt paired with the Transfer the same
 * transferWithAuthorization emitted right after it (the token's next log): which payment each
 * authorization made, even when one transaction carries many (group settlement). A use without a
 * following Transfer (a cancellation emits none) is left out.
 */
export function authorizationTransfersInReceipt(
  receipt: TransactionReceipt,
  token: Address,
): AuthorizationTransfer[] {
  const logs = tokenLogs(receipt.logs, token);
  const paired: AuthorizationTransfer[] = [];
  logs.forEach((log, index) => {
    const used = authorizationUsedInLog(log);
    const next = logs[index + 1];
    if (!used || !next || log.logIndex === null || next.logIndex !== log.logIndex + 1) return;
    const transfer = transferInLog(next);
    if (transfer) paired.push({ ...used, transfer });
  });
  return paired;
}

/**
 * The token's Transfers into and out of `account` within the bounds, page by page (two eth_getLogs
 * a page); `complete` false when maxPages stopped the search first.
 */
export function findTransfersTouching(
  chain: ChainPublicClient,
  token: Address,
  account: Address,
  bounds: LogSearchBounds,
): Promise<PagedLogs<TokenTransfer>> {
  const search = (args: { from: Address } | { to: Address }, page: BlockSpan) =>
    chain.getContractEvents({
      address: token,
      abi: eip3009TokenAbi,
      eventName: 'Transfer',
      args,
      ...page,
    });
  return searchLogPages(
    bounds,
    { pageBlocks: bounds.pageBlocks, order: bounds.order, maxPages: bounds.maxPages },
    async (page) => {
      const [incoming, outgoing] = await Promise.all([
        search({ to: account }, page),
        search({ from: account }, page),
      ]);
      return [...incoming, ...outgoing].flatMap((log) => transferOf(log, log.args) ?? []);
    },
  );
}
