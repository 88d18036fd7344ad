// Chain truth for the settlement and refund legs, read with viem on the rail's RPC: the treasury's
// float, a receipt's Transfer and AuthorizationUsed logs, the AuthorizationUsed event of a nonce,
// and whether an unused authorization can still be used (the chain's clock past validBefore).
// Never the merchant's or a facilitator's word alone.
import { type Address, type Hex, parseAbi, parseEventLogs } from 'viem';
import {
  type ChainPublicClient,
  createChainPublicClient,
} from '../../../../platform/chain/clients';
import { DEFAULT_LOG_PAGE_BLOCKS, searchLogPages } from '../../../../platform/chain/logSearch';
import { readAuthorizationState, readTokenBalance } from '../../../../platform/chain/tokens';
import type { ConsumerRailAsset } from '../../../kit';

const TOKEN_EVENTS = parseAbi([
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
]);

const clients = new Map<string, ChainPublicClient>();

/** One public client per rail RPC in this process. */
export function railClient(rail: ConsumerRailAsset): ChainPublicClient {
  const key = `${rail.chainId}|${rail.rpcUrl}`;
  let client = clients.get(key);
  if (client === undefined) {
    client = createChainPublicClient(
      { chainId: rail.chainId, rpcUrl: rail.rpcUrl },
      { pollingIntervalMs: 50 },
    );
    clients.set(key, client);
  }
  return client;
}

export function readTreasuryFloat(rail: ConsumerRailAsset): Promise<bigint> {
  return readTokenBalance(railClient(rail), rail.token, rail.treasury);
}

export interface ExpectedTransfer {
  readonly from: string;
  readonly to: string;
  readonly value: bigint;
  readonly nonce: string;
}

export interface ChainPayment {
  readonly txHash: Hex;
  readonly blockNumber: bigint;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * The receipt of `txHash` on the rail, when it succeeded and carries, from the rail's token, the
 * AuthorizationUsed(from, nonce) and the Transfer(from → to, value). Null otherwise (not found,
 * reverted, other token, other amount).
 */
export async function confirmedTransfer(
  rail: ConsumerRailAsset,
  txHash: Hex,
  expected: ExpectedTransfer,
): Promise<ChainPayment | null> {
  const receipt = await railClient(rail)
    .getTransactionReceipt({ hash: txHash })
    .catch(() => null);
  if (receipt === null || receipt.status !== 'success') return null;
  const logs = parseEventLogs({
    abi: TOKEN_EVENTS,
    logs: receipt.logs.filter((log) => same(log.address, rail.token)),
  });
  const used = logs.some(
    (log) =>
      log.eventName === 'AuthorizationUsed' &&
      same(log.args.authorizer, expected.from) &&
      same(log.args.nonce, expected.nonce),
  );
  const moved = logs.some(
    (log) =>
      log.eventName === 'Transfer' &&
      same(log.args.from, expected.from) &&
      same(log.args.to, expected.to) &&
      log.args.value === expected.value,
  );
  return used && moved ? { txHash, blockNumber: receipt.blockNumber } : null;
}

/**
 * The transaction that used the authorizer's nonce, from the AuthorizationUsed log: searched from
 * `fromBlock` to the latest block in pages of the rail's logPageBlocks (platform/chain/logSearch).
 */
export async function authorizationUse(
  rail: ConsumerRailAsset,
  authorizer: string,
  nonce: string,
  fromBlock: bigint,
): Promise<ChainPayment | null> {
  const client = railClient(rail);
  const latest = await client.getBlockNumber({ cacheTime: 0 });
  const { found } = await searchLogPages(
    { fromBlock, toBlock: latest },
    { pageBlocks: rail.logPageBlocks ?? DEFAULT_LOG_PAGE_BLOCKS, firstOnly: true },
    (page) =>
      client.getLogs({
        address: rail.token,
        event: TOKEN_EVENTS[1],
        args: { authorizer: authorizer as Address, nonce: nonce as Hex },
        ...page,
      }),
  );
  const log = found.find((entry) => entry.transactionHash !== null && entry.blockNumber !== null);
  return log ? { txHash: log.transactionHash!, blockNumber: log.blockNumber! } : null;
}

export type ChainFinding =
  | { readonly status: 'PAID'; readonly txHash: string; readonly blockNumber: string }
  | { readonly status: 'NOT_PAID'; readonly checkedAt: string; readonly blockNumber: string }
  | { readonly status: 'OPEN'; readonly checkedAt: string };

export interface AuthorizationToCheck extends ExpectedTransfer {
  readonly validBefore: bigint;
  readonly fromBlock: bigint;
}

/**
 * PAID when the nonce was used by a transaction moving exactly the expected transfer; NOT_PAID
 * when, at one block whose timestamp is at or past validBefore, the nonce is still unused (the
 * token refuses it from then on, forever); OPEN otherwise (including a nonce used by something
 * that is not the expected transfer: a human must look).
 */
export async function findAuthorization(
  rail: ConsumerRailAsset,
  authorization: AuthorizationToCheck,
  now: Date,
): Promise<ChainFinding> {
  const client = railClient(rail);
  const block = await client.getBlock({ blockTag: 'latest' });
  const used = await client.readContract({
    address: rail.token,
    abi: parseAbi(['function authorizationState(address, bytes32) view returns (bool)']),
    functionName: 'authorizationState',
    args: [authorization.from as Address, authorization.nonce as Hex],
    blockNumber: block.number,
  });
  if (used) {
    const use = await authorizationUse(
      rail,
      authorization.from,
      authorization.nonce,
      authorization.fromBlock,
    );
    const confirmed = use ? await confirmedTransfer(rail, use.txHash, authorization) : null;
    if (confirmed)
      return {
        status: 'PAID',
        txHash: confirmed.txHash,
        blockNumber: confirmed.blockNumber.toString(),
      };
    return { status: 'OPEN', checkedAt: now.toISOString() };
  }
  if (block.timestamp >= authorization.validBefore)
    return {
      status: 'NOT_PAID',
      checkedAt: now.toISOString(),
      blockNumber: block.number.toString(),
    };
  return { status: 'OPEN', checkedAt: now.toISOString() };
}

export { readAuthorizationState };
