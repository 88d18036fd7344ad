// The settlement leg once the chain shows the merchant was paid, one transaction per step, each
// replayable from what the previous one recorded (so a restart finishes a half-done purchase):
// PROVIDER_PAYMENT_PENDING → PROVIDER_PAID with the SETTLEMENT group (Dr PROVIDER_SETTLEMENT / Cr
// TREASURY, the cost the chain's Transfer moved), the tx hash and block, and the merchant's answer;
// → PROVIDER_ACKNOWLEDGED (the answer is the merchant's word: `providerAttested`, never "verified");
// → DELIVERY_PENDING with the cross-rail RECOGNITION pair (fee and spread from the quote).
import { STATE_REASON, stateReason } from '../../../../core/consumer/reasons';
import { type Db, type DbPool, withTransaction } from '../../../../platform/db';
import type { ConsumerRails } from '../../../kit';
import { assetId, postCrossRailRecognition, postSettlement } from '../../../ledger';
import { type ConsumerIntentRow, getConsumerIntent } from '../store';
import { transitionConsumerIntent } from '../transition';
import type { ChainPayment } from './chainTruth';
import { quoteOf } from './quoteFields';
import { settlementWith } from '../legs';

export interface MerchantAnswerFields {
  readonly domain: string;
  readonly available: boolean;
  readonly checkedAt: string;
}

/** The merchant's `{domain, available, checkedAt}`, or null when its answer is not that. */
export function answerFieldsOf(body: unknown): MerchantAnswerFields | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const { domain, available, checkedAt } = body as Record<string, unknown>;
  if (typeof domain !== 'string' || domain.length === 0 || domain.length > 253) return null;
  if (typeof available !== 'boolean') return null;
  if (typeof checkedAt !== 'string' || !Number.isFinite(Date.parse(checkedAt))) return null;
  return { domain, available, checkedAt };
}

function locked(client: Db, intentId: string) {
  return getConsumerIntent(client, intentId, { forUpdate: true });
}

/** PROVIDER_PAYMENT_PENDING → PROVIDER_PAID with the SETTLEMENT group; null when already moved. */
export async function recordProviderPaid(
  pool: DbPool,
  intentId: string,
  payment: ChainPayment,
  answer: MerchantAnswerFields | null,
  rails: ConsumerRails,
  now: Date,
): Promise<ConsumerIntentRow | null> {
  return withTransaction(pool, async (client) => {
    const row = await locked(client, intentId);
    if (row === null || row.state !== 'PROVIDER_PAYMENT_PENDING') return null;
    const quote = quoteOf(row);
    const groupId = await postSettlement(client, {
      asset: assetId(rails.settlement.network, rails.settlement.token),
      amountAtomic: quote.providerCost,
      provider: row.provider,
      intentRef: intentId,
      policyId: row.policyId,
      idempotencyKey: `settlement:${intentId}`,
    });
    return transitionConsumerIntent(client, intentId, 'PROVIDER_PAYMENT_PENDING', 'PROVIDER_PAID', {
      now,
      changes: {
        settlement: settlementWith(row, {
          txHash: payment.txHash,
          blockNumber: payment.blockNumber.toString(),
          groupId,
          paidAt: now.toISOString(),
        }),
        providerAttested:
          answer === null
            ? null
            : { status: 'ATTESTED', attestedAt: now.toISOString(), fields: { ...answer } },
      },
    });
  });
}

/**
 * PROVIDER_PAID → PROVIDER_ACKNOWLEDGED when the merchant's answer was recorded; without one (the
 * answer did not parse) → MANUAL_REVIEW: the payment is booked, what was bought is unknown.
 */
export async function acknowledge(
  pool: DbPool,
  intentId: string,
  now: Date,
): Promise<ConsumerIntentRow | null> {
  return withTransaction(pool, async (client) => {
    const row = await locked(client, intentId);
    if (row === null || row.state !== 'PROVIDER_PAID') return null;
    if (row.providerAttested === null)
      return transitionConsumerIntent(client, intentId, 'PROVIDER_PAID', 'MANUAL_REVIEW', {
        now,
        reason: stateReason(
          STATE_REASON.PROVIDER_ANSWER_INVALID,
          'paid, but the merchant did not answer {domain, available, checkedAt}',
        ),
      });
    return transitionConsumerIntent(client, intentId, 'PROVIDER_PAID', 'PROVIDER_ACKNOWLEDGED', {
      now,
    });
  });
}

/** The cross-rail RECOGNITION pair of a paid purchase, inside the caller's transaction. */
export function postRecognition(
  client: Db,
  row: ConsumerIntentRow,
  rails: ConsumerRails,
): Promise<{ fundingGroupId: string; settlementGroupId: string }> {
  const quote = quoteOf(row);
  return postCrossRailRecognition(client, {
    funding: {
      asset: assetId(rails.funding.network, rails.funding.token),
      amountAtomic: quote.funding.amount,
    },
    settlement: {
      asset: assetId(rails.settlement.network, rails.settlement.token),
      amountAtomic: quote.providerCost,
    },
    feeAtomic: quote.fee,
    spreadAtomic: quote.spread,
    provider: row.provider,
    policyId: row.policyId,
    intentRef: row.intentId,
    idempotencyKey: `recognition:${row.intentId}`,
  });
}

/** PROVIDER_ACKNOWLEDGED → DELIVERY_PENDING with the RECOGNITION pair; null when already moved. */
export async function recognise(
  pool: DbPool,
  intentId: string,
  rails: ConsumerRails,
  now: Date,
): Promise<ConsumerIntentRow | null> {
  return withTransaction(pool, async (client) => {
    const row = await locked(client, intentId);
    if (row === null || row.state !== 'PROVIDER_ACKNOWLEDGED') return null;
    const pair = await postRecognition(client, row, rails);
    return transitionConsumerIntent(client, intentId, 'PROVIDER_ACKNOWLEDGED', 'DELIVERY_PENDING', {
      now,
      changes: {
        settlement: settlementWith(row, {
          recognitionGroupIds: [pair.fundingGroupId, pair.settlementGroupId],
        }),
      },
    });
  });
}
