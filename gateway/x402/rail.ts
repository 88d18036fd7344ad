// The funding chain as the paywall needs it: the official in-process x402 facilitator (@x402/evm
// `exact`, EIP-3009) for verification and settlement from the relayer key, plus the reads that
// make the ledger follow the chain rather than the facilitator's word (platform/chain/eip3009Facts):
// the Transfer event of a receipt, whether an authorization was used, by which transaction, the
// payer's balance and the chain's clock. Facts a decision combines are read at one block number the caller pins.
import { AsyncLocalStorage } from 'node:async_hooks';
import { x402Facilitator } from '@x402/core/facilitator';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import type { Settlement } from './settlement';
import { registerExactEvmScheme } from '@x402/evm/exact/facilitator';
import { type Address, type Hex, type TransactionReceipt, getAddress, isAddressEqual } from 'viem';
import type { Account } from 'viem/accounts';
import {
  caip2Of,
  createChainPublicClient,
  createChainWalletClient,
  type ChainPublicClient,
} from '../../platform/chain/clients';
import {
  authorizationState,
  findAuthorizationUse,
  readReceipt,
  transfersInReceipt,
} from '../../platform/chain/eip3009Facts';
import { DEFAULT_LOG_PAGE_BLOCKS } from '../../platform/chain/logSearch';
import { readTokenBalance } from '../../platform/chain/tokens';
import { createGroupPath, type GroupPrecheck } from './groupSettlement/groupPath';
import type { MemberCheckChain } from './groupSettlement/memberCheck';
import type { GroupSettler } from './groupSettlement/groupSettler';
import type { RailOptions } from './railOptions';
import {
  createFacilitatorSigner,
  relayerAccount,
  withChainReads,
} from '../../platform/chain/facilitatorSigner';

export interface ObservedTransfer {
  readonly from: string;
  readonly to: string;
  readonly value: bigint;
}

export type ReceiptOutcome =
  | { readonly status: 'unknown' }
  | { readonly status: 'reverted' }
  | { readonly status: 'success'; readonly transfers: readonly ObservedTransfer[] };

export type { Settlement } from './settlement';
/** Verification started ahead of a settlement (SettlementRail.precheck). */
export type SettlementPrecheck = GroupPrecheck;

export interface SettlementRail {
  readonly network: `eip155:${number}`;
  readonly relayer: Address;
  /** The group settler when group settlement is on (its counters, drain). */
  readonly groups?: GroupSettler;
  /**
   * Starts the verification's chain reads for a payload the group path carries (undefined: there
   * is nothing to start ahead). Read-only and never rejecting, so it may run while the payment is
   * claimed; hand it to `settle` with the same payload and requirements.
   */
  precheck(
    payload: PaymentPayload,
    requirements: PaymentRequirements,
  ): SettlementPrecheck | undefined;
  /**
   * Verifies (with simulation, so a doomed authorization is refused without sending) and settles;
   * a precheck of this payload and these requirements stands in for the verification's reads.
   */
  settle(
    payload: PaymentPayload,
    requirements: PaymentRequirements,
    precheck?: SettlementPrecheck,
  ): Promise<Settlement>;
  /** The latest block number: read it once, then read every fact of one decision at it. */
  latestBlockNumber(): Promise<bigint>;
  /**
   * The token's Transfer events in a transaction's receipt; `unknown` when no receipt exists yet,
   * or (with `atBlock`) when it was mined after that block.
   */
  receipt(txHash: Hex, atBlock?: bigint): Promise<ReceiptOutcome>;
  /** The token's authorizationState as of `blockNumber`: used or canceled. */
  authorizationUsed(payer: Address, nonce: Hex, blockNumber: bigint): Promise<boolean>;
  /**
   * The transaction that used (AuthorizationUsed) or canceled (AuthorizationCanceled) an
   * authorization at or before `toBlock`; null if none within the log lookback.
   */
  findAuthorizationTransaction(payer: Address, nonce: Hex, toBlock: bigint): Promise<Hex | null>;
  balanceOf(owner: Address, blockNumber: bigint): Promise<bigint>;
  /** The timestamp of block `blockNumber`: the clock EIP-3009 windows are judged by. */
  chainTimeS(blockNumber: bigint): Promise<bigint>;
}

const DEFAULT_LOG_LOOKBACK_BLOCKS = 50_000n;
const RECENT_RECEIPTS = 256;

/**
 * The receipts the facilitator waited for, kept briefly: the ledger books from the same receipt,
 * so confirming its Transfer costs no second RPC round trip. Each is read at most once.
 */
class RecentReceipts {
  private readonly byHash = new Map<Hex, TransactionReceipt>();

  remember(receipt: TransactionReceipt): TransactionReceipt {
    this.byHash.set(receipt.transactionHash, receipt);
    if (this.byHash.size > RECENT_RECEIPTS)
      this.byHash.delete(this.byHash.keys().next().value as Hex);
    return receipt;
  }

  take(txHash: Hex): TransactionReceipt | undefined {
    const receipt = this.byHash.get(txHash);
    this.byHash.delete(txHash);
    return receipt;
  }
}

