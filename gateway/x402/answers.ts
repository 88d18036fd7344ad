// The paywall's own answers beside the 402 challenge: the receipt header on a paid answer, the
// 503 of a settlement the chain has not decided, the 503 of a chain that cannot be reached, and
// the 409 of a second payment for an intent another payment already funds.
import type { SettleResponse } from '@x402/core/types';
import { AppError } from '../../core/errors';
import type { FundingTarget, ServicePayment } from '../../subgraphs/ledger';
import type { RestResult } from '../rest/types';
import { encodeSettlementHeader } from './headerCodec';
import { PAYMENT_RESPONSE_HEADER } from './protocol';
import type { SettlementRail } from './rail';

/** A paid answer's settled payment, and the settlement its PAYMENT-RESPONSE header encodes. */
export interface PaidAnswer {
  readonly payment: ServicePayment;
  readonly settlement: SettleResponse;
}

/**
 * What each paid answer withReceipt made was paid with, for the receipt extension: it signs from
 * these instead of decoding the header again and reading the payment back from the database.
 */
const paidAnswers = new WeakMap<RestResult, PaidAnswer>();

/** What a paid answer was paid with (withReceipt), or undefined for any other result. */
export function paidAnswerOf(result: RestResult): PaidAnswer | undefined {
  return paidAnswers.get(result);
}

/** The answer with PAYMENT-RESPONSE naming the transaction that paid. */
export function withReceipt(result: RestResult, payment: ServicePayment): RestResult {
  const receipt: SettleResponse = {
    success: true,
    transaction: payment.txHash ?? '',
    network: payment.network as SettleResponse['network'],
    payer: payment.payer,
  };
  const answer: RestResult = {
    ...result,
    headers: {
      ...(result.headers ?? {}),
      [PAYMENT_RESPONSE_HEADER]: encodeSettlementHeader(receipt),
      'access-control-expose-headers': 'PAYMENT-RESPONSE',
      'cache-control': 'private, no-store',
    },
  };
  if (payment.settledAt !== null) paidAnswers.set(answer, { payment, settlement: receipt });
  return answer;
}

/** Seconds a payer is asked to wait (Retry-After) while the settlement chain is unreachable. */
export const CHAIN_RETRY_AFTER_SECONDS = 2;

/**
 * 503 SERVICE_UNAVAILABLE (after `free`, which releases the claim) when the settlement chain's RPC
 * does not answer: verification was refused while the node could not be reached, so the refusal
 * says nothing about the payment and nothing was sent; the payer presents the same payment again
 * later rather than signing a new one for a fresh 402.
 */
export async function unlessChainUnreachable(
  rail: Pick<SettlementRail, 'latestBlockNumber'>,
  free: () => Promise<unknown>,
): Promise<void> {
  const answers = await rail.latestBlockNumber().then(
    () => true,
    () => false,
  );
  if (answers) return;
  await free();
  throw chainUnreachable();
}

/** 503 SERVICE_UNAVAILABLE: the chain could not be reached and nothing was sent; present the same payment again. */
export function chainUnreachable(): AppError {
  return new AppError(
    'SERVICE_UNAVAILABLE',
    'The payment chain is not reachable; present the same payment again shortly.',
    { dependency: 'chain', retryAfterSeconds: CHAIN_RETRY_AFTER_SECONDS },
  );
}

/** 503: the chain has not decided. `validBefore` bounds the wait: after it an unused authorization is refused. */
export function settlementPending(payment: ServicePayment): AppError {
  const reverted = payment.txHash === null && payment.unpaidTxHash !== null;
  const message = reverted
    ? 'The settlement transaction reverted, but the signed authorization can still be used on chain until validBefore. ' +
      'Present the same payment header again: the call runs if it is paid, it is refused once it can no longer be, ' +
      'and it is never charged twice. Do not sign a new one for this call.'
    : payment.txHash === null
      ? 'The settlement was sent, but its answer was lost: the chain may still take it. Present the same payment header again: ' +
        'the call runs once it is paid, it is refused once the authorization can no longer be used (validBefore), ' +
        'and it is never charged twice. Do not sign a new one for this call.'
      : 'The payment was sent on chain and is not confirmed yet. Present the same payment header again; it will not be charged twice.';
  return new AppError('PAYMENT_SETTLEMENT_PENDING', message, {
    paymentId: payment.paymentId,
    transaction: payment.txHash,
    ...(reverted ? { revertedTransaction: payment.unpaidTxHash } : {}),
    validBefore: payment.validBefore.toString(),
    network: payment.network,
    retryAfterSeconds: 5,
  });
}

/** 409: another authorization funds (or is funding) this intent; this one is never settled. */
export function alreadyFunded(
  funding: FundingTarget | undefined,
  fundedBy: ServicePayment | null,
): AppError {
  return new AppError(
    'INTENT_NOT_FUNDABLE',
    'Another payment funds this intent (or is being settled for it); this one was not charged.',
    {
      intentId: funding?.intentRef ?? null,
      paymentId: fundedBy?.paymentId ?? null,
      paymentState: fundedBy?.state ?? null,
    },
  );
}
