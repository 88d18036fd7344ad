// Chain truth for the settlement and refund legs, read on the rail's RPC through
// platform/chain/eip3009Facts and judged by core/eip3009: the treasury's float, whether a receipt
// carries an expected AuthorizationUsed and Transfer, the transaction that used a nonce, and
// whether an unused authorization can still be used (the chain's clock past validBefore). Never
// the merchant's or a facilitator's word alone.
import type { Address, Hex, TransactionReceipt } from 'viem';
import {
  type AuthorizationFacts,
  type UseReceipt,
  judgeAuthorization,
} from '../../../../core/eip3009/authorizationJudgement';
import {
  type ChainPublicClient,
  createChainPublicClient,
} from '../../../../platform/chain/clients';
import {
  authorizationState,
  authorizationsUsedInReceipt,
  findAuthorizationUse,
  readReceipt,
  transfersInReceipt,
} from '../../../../platform/chain/eip3009Facts';
import { type BlockSpan, DEFAULT_LOG_PAGE_BLOCKS } from '../../../../platform/chain/logSearch';
import { readTokenBalance } from '../../../../platform/chain/tokens';
import type { ConsumerRailAsset } from '../../../kit';

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

/** The receipt succeeded and carries, from the rail's token, AuthorizationUsed(from, nonce) and Transfer(from → to, value). */
function receiptPays(receipt: TransactionReceipt, token: Address, expected: ExpectedTransfer) {
  if (receipt.status !== 'success') return false;
  const used = authorizationsUsedInReceipt(receipt, token).some(
    (event) => same(event.authorizer, expected.from) && same(event.nonce, expected.nonce),
  );
  const moved = transfersInReceipt(receipt, token).some(
    (transfer) =>
      same(transfer.from, expected.from) &&
      same(transfer.to, expected.to) &&
      transfer.value === expected.value,
  );
  return used && moved;
}

/** The receipt of `txHash`; null when it cannot be read for any reason (a payment not proven). */
function receiptOrNull(rail: ConsumerRailAsset, txHash: Hex): Promise<TransactionReceipt | null> {
  return readReceipt(railClient(rail), txHash).then(
    (receipt) => receipt ?? null,
    () => null,
  );
}

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
  const receipt = await receiptOrNull(rail, txHash);
  if (receipt === null || !receiptPays(receipt, rail.token, expected)) return null;
  return { txHash, blockNumber: receipt.blockNumber };
}

/** Where the authorizer's nonce was used (or canceled) from `fromBlock` to `toBlock`, paged. */
function searchUse(rail: ConsumerRailAsset, authorizer: string, nonce: string, span: BlockSpan) {
  const authorization = { authorizer: authorizer as Address, nonce: nonce as Hex };
  const pageBlocks = rail.logPageBlocks ?? DEFAULT_LOG_PAGE_BLOCKS;
  return findAuthorizationUse(railClient(rail), rail.token, authorization, { ...span, pageBlocks });
}

/**
 * The transaction that used (or canceled) the authorizer's nonce, from its event: searched from
 * `fromBlock` to the latest block in pages of the rail's logPageBlocks (platform/chain/eip3009Facts).
 */
export async function authorizationUse(
  rail: ConsumerRailAsset,
  authorizer: string,
  nonce: string,
  fromBlock: bigint,
): Promise<ChainPayment | null> {
  const toBlock = await railClient(rail).getBlockNumber({ cacheTime: 0 });
  return (await searchUse(rail, authorizer, nonce, { fromBlock, toBlock })) ?? null;
}

export type ChainFinding =
  | { readonly status: 'PAID'; readonly txHash: string; readonly blockNumber: string }
  | { readonly status: 'NOT_PAID'; readonly checkedAt: string; readonly blockNumber: string }
  | { readonly status: 'OPEN'; readonly checkedAt: string };

export interface AuthorizationToCheck extends ExpectedTransfer {
  readonly validBefore: bigint;
  readonly fromBlock: bigint;
}

/** The facts of a used authorization up to `toBlock`: the transaction its event names, and what it paid. */
async function useFacts(
  rail: ConsumerRailAsset,
  authorization: AuthorizationToCheck,
  toBlock: bigint,
): Promise<{ facts: AuthorizationFacts; use?: ChainPayment }> {
  const span = { fromBlock: authorization.fromBlock, toBlock };
  const use = await searchUse(rail, authorization.from, authorization.nonce, span);
  if (use === undefined) return { facts: { used: true } };
  const receipt = await receiptOrNull(rail, use.txHash);
  const shows: UseReceipt =
    receipt === null || receipt.status !== 'success'
      ? 'UNREADABLE'
      : receiptPays(receipt, rail.token, authorization)
        ? 'PAYS'
        : 'PAYS_SOMETHING_ELSE';
  return {
    facts: { used: true, use: { txHash: use.txHash, foundByEvent: true, receipt: shows } },
    use,
  };
}

/**
 * The chain's finding on one authorization, every fact read at the latest block (judged in
 * core/eip3009): PAID when the nonce was used by a transaction moving exactly the expected
 * transfer; NOT_PAID when, at a block whose timestamp is at or past validBefore, the nonce is
 * still unused (the token refuses it from then on, forever); OPEN otherwise, including a nonce
 * used by something that is not the expected transfer: a human must look.
 */
export async function findAuthorization(
  rail: ConsumerRailAsset,
  authorization: AuthorizationToCheck,
  now: Date,
): Promise<ChainFinding> {
  const client = railClient(rail);
  const block = await client.getBlock({ blockTag: 'latest' });
  const { from, nonce, validBefore } = authorization;
  const used = await authorizationState(
    client,
    rail.token,
    from as Address,
    nonce as Hex,
    block.number,
  );
  const { facts, use } = used
    ? await useFacts(rail, authorization, block.number)
    : { facts: { used, chainTimeS: block.timestamp, validBefore }, use: undefined };
  const judgement = judgeAuthorization(facts);
  const checkedAt = now.toISOString();
  if (judgement.status === 'PAID' && use !== undefined)
    return { status: 'PAID', txHash: use.txHash, blockNumber: use.blockNumber.toString() };
  if (judgement.status === 'NOT_PAID' && judgement.because === 'EXPIRED_UNUSED')
    return { status: 'NOT_PAID', checkedAt, blockNumber: block.number.toString() };
  return { status: 'OPEN', checkedAt };
}
