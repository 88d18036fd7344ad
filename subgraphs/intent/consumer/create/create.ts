// POST /consumer/intents (createConsumerIntent): a consumer session asks for a capability. In
// order: the body (400), an earlier intent with the same idempotency key on this policy (answered
// again, nothing new asked or decided), the catalog gate (404/409), the merchant's own 402 (502),
// all before anything is stored; then the intent is stored CREATED → QUOTED → POLICY_CHECKING in
// one transaction, decided by the preflight path, and moved to AWAITING_FUNDING,
// AWAITING_APPROVAL or BLOCKED (policyCheck.ts).
import { STATE_REASON, stateReason } from '../../../../core/consumer/reasons';
import { newConsumerIntentId, newQuoteId } from '../../../../core/canon/ids';
import { RailScalingError } from '../../../../core/consumer/quote';
import { AppError } from '../../../../core/errors';
import { MAX_WIRE_AMOUNT_DIGITS } from '../../../../core/money/amount';
import { validateSpendIntent } from '../../../../core/validation/intent';
import { withTransaction } from '../../../../platform/db';
import { requireActor, type SubgraphContext } from '../../../kit';
import { applyOutcome, type ConsumerDeps, nextActionOf, runPolicyCheck } from '../policyCheck';
import { intentByIdempotencyKey } from '../reads';
import { type ConsumerIntentRow, getConsumerIntent, insertConsumerIntent } from '../store';
import { transitionConsumerIntent } from '../transition';
import { consumerIntentView, type ConsumerIntentView } from '../view';
import { type ConsumerIntentRequest, parseConsumerIntentRequest } from './body';
import { fetchMerchantChallenge } from './merchantQuote';
import { merchantRouteOf, merchantUrl } from './merchantRoutes';
import { buildQuote, buildSpendIntent, type ConsumerQuote, type QuoteInput } from './quoteIntent';
import { type CapabilityTerms, intentPolicy, purchasableTerms } from './terms';

export interface ConsumerIntentAnswer {
  /** False when the idempotency key named an intent created earlier (REST: 200 instead of 201). */
  readonly created: boolean;
  readonly intent: ConsumerIntentView;
  readonly quote: Record<string, unknown> | null;
  readonly decision: Record<string, unknown> | null;
  readonly nextAction: 'FUND' | 'AWAIT_APPROVAL' | 'NONE';
  readonly fundingRequest: Record<string, unknown> | null;
}

/** The create answer for an intent as it stands. */
export function answerOf(row: ConsumerIntentRow, created: boolean): ConsumerIntentAnswer {
  const nextAction = nextActionOf(row.state);
  const funding = row.quote?.funding;
  return {
    created,
    intent: consumerIntentView(row),
    quote: row.quote,
    decision: row.decision,
    nextAction,
    fundingRequest:
      nextAction === 'FUND' && funding !== undefined
        ? {
            method: 'POST',
            path: `/consumer/intents/${row.intentId}/fund`,
            network: funding.network,
            asset: funding.asset,
            amount: funding.amount,
            payTo: funding.payTo,
          }
        : null,
  };
}

interface Quoted {
  readonly terms: CapabilityTerms;
  readonly quote: ConsumerQuote;
  readonly url: string;
  readonly summary: string;
  /** The asset the consumer will pay in (the funding rail's token). */
  readonly fundingAsset: { readonly network: string; readonly token: string };
}

/** The catalog gate, then the merchant's price: nothing stored, PROVIDER_UNAVAILABLE when it cannot be quoted. */
async function quoteRequest(ctx: SubgraphContext, request: ConsumerIntentRequest): Promise<Quoted> {
  const terms = await purchasableTerms(ctx.db, request.capability);
  const rails = ctx.consumer;
  const route = merchantRouteOf(request.capability);
  const baseUrl = rails?.providers[terms.providerId];
  if (rails === undefined || route === null || baseUrl === undefined)
    throw new AppError(
      'PROVIDER_UNAVAILABLE',
      `No merchant is configured for ${request.capability} on this instance.`,
    );
  const params = request.params as Record<string, string>;
  const url = merchantUrl(baseUrl, route, params);
  const challenge = await fetchMerchantChallenge(url, route.method, rails.settlement);
  const quotedAt = new Date(Math.floor(ctx.now().getTime() / 1000) * 1000);
  const quote = quoteMerchantPrice({
    quoteId: newQuoteId(),
    quotedAt,
    capability: request.capability,
    provider: terms.providerId,
    feeBps: terms.feeBps,
    rails,
    url,
    method: route.method,
    challenge,
  });
  const fundingAsset = { network: rails.funding.network, token: rails.funding.token };
  return { terms, quote, url, summary: route.summary(params), fundingAsset };
}

/**
 * The quote of the merchant's price. A price the service cannot quote (beyond uint256, inexact
 * across the rails' decimals, or a funding amount beyond the wire's 30 digits) is a malformed 402:
 * the merchant's fault, 502 PROVIDER_UNAVAILABLE, never a 500; nothing is stored.
 */