/** The token's Transfer events in a receipt, or why there are none to count (see SettlementRail.receipt). */
async function receiptOutcome(
  publicClient: ChainPublicClient,
  token: Address,
  recent: RecentReceipts,
  txHash: Hex,
  atBlock: bigint | undefined,
): Promise<ReceiptOutcome> {
  const receipt = recent.take(txHash) ?? (await readReceipt(publicClient, txHash));
  if (receipt === undefined) return { status: 'unknown' };
  if (atBlock !== undefined && receipt.blockNumber > atBlock) return { status: 'unknown' };
  if (receipt.status !== 'success') return { status: 'reverted' };
  return { status: 'success', transfers: transfersInReceipt(receipt, token) };
}

/** The transaction that used or canceled an authorization, newest first within the lookback. */
async function authorizationTransaction(
  publicClient: ChainPublicClient,
  token: Address,
  bounds: { readonly lookback: bigint; readonly pageBlocks: bigint },
  which: { readonly payer: Address; readonly nonce: Hex; readonly toBlock: bigint },
): Promise<Hex | null> {
  // Newest first: a use the paywall asks about is most likely recent.
  const { payer, nonce, toBlock } = which;
  const fromBlock = toBlock > bounds.lookback ? toBlock - bounds.lookback : 0n;
  const span = {
    fromBlock,
    toBlock,
    pageBlocks: bounds.pageBlocks,
    order: 'newest-first',
  } as const;
  const use = await findAuthorizationUse(publicClient, token, { authorizer: payer, nonce }, span);
  return use?.txHash ?? null;
}

/**
 * The group path's own reads per payment (the payer's code, the transfer simulated): they go to the
 * node as one JSON-RPC batch, with those of every other payment checked in the same turn; the
 * token's code is the signer's, read once for the life of the process.
 */
function memberReads(
  endpoint: { chainId: number; rpcUrl: string },
  clientOptions: { pollingIntervalMs?: number },
  token: Address,
  signer: Pick<MemberCheckChain, 'getCode'>,
): MemberCheckChain {
  const batchedReads = createChainPublicClient(endpoint, { ...clientOptions, batch: true });
  return {
    getCode: (args) =>
      isAddressEqual(args.address, token) ? signer.getCode(args) : batchedReads.getCode(args),
    readContract: (args) => batchedReads.readContract(args as never),
    call: (args) => batchedReads.call(args),
  };
}

export function createSettlementRail(options: RailOptions): SettlementRail {
  const endpoint = { chainId: options.chainId, rpcUrl: options.rpcUrl };
  const clientOptions = { pollingIntervalMs: options.pollingIntervalMs };
  const publicClient: ChainPublicClient = createChainPublicClient(endpoint, clientOptions);
  const account: Account = relayerAccount(options.relayerPrivateKey);
  const wallet = withChainReads(createChainWalletClient(endpoint, account, clientOptions));
  const network = caip2Of(options.chainId);
  const token = getAddress(options.token);
  const bounds = {
    lookback: options.logLookbackBlocks ?? DEFAULT_LOG_LOOKBACK_BLOCKS,
    pageBlocks: options.logPageBlocks ?? DEFAULT_LOG_PAGE_BLOCKS,
  };

  const recentReceipts = new RecentReceipts();
  // Which settlement (of several under way at once) reached the send: each runs in its own context.
  // Its code reads too: within one settlement the payer's code is read from the chain once.
  const sends = new AsyncLocalStorage<{
    broadcast: boolean;
    codeReads: Map<string, Promise<Hex | undefined>>;
  }>();
  const signer = createFacilitatorSigner(wallet, account.address, {
    confirmationTimeoutMs: options.confirmationTimeoutMs,
    onReceipt: (receipt) => recentReceipts.remember(receipt),
    onSend: () => {
      const attempt = sends.getStore();
      if (attempt) attempt.broadcast = true;
    },
    codeReads: () => sends.getStore()?.codeReads,
    knownContracts: [token],
  });
  const facilitator = new x402Facilitator();
  registerExactEvmScheme(facilitator, { signer, networks: network, simulateInSettle: true });
  const group = options.group
    ? createGroupPath(
        { ...options, group: options.group },
        facilitator,
        memberReads(endpoint, clientOptions, token, signer),
      )
    : null;

  return {
    network,
    relayer: account.address,
    ...(group ? { groups: group.settler } : {}),
    precheck: (payload, requirements) => group?.precheck(payload, requirements),
    async settle(payload, requirements, precheck) {
      const grouped = group?.settle(payload, requirements, precheck);
      if (grouped) return grouped;
      const attempt = { broadcast: false, codeReads: new Map<string, Promise<Hex | undefined>>() };
      const response = await sends.run(attempt, () => facilitator.settle(payload, requirements));
      return { ...response, broadcast: attempt.broadcast };
    },
    latestBlockNumber: () => publicClient.getBlockNumber({ cacheTime: 0 }),
    receipt: (txHash, atBlock) =>
      receiptOutcome(publicClient, token, recentReceipts, txHash, atBlock),
    authorizationUsed: (payer, nonce, blockNumber) =>
      authorizationState(publicClient, token, payer, nonce, blockNumber),
    findAuthorizationTransaction: (payer, nonce, toBlock) =>
      authorizationTransaction(publicClient, token, bounds, { payer, nonce, toBlock }),
    balanceOf: (owner, blockNumber) => readTokenBalance(publicClient, token, owner, blockNumber),
    async chainTimeS(blockNumber) {
      const block = await publicClient.getBlock({ blockNumber });
      return block.timestamp;
    },
  };
}
