// Refunds on the funding rail: REFUND_PENDING (REFUND owed booked) → an EIP-3009
// transferWithAuthorization of the funded amount from the funding treasury to the funding payer,
// signed by the treasury signer and sent by the relayer (no ERC-20 approve) → REFUNDED with the
// REFUND paid group, once the receipt shows the Transfer. Idempotent across crashes by
// construction: the authorization's nonce is derived from the intent, so the token accepts at
// most one refund per intent however often it is signed or sent; the tx hash is recorded before
// waiting, and a restart looks at the chain (nonce used? which transaction?) before sending again.
//
// The same path pays a refund owed without a state of its own: a funding payment that landed
// after its intent stopped being fundable (booked FUNDING + REFUND owed by the funding booking,
// `funding.refundOwed`); the intent keeps its state (often EXPIRED, which is terminal) and only
// its `refund` record and the REFUND paid group say the money went back.
import { carriedReason } from '../../../../core/consumer/reasons';
import { type Address, type Hex, keccak256, parseAbi, parseSignature, toBytes } from 'viem';
import type { ChainWalletClient } from '../../../../platform/chain/clients';
import type { TreasurySigner } from '../../../../platform/chain/treasurySigner';
import { type DbPool, withTransaction } from '../../../../platform/db';
import type { Logger } from '../../../../platform/log';
import type { ConsumerRails } from '../../../kit';
import { assetId, postRefund } from '../../../ledger';
import { type ConsumerIntentRow, getConsumerIntent } from '../store';
import { transitionConsumerIntent, updateConsumerIntent } from '../transition';
import { authorizationUse, type ChainPayment, confirmedTransfer, railClient } from './chainTruth';
import { authorizationState } from '../../../../platform/chain/eip3009Facts';

/** A refund authorization stays valid an hour: long enough for any relayer, short enough to end. */
export const REFUND_VALIDITY_SECONDS = 3600n;
const RECEIPT_WAIT_MS = 30_000;

const TRANSFER_WITH_AUTHORIZATION = parseAbi([
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
]);

export interface RefundDeps {
  readonly db: DbPool;
  readonly rails: ConsumerRails;
  readonly signer: TreasurySigner;
  /** Pays the gas of refunds on the funding rail. */
  readonly relayer: ChainWalletClient;
  readonly log: Logger;
  now(): Date;
}

/**
 * The intents whose funding arrived too late and is owed back (any state but REFUND_PENDING,
 * which has its own flow), as a claim filter (SQL without parameters).
 */
export const OWED_REFUND_CLAIM = {
  states: ['AWAITING_APPROVAL', 'APPROVED', 'AWAITING_FUNDING', 'BLOCKED', 'EXPIRED', 'CANCELLED'],
  where: `funding ? 'refundOwed' AND NOT coalesce(refund ? 'refundedAt', false)`,
} as const;

/** One nonce per intent, ever: keccak256("spend-control:refund:<intentId>"). */
export function refundNonce(intentId: string): Hex {
  return keccak256(toBytes(`spend-control:refund:${intentId}`));
}

interface RefundRecord {
  refundedAt?: string;
  amount: string;
  to: string;
  network: string;
  asset: string;
  groupIds: string[];
  nonce?: string;
  validBefore?: string;
  fromBlock?: string;
  txHash?: string;
}

/** A funding payment booked and owed back because its intent was no longer fundable. */
interface RefundOwed {
  readonly groupId: string;
  readonly amount: string;
}

function owedOf(row: ConsumerIntentRow): RefundOwed | null {
  const owed = (row.funding as { refundOwed?: RefundOwed } | null)?.refundOwed;
  return owed !== undefined && typeof owed.amount === 'string' ? owed : null;
}

/** An owed refund (no REFUND_PENDING state) not paid back yet. */
export function isOwedRefundOpen(row: ConsumerIntentRow): boolean {
  const refund = row.refund as RefundRecord | null;
  return row.state !== 'REFUND_PENDING' && owedOf(row) !== null && refund?.refundedAt === undefined;
}

function refundOf(row: ConsumerIntentRow, rails?: ConsumerRails): RefundRecord {
  const refund = row.refund as RefundRecord | null;
  if (refund !== null && typeof refund.amount === 'string' && typeof refund.to === 'string')
    return refund;
  const owed = owedOf(row);
  const payer = (row.funding as { payer?: unknown } | null)?.payer;
  if (owed !== null && rails !== undefined && typeof payer === 'string') {
    return {
      amount: owed.amount,
      to: payer,
      network: rails.funding.network,
      asset: rails.funding.token.toLowerCase(),
      groupIds: [owed.groupId],
    };
  }
  throw new Error(`intent ${row.intentId} is ${row.state} without a refund record`);
}

/** Saves the refund's progress; the intent must still be in the state it was read in. */
async function saveRefund(deps: RefundDeps, row: ConsumerIntentRow, refund: RefundRecord) {
  const saved = await updateConsumerIntent(
    deps.db,
    row.intentId,
    row.state,
    { refund: { ...refund } },
    deps.now(),
  );
  if (saved === null) throw new Error(`intent ${row.intentId} left ${row.state}`);
  return saved;
}

