// Executes one claimed intent from wherever it stands, so a restart after a crash at any step ends
// in a legal state without a second payment:
//   EXECUTION_QUEUED          gates → mint + redeem a capability → pay through the adapter (a
//                             capability redeemed by a crashed run but never signed is dead; a new
//                             one is minted: the signature, not the redeem, is what may pay). A
//                             merchant whose 402 now asks another amount or payee than the quote is
//                             refused before anything is signed: FAILED_BEFORE_PAYMENT with
//                             MERCHANT_AMOUNT_CHANGED / MERCHANT_PAYEE_CHANGED, and the refund.
//   PROVIDER_PAYMENT_PENDING  found by the job, so no run holds it: the signed request may have
//                             left → PAYMENT_AMBIGUOUS (MANUAL_REVIEW + SUSPENSE), never re-sent.
//   PROVIDER_PAID             → PROVIDER_ACKNOWLEDGED → DELIVERY_PENDING from the recorded data.
//   PROVIDER_ACKNOWLEDGED     → DELIVERY_PENDING with the recognition pair.
import {
  codedReason,
  STATE_REASON,
  type StateReason,
  stateReason,
} from '../../../../core/consumer/reasons';
import type { Hex } from 'viem';
import type { PaymentCapability } from '../../../../core/consumer/paymentCapability';
import type { TreasurySigner } from '../../../../platform/chain/treasurySigner';
import { crashPoint, crashPointSoon } from '../../../../platform/crashSeam';
import type { DbPool } from '../../../../platform/db';
import type { Logger } from '../../../../platform/log';
import type { ConsumerRails } from '../../../kit';
import { type ConsumerIntentRow, getConsumerIntent } from '../store';
import { updateConsumerIntent } from '../transition';
import { mintAndRedeem, recordSignedAuthorization } from './capabilities';
import { confirmedTransfer, railClient } from './chainTruth';
import { failBeforePayment, parkAmbiguous } from './failures';
import { runGates } from './gates';
import { payMerchant, type PaymentOutcome } from './paymentAdapter';
import { quoteOf } from './quoteFields';
import { acknowledge, answerFieldsOf, recognise, recordProviderPaid } from './providerPaid';
import { settlementWith } from '../legs';

export interface ExecutionDeps {
  readonly db: DbPool;
  readonly rails: ConsumerRails;
  readonly signer: TreasurySigner;
  readonly log: Logger;
  now(): Date;
  /** How long the whole paid exchange with the merchant may take. */
  readonly requestTimeoutMs: number;
  readonly fetch?: typeof globalThis.fetch;
}

/** Parks an ambiguous payment and tells the operator (the owner gets the outbox event). */
async function ambiguous(
  deps: ExecutionDeps,
  row: ConsumerIntentRow,
  detail: string,
): Promise<void> {
  const parked = await parkAmbiguous(
    deps.db,
    row.intentId,
    row.state,
    detail,
    deps.rails,
    deps.now(),
  );
  if (parked !== null)
    deps.log.warn(
      { intentId: row.intentId, policyId: row.policyId, detail },
      'consumer payment ambiguous: parked in SUSPENSE for review; nothing will be re-sent',
    );
}

async function finishPaid(deps: ExecutionDeps, intentId: string): Promise<void> {
  await acknowledge(deps.db, intentId, deps.now());
  await recognise(deps.db, intentId, deps.rails, deps.now());
}

/** The signer callback: capability check and signature, then the record, then the signature. */
function signerFor(deps: ExecutionDeps, capability: PaymentCapability, fromBlock: bigint) {
  return async (typedData: unknown): Promise<Hex> => {
    const signed = await deps.signer.signTransferAuthorization(capability, typedData, deps.now());
    await recordSignedAuthorization(deps.db, capability, signed.typedData.message, {
      fromBlock: fromBlock.toString(),
      now: deps.now(),
    });
    crashPoint('after-signing');
    return signed.signature;
  };
}

async function markRequestLeft(deps: ExecutionDeps, intentId: string): Promise<void> {
  const row = await getConsumerIntent(deps.db, intentId);
  if (row === null || row.state !== 'PROVIDER_PAYMENT_PENDING') return;
  await updateConsumerIntent(
    deps.db,
    intentId,
    'PROVIDER_PAYMENT_PENDING',
    { settlement: settlementWith(row, { requestLeftAt: deps.now().toISOString() }) },
    deps.now(),
  );
}