function quoteMerchantPrice(input: QuoteInput): ConsumerQuote {
  let quote: ConsumerQuote;
  try {
    quote = buildQuote(input);
  } catch (error) {
    if (!(error instanceof RangeError || error instanceof RailScalingError)) throw error;
    throw new AppError(
      'PROVIDER_UNAVAILABLE',
      `The merchant’s 402 asks an amount the service cannot quote: ${error.message}.`,
    );
  }
  if (quote.fundingAtomic.toString().length > MAX_WIRE_AMOUNT_DIGITS)
    throw new AppError(
      'PROVIDER_UNAVAILABLE',
      `The merchant’s 402 asks an amount whose funding exceeds ${MAX_WIRE_AMOUNT_DIGITS} digits.`,
    );
  return quote;
}

/** Stores the quoted intent and its SpendIntent (CREATED → QUOTED → POLICY_CHECKING), or finds the key's intent. */
async function storeQuoted(
  ctx: SubgraphContext,
  actor: { address: string; policyId: string },
  request: ConsumerIntentRequest,
  quoted: Quoted,
): Promise<{ row: ConsumerIntentRow; created: boolean }> {
  const intentId = newConsumerIntentId();
  const now = ctx.now();
  const wire = buildSpendIntent({
    intentId,
    policy: await intentPolicy(ctx.db, actor.policyId),
    wallet: actor.address,
    category: quoted.terms.category,
    provider: quoted.terms.providerId,
    capability: request.capability,
    params: request.params,
    summary: quoted.summary,
    recipient: (quoted.quote.json.merchant as { payTo: string }).payTo,
    fundingAtomic: quoted.quote.fundingAtomic,
    fundingAsset: quoted.fundingAsset,
    quoteExpiresAt: quoted.quote.expiresAt,
    endpoint: quoted.url,
  });
  const validated = validateSpendIntent(wire, now);
  if (!validated.ok)
    throw new AppError('INTERNAL_ERROR', 'The SpendIntent built from the quote does not validate.');
  return withTransaction(ctx.db, async (client) => {
    const inserted = await insertConsumerIntent(client, {
      intentId,
      policyId: actor.policyId,
      wallet: actor.address,
      capability: request.capability,
      provider: quoted.terms.providerId,
      category: quoted.terms.category,
      params: request.params,
      idempotencyKey: request.idempotencyKey,
      now,
    });
    if (!inserted.created) return inserted;
    const changes = {
      quote: quoted.quote.json,
      quoteExpiresAt: quoted.quote.expiresAt,
      fundingAmount: quoted.quote.fundingAtomic,
    };
    await transitionConsumerIntent(client, intentId, 'CREATED', 'QUOTED', { now, changes });
    const checking = await transitionConsumerIntent(client, intentId, 'QUOTED', 'POLICY_CHECKING', {
      now,
      changes: { spendIntent: { ...wire }, intentHash: validated.intent.intentHash },
    });
    return { row: checking!, created: true };
  });
}

/**
 * Decides a POLICY_CHECKING intent; a preflight that fails leaves it FAILED_BEFORE_PAYMENT. Also
 * what the worker runs for an intent a crash left in POLICY_CHECKING (the preflight answers a
 * repeated approved intent with its first approval and never reserves twice).
 */
export async function decidePolicyCheck(
  ctx: ConsumerDeps,
  row: ConsumerIntentRow,
): Promise<ConsumerIntentRow> {
  let outcome;
  try {
    outcome = await runPolicyCheck(ctx, row.spendIntent!);
  } catch (error) {
    await transitionConsumerIntent(
      ctx.db,
      row.intentId,
      'POLICY_CHECKING',
      'FAILED_BEFORE_PAYMENT',
      {
        now: ctx.now(),
        reason: stateReason(error instanceof AppError ? error.code : STATE_REASON.INTERNAL_ERROR),
      },
    );
    throw error;
  }
  const moved = await applyOutcome(ctx, row, 'POLICY_CHECKING', outcome);
  return moved ?? (await getConsumerIntent(ctx.db, row.intentId))!;
}

export async function createConsumerIntent(
  ctx: SubgraphContext,
  raw: unknown,
): Promise<ConsumerIntentAnswer> {
  const actor = requireActor(ctx, ['consumer']);
  const request = parseConsumerIntentRequest(raw);
  if (request.idempotencyKey !== null) {
    const earlier = await intentByIdempotencyKey(ctx.db, actor.policyId, request.idempotencyKey);
    if (earlier !== null) return answerOf(earlier, false);
  }
  const quoted = await quoteRequest(ctx, request);
  const stored = await storeQuoted(ctx, actor, request, quoted);
  if (!stored.created) return answerOf(stored.row, false);
  return answerOf(await decidePolicyCheck(ctx, stored.row), true);
}
