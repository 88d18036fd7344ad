// What the fund route reads of a consumer intent, for the session of its policy only (another
// policy's intent, or none, is 404 CONSUMER_INTENT_NOT_FOUND so ids cannot be probed):
// - its terms, before any 402: the exact funding amount, the funding rail's token and the funding
//   treasury as payTo, and why it cannot be funded now (not AWAITING_FUNDING: INTENT_NOT_FUNDABLE;
//   quote past its expiry: QUOTE_EXPIRED). A refusal is data, not an error, so the gateway can
//   still replay the recorded answer of a payment this intent already took;
// - the paid call's answer, once the payment is booked (booking.ts): the intent and its funding,
//   or, when the payment arrived for an intent that could no longer be funded, the refusal with
//   the refund owed.
import { isConsumerIntentId } from '../../../../core/canon/id-shapes';
import { AppError } from '../../../../core/errors';
import type { SubgraphContext } from '../../../kit';
import type { FundingLeg } from '../legs';
import { type ConsumerIntentRow, getConsumerIntent } from '../store';
import { consumerIntentView, type ConsumerIntentView } from '../view';

type Json = Record<string, unknown>;

/** The intent, when the caller is its policy's consumer session. */
async function sessionIntent(ctx: SubgraphContext, intentId: string): Promise<ConsumerIntentRow> {
  const { actor } = ctx;
  if (actor.kind === 'anonymous')
    throw new AppError('AUTH_REQUIRED', 'Funding an intent needs its consumer session bearer.');
  const notFound = () => new AppError('CONSUMER_INTENT_NOT_FOUND', undefined, { intentId });
  if (actor.kind !== 'consumer' || !isConsumerIntentId(intentId)) throw notFound();
  const intent = await getConsumerIntent(ctx.db, intentId);
  if (!intent || intent.policyId !== actor.policyId) throw notFound();
  return intent;
}

function refusalOf(intent: ConsumerIntentRow, now: Date): Json | null {
  if (intent.state !== 'AWAITING_FUNDING') {
    return {
      code: 'INTENT_NOT_FUNDABLE',
      message: `The intent is ${intent.state}; only an intent AWAITING_FUNDING takes a payment.`,
      details: { intentId: intent.intentId, state: intent.state },
    };
  }
  if (
    intent.quoteExpiresAt === null ||
    intent.fundingAmount === null ||
    intent.quoteExpiresAt.getTime() <= now.getTime()
  ) {
    return {
      code: 'QUOTE_EXPIRED',
      message: 'The quote has expired; create the intent again for a fresh quote.',
      details: {
        intentId: intent.intentId,
        expiresAt: intent.quoteExpiresAt?.toISOString() ?? null,
      },
    };
  }
  return null;
}

/** The fund route's x402 terms for this intent (see the top of this file). */
export async function consumerFundingTerms(ctx: SubgraphContext, intentId: string): Promise<Json> {
  const intent = await sessionIntent(ctx, intentId);
  const rails = ctx.consumer;
  if (!rails) {
    throw new AppError('INTENT_NOT_FUNDABLE', 'This deployment has no funding rail configured.', {
      intentId,
    });
  }
  return {
    intentId: intent.intentId,
    policyId: intent.policyId,
    network: rails.funding.network,
    asset: rails.funding.token.toLowerCase(),
    payTo: rails.funding.treasury.toLowerCase(),
    amountAtomic: intent.fundingAmount === null ? null : intent.fundingAmount.toString(),
    refusal: refusalOf(intent, ctx.now()),
  };
}

/** The fund route's paid answer, after the paywall booked the payment. */
export async function fundedConsumerIntent(
  ctx: SubgraphContext,
  intentId: string,
): Promise<{ intent: ConsumerIntentView; funding: FundingLeg }> {
  const intent = await sessionIntent(ctx, intentId);
  const funding = intent.funding;
  if (funding === null) {
    throw new AppError('INTENT_NOT_FUNDABLE', 'No payment funded this intent.', {
      intentId,
      state: intent.state,
    });
  }
  if (funding.refundOwed !== undefined) {
    throw new AppError(
      'INTENT_NOT_FUNDABLE',
      'The payment arrived when the intent could no longer be funded; it is booked and owed back to the payer.',
      { intentId, state: intent.state, funding },
    );
  }
  return { intent: consumerIntentView(intent), funding };
}