/** The named reason of a refusal before payment; the merchant's changed terms come first. */
export function notPaidReason(
  quote: { readonly providerCost: bigint; readonly payTo: string },
  outcome: Extract<PaymentOutcome, { kind: 'NOT_PAID' }>,
): StateReason {
  const asked = outcome.termsAsked;
  if (asked !== undefined && asked.length > 0) {
    const listed = asked.map((terms) => `${terms.amount} to ${terms.payTo}`).join(', ');
    const amountChanged = asked.every((terms) => terms.amount !== quote.providerCost.toString());
    const code = amountChanged ? 'MERCHANT_AMOUNT_CHANGED' : 'MERCHANT_PAYEE_CHANGED';
    const detail = `the merchant asked ${listed} at execution; the quote decided ${quote.providerCost} to ${quote.payTo}`;
    return stateReason(code, detail);
  }
  const status = outcome.status === null ? '' : ` (${outcome.status})`;
  const code = STATE_REASON.MERCHANT_REFUSED_BEFORE_PAYMENT;
  return codedReason(code, `${code}${status}: ${outcome.detail}`);
}

async function settleOutcome(
  deps: ExecutionDeps,
  intentId: string,
  outcome: PaymentOutcome,
): Promise<void> {
  const row = await getConsumerIntent(deps.db, intentId);
  if (row === null) return;
  if (outcome.kind === 'NOT_PAID') {
    if (row.state === 'EXECUTION_QUEUED') {
      await failBeforePayment(
        deps.db,
        intentId,
        'EXECUTION_QUEUED',
        notPaidReason(quoteOf(row), outcome),
        deps.rails,
        deps.now(),
      );
    } else if (row.state === 'PROVIDER_PAYMENT_PENDING') {
      await ambiguous(deps, row, `signed, then the client failed: ${outcome.detail}`);
    }
    return;
  }
  if (row.state !== 'PROVIDER_PAYMENT_PENDING') return;
  if (outcome.kind === 'LOST') {
    await ambiguous(deps, row, `the paid request left and no answer came back: ${outcome.detail}`);
    return;
  }
  const payment = await chainPaymentOf(deps, row, outcome);
  if (payment === null) {
    await ambiguous(
      deps,
      row,
      `the merchant answered ${outcome.status} without a confirmed transfer`,
    );
    return;
  }
  await recordProviderPaid(
    deps.db,
    intentId,
    payment,
    answerFieldsOf(outcome.body),
    deps.rails,
    deps.now(),
  );
  crashPoint('after-paid-recorded');
  await finishPaid(deps, intentId);
}

async function chainPaymentOf(
  deps: ExecutionDeps,
  row: ConsumerIntentRow,
  outcome: Extract<PaymentOutcome, { kind: 'ANSWERED' }>,
) {
  const nonce = row.settlement?.authorization?.nonce;
  const tx = outcome.settle?.transaction ?? '';
  if (outcome.status < 200 || outcome.status >= 300 || outcome.settle?.success !== true)
    return null;
  if (!/^0x[0-9a-fA-F]{64}$/.test(tx) || nonce === undefined) return null;
  const quote = quoteOf(row);
  return confirmedTransfer(deps.rails.settlement, tx as Hex, {
    from: deps.rails.settlement.treasury,
    to: quote.payTo,
    value: quote.providerCost,
    nonce,
  });
}

async function executeQueued(deps: ExecutionDeps, row: ConsumerIntentRow): Promise<void> {
  const quote = quoteOf(row);
  const gates = await runGates(deps.db, row, quote, deps.rails, deps.now());
  if (!gates.ok) {
    await failBeforePayment(
      deps.db,
      row.intentId,
      'EXECUTION_QUEUED',
      stateReason(gates.reason, gates.message),
      deps.rails,
      deps.now(),
    );
    return;
  }
  const fromBlock = await railClient(deps.rails.settlement).getBlockNumber();
  const capability = await mintAndRedeem(deps.db, row.intentId, deps.rails.settlement, deps.now());
  if (capability === null) return;
  crashPoint('after-redeem');
  const outcome = await payMerchant({
    request: { url: quote.url, method: quote.method },
    capability,
    sign: signerFor(deps, capability, fromBlock),
    onPaidRequestLeaving: () => markRequestLeft(deps, row.intentId),
    // The crash test makes the merchant slow, so 300 ms after sending the request is with it.
    onPaidRequestSent: () => crashPointSoon('after-request-left', 300),
    timeoutMs: deps.requestTimeoutMs,
    now: deps.now,
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
  });
  crashPoint('after-answer');
  await settleOutcome(deps, row.intentId, outcome);
}

/** Moves one claimed intent as far as it can go now. */
export async function advanceExecution(deps: ExecutionDeps, intentId: string): Promise<void> {
  const row = await getConsumerIntent(deps.db, intentId);
  if (row === null) return;
  switch (row.state) {
    case 'EXECUTION_QUEUED':
      return executeQueued(deps, row);
    case 'PROVIDER_PAYMENT_PENDING':
      return ambiguous(
        deps,
        row,
        'found after a restart in PROVIDER_PAYMENT_PENDING: the signed request may have left',
      );
    case 'PROVIDER_PAID':
      return finishPaid(deps, intentId);
    case 'PROVIDER_ACKNOWLEDGED':
      await recognise(deps.db, intentId, deps.rails, deps.now());
      return;
    default:
      return;
  }
}