/** REFUND (paid) and REFUND_PENDING → REFUNDED, one transaction. */
async function finishRefund(deps: RefundDeps, intentId: string, payment: ChainPayment) {
  await withTransaction(deps.db, async (client) => {
    const row = await getConsumerIntent(client, intentId, { forUpdate: true });
    if (row === null || (row.state !== 'REFUND_PENDING' && !isOwedRefundOpen(row))) return;
    const refund = refundOf(row, deps.rails);
    const groupId = await postRefund(client, {
      stage: 'PAID',
      asset: assetId(deps.rails.funding.network, deps.rails.funding.token),
      amountAtomic: BigInt(refund.amount),
      policyId: row.policyId,
      intentRef: intentId,
      idempotencyKey: `refund-paid:${intentId}`,
    });
    const paid = {
      ...refund,
      txHash: payment.txHash,
      blockNumber: payment.blockNumber.toString(),
      groupIds: [...refund.groupIds.filter((id) => id !== groupId), groupId],
      refundedAt: deps.now().toISOString(),
    };
    if (row.state === 'REFUND_PENDING') {
      await transitionConsumerIntent(client, intentId, 'REFUND_PENDING', 'REFUNDED', {
        now: deps.now(),
        reason: carriedReason(row),
        changes: { refund: paid },
      });
    } else {
      // An owed refund of an intent that keeps its state: only the record says it was paid.
      await updateConsumerIntent(client, intentId, row.state, { refund: paid }, deps.now());
    }
  });
}

/** Where the chain already shows this intent's refund, if it does. */
async function refundOnChain(
  deps: RefundDeps,
  row: ConsumerIntentRow,
  refund: RefundRecord,
  nonce: Hex,
): Promise<ChainPayment | null> {
  const rail = deps.rails.funding;
  const expected = { from: rail.treasury, to: refund.to, value: BigInt(refund.amount), nonce };
  if (refund.txHash !== undefined) {
    const known = await confirmedTransfer(rail, refund.txHash as Hex, expected);
    if (known !== null) return known;
  }
  const used = await authorizationState(railClient(rail), rail.token, rail.treasury, nonce);
  if (!used) return null;
  const use = await authorizationUse(rail, rail.treasury, nonce, BigInt(refund.fromBlock ?? '0'));
  const confirmed = use ? await confirmedTransfer(rail, use.txHash, expected) : null;
  if (confirmed === null)
    throw new Error(
      `refund nonce of ${row.intentId} is used by a transaction that is not its refund`,
    );
  return confirmed;
}

async function sendRefund(
  deps: RefundDeps,
  row: ConsumerIntentRow,
  refund: RefundRecord,
  nonce: Hex,
) {
  const rail = deps.rails.funding;
  const client = railClient(rail);
  const nowSeconds = BigInt(Math.floor(deps.now().getTime() / 1000));
  const recorded = refund.validBefore === undefined ? null : BigInt(refund.validBefore);
  const validBefore =
    recorded !== null && recorded > nowSeconds + 60n
      ? recorded
      : nowSeconds + REFUND_VALIDITY_SECONDS;
  const fromBlock = refund.fromBlock ?? (await client.getBlockNumber()).toString();
  let saved = await saveRefund(deps, row, {
    ...refund,
    nonce,
    validBefore: validBefore.toString(),
    fromBlock,
  });
  const value = BigInt(refund.amount);
  const signature = await deps.signer.signRefundAuthorization({
    chainId: rail.chainId,
    token: rail.token,
    name: rail.name,
    version: rail.version,
    to: refund.to as Address,
    value,
    validBefore,
    nonce,
  });
  const { r, s, yParity } = parseSignature(signature);
  const { request } = await client.simulateContract({
    address: rail.token,
    abi: TRANSFER_WITH_AUTHORIZATION,
    functionName: 'transferWithAuthorization',
    args: [rail.treasury, refund.to as Address, value, 0n, validBefore, nonce, 27 + yParity, r, s],
    account: deps.relayer.account,
  });
  const txHash = await deps.relayer.writeContract(request);
  saved = await saveRefund(deps, saved, { ...refundOf(saved, deps.rails), txHash });
  await client.waitForTransactionReceipt({ hash: txHash, timeout: RECEIPT_WAIT_MS });
  return refundOnChain(deps, saved, refundOf(saved, deps.rails), nonce);
}

/** Moves one claimed REFUND_PENDING intent to REFUNDED when its refund is (or gets) on chain. */
export async function advanceRefund(deps: RefundDeps, intentId: string): Promise<void> {
  const row = await getConsumerIntent(deps.db, intentId);
  if (row === null || (row.state !== 'REFUND_PENDING' && !isOwedRefundOpen(row))) return;
  const refund = refundOf(row, deps.rails);
  const nonce = refundNonce(intentId);
  const onChain =
    (await refundOnChain(deps, row, refund, nonce)) ?? (await sendRefund(deps, row, refund, nonce));
  if (onChain === null) throw new Error(`the refund of ${intentId} did not confirm yet`);
  await finishRefund(deps, intentId, onChain);
  deps.log.info({ intentId, txHash: onChain.txHash }, 'consumer intent refunded on chain');
}
