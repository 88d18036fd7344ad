// POST /consumer/intents/:intentId/resolve (admin, DECISIONS "Human exits"): the human exits of
// MANUAL_REVIEW, each one transaction with its ledger postings, recording when and the evidence:
//
// A payment in doubt (reason PAYMENT_AMBIGUOUS), only when the chain agrees:
//   PAID      the nonce was used by the transfer to the merchant: SUSPENSE_MOVE clear to
//             PROVIDER_SETTLEMENT, the RECOGNITION pair, → DELIVERY_PENDING: the merchant was paid
//             and the purchase still needs its delivery (the delivery job checks it; for
//             domains.check the registry answers without the merchant; else a human again).
//   NOT_PAID  past validBefore, nonce unused (it can never pay): SUSPENSE_MOVE clear back to
//             TREASURY, REFUND owed, → REFUND_PENDING; the worker sends the refund.
// A paid purchase whose delivery is in doubt (DELIVERY_CONTRADICTED, DELIVERY_UNVERIFIED,
// PROVIDER_ANSWER_INVALID, or any other review of a paid purchase):
//   ACCEPT_DELIVERY  → COMPLETED, the RECOGNITION pair if not yet booked; serviceVerified stays
//                    what the service found.
//   REFUND           the RECOGNITION pair reversed if booked, the merchant's payment borne by the
//                    service (RECOGNITION Dr COST_OF_GOODS / Cr PROVIDER_SETTLEMENT), REFUND owed,
//                    → REFUND_PENDING; the worker sends the refund.
// A review with nothing paid to the merchant takes REFUND only (REFUND owed → REFUND_PENDING).
import { textReason } from '../../../../core/consumer/reasons';
import { isConsumerIntentId } from '../../../../core/canon/id-shapes';
import { AppError } from '../../../../core/errors';
import { type Db, withTransaction } from '../../../../platform/db';
import {
  type ConsumerRails,
  describeActor,
  requireAdmin,
  type SubgraphContext,
} from '../../../kit';
import {
  accountId,
  assetId,
  postProviderCost,
  postSuspenseMove,
  reverseGroup,
} from '../../../ledger';
import { type ConsumerIntentRow, getConsumerIntent } from '../store';
import { transitionConsumerIntent } from '../transition';
import { consumerIntentView, type ConsumerIntentView } from '../view';
import { type ChainFinding, findAuthorization } from './chainTruth';
import { AMBIGUOUS_REASON, oweRefund } from './failures';
import { authorizationToCheck } from './chainFindings';
import { quoteOf } from './quoteFields';
import { postRecognition } from './providerPaid';
import { settlementWith } from '../legs';

export const RESOLUTION_OUTCOMES = ['PAID', 'NOT_PAID', 'ACCEPT_DELIVERY', 'REFUND'] as const;
export type ResolutionOutcome = (typeof RESOLUTION_OUTCOMES)[number];
const MAX_EVIDENCE = 2000;

const NOT_PAID_REASON = 'resolved NOT_PAID: refund owed';

/** What the review was about, as its resolution names it: the code the intent was parked with. */
function reviewedOf(row: ConsumerIntentRow): string {
  return row.stateReasonCode ?? row.stateReason ?? '';
}

type Review = 'PAYMENT_IN_DOUBT' | 'PAID_DELIVERY_IN_DOUBT' | 'NOTHING_PAID';

/** What kind of review the intent is under, which decides the outcomes it may take. */
function reviewOf(row: ConsumerIntentRow): Review {
  if (row.stateReasonCode === AMBIGUOUS_REASON) return 'PAYMENT_IN_DOUBT';
  return row.settlement?.txHash !== undefined ? 'PAID_DELIVERY_IN_DOUBT' : 'NOTHING_PAID';
}

const OUTCOMES_OF: Record<Review, readonly ResolutionOutcome[]> = {
  PAYMENT_IN_DOUBT: ['PAID', 'NOT_PAID'],
  PAID_DELIVERY_IN_DOUBT: ['ACCEPT_DELIVERY', 'REFUND'],
  NOTHING_PAID: ['REFUND'],
};

function resolvable(
  row: ConsumerIntentRow | null,
  intentId: string,
  outcome: ResolutionOutcome,
): ConsumerIntentRow {
  if (row === null) throw new AppError('CONSUMER_INTENT_NOT_FOUND', undefined, { intentId });
  if (row.state !== 'MANUAL_REVIEW')
    throw new AppError('CONSUMER_INTENT_NOT_RESOLVABLE', undefined, {
      state: row.state,
      reason: row.stateReason,
    });
  const allowed = OUTCOMES_OF[reviewOf(row)];
  if (!allowed.includes(outcome))
    throw new AppError(
      'CONSUMER_INTENT_NOT_RESOLVABLE',
      `This review takes ${allowed.join(' or ')}, not ${outcome}.`,
      { state: row.state, reason: row.stateReason, outcomes: [...allowed] },
    );
  return row;
}

function checkInput(outcome: string, evidence: string): ResolutionOutcome {
  if (!(RESOLUTION_OUTCOMES as readonly string[]).includes(outcome))
    throw new AppError('REQUEST_INVALID', `outcome is one of ${RESOLUTION_OUTCOMES.join(', ')}.`, [
      { field: 'outcome', reason: `must be one of ${RESOLUTION_OUTCOMES.join(', ')}` },
    ]);
  if (evidence.trim().length === 0 || evidence.length > MAX_EVIDENCE)
    throw new AppError('REQUEST_INVALID', `evidence is 1 to ${MAX_EVIDENCE} characters.`, [
      { field: 'evidence', reason: `must be 1 to ${MAX_EVIDENCE} characters` },
    ]);
  return outcome as ResolutionOutcome;
}

function settlementAsset(rails: ConsumerRails): string {
  return assetId(rails.settlement.network, rails.settlement.token);
}

/** SUSPENSE_MOVE clear of the parked cost: to the merchant's settlement if paid, back to the float if not. */
async function clearSuspense(
  client: Db,
  row: ConsumerIntentRow,
  rails: ConsumerRails,
  to: 'PROVIDER_SETTLEMENT' | 'TREASURY',
): Promise<void> {
  const asset = settlementAsset(rails);
  await postSuspenseMove(client, {
    direction: 'CLEAR',
    asset,
    amountAtomic: quoteOf(row).providerCost,
    counterAccount:
      to === 'TREASURY'
        ? accountId('TREASURY', asset, 'float')
        : accountId(to, asset, row.provider),
    intentRef: row.intentId,
    policyId: row.policyId,
    idempotencyKey: `suspense-clear:${row.intentId}`,
  });
}

async function settlePaid(
  client: Db,
  ctx: SubgraphContext,
  row: ConsumerIntentRow,
  finding: Extract<ChainFinding, { status: 'PAID' }>,
  resolution: Record<string, unknown>,
): Promise<ConsumerIntentRow | null> {
  const rails = ctx.consumer!;
  await clearSuspense(client, row, rails, 'PROVIDER_SETTLEMENT');
  const pair = await postRecognition(client, row, rails);
  return transitionConsumerIntent(client, row.intentId, 'MANUAL_REVIEW', 'DELIVERY_PENDING', {
    now: ctx.now(),
    reason: textReason(
      `resolved PAID from chain transaction ${finding.txHash}: the delivery is checked next`,
    ),
    changes: {
      resolution,
      deliveryNextAttemptAt: null,
      settlement: settlementWith(row, {
        txHash: finding.txHash,
        blockNumber: finding.blockNumber,
        paidAt: ctx.now().toISOString(),
        recognitionGroupIds: [pair.fundingGroupId, pair.settlementGroupId],
      }),
    },
  });
}

async function settleNotPaid(
  client: Db,
  ctx: SubgraphContext,
  row: ConsumerIntentRow,
  resolution: Record<string, unknown>,
): Promise<ConsumerIntentRow> {
  const rails = ctx.consumer!;
  await clearSuspense(client, row, rails, 'TREASURY');
  return oweRefund(client, row, rails, ctx.now(), { resolution }, textReason(NOT_PAID_REASON));
}

function recognitionGroupIdsOf(row: ConsumerIntentRow): string[] {
  return row.settlement?.recognitionGroupIds ?? [];
}

/** ACCEPT_DELIVERY: the recognition (once) and → COMPLETED. */
async function acceptDelivery(
  client: Db,
  ctx: SubgraphContext,
  row: ConsumerIntentRow,
  resolution: Record<string, unknown>,
): Promise<ConsumerIntentRow | null> {
  let settlement = row.settlement ?? {};
  if (recognitionGroupIdsOf(row).length === 0) {
    const pair = await postRecognition(client, row, ctx.consumer!);
    settlement = settlementWith(row, {
      recognitionGroupIds: [pair.fundingGroupId, pair.settlementGroupId],
    });
  }
  return transitionConsumerIntent(client, row.intentId, 'MANUAL_REVIEW', 'COMPLETED', {
    now: ctx.now(),
    reason: textReason(`resolved ACCEPT_DELIVERY after review (${reviewedOf(row)})`),
    changes: { resolution, settlement },
  });
}

/**
 * REFUND: a paid purchase's recognition is reversed and the merchant's payment is borne by the
 * service (the merchant keeps it; the consumer gets the funding back); then REFUND owed.
 */
async function refundAfterReview(
  client: Db,
  ctx: SubgraphContext,
  row: ConsumerIntentRow,
  resolution: Record<string, unknown>,
): Promise<ConsumerIntentRow> {
  const rails = ctx.consumer!;
  const reviewed = reviewedOf(row);
  if (row.settlement?.txHash !== undefined) {
    for (const groupId of recognitionGroupIdsOf(row))
      await reverseGroup(client, {
        groupId,
        reason: `refunded after review (${reviewed}) of ${row.intentId}`,
        idempotencyKey: `resolve-refund-reversal:${groupId}`,
      });
    await postProviderCost(client, {
      asset: settlementAsset(rails),
      amountAtomic: quoteOf(row).providerCost,
      provider: row.provider,
      intentRef: row.intentId,
      policyId: row.policyId,
      idempotencyKey: `provider-cost:${row.intentId}`,
    });
  }
  return oweRefund(
    client,
    row,
    rails,
    ctx.now(),
    { resolution },
    textReason(`resolved REFUND after review (${reviewed}): refund owed`),
  );
}

/** The chain's word on a payment in doubt, which the outcome must agree with. */
async function chainFindingFor(
  ctx: SubgraphContext,
  row: ConsumerIntentRow,
  outcome: ResolutionOutcome,
): Promise<ChainFinding | null> {
  if (outcome !== 'PAID' && outcome !== 'NOT_PAID') return null;
  const rails = ctx.consumer!;
  const authorization = authorizationToCheck(row, rails);
  if (authorization === null)
    throw new AppError('CONSUMER_INTENT_NOT_RESOLVABLE', 'No signed authorization is recorded.');
  const finding = await findAuthorization(rails.settlement, authorization, ctx.now());
  if (finding.status !== outcome)
    throw new AppError(
      'RESOLUTION_CONTRADICTS_CHAIN',
      `The chain shows ${finding.status}, not ${outcome}; nothing was changed.`,
      { chainFinding: finding },
    );
  return finding;
}

export async function resolveConsumerIntent(
  ctx: SubgraphContext,
  intentId: string,
  outcomeRaw: string,
  evidence: string,
): Promise<ConsumerIntentView> {
  const admin = requireAdmin(ctx);
  const outcome = checkInput(outcomeRaw, evidence);
  const found = isConsumerIntentId(intentId) ? await getConsumerIntent(ctx.db, intentId) : null;
  const row = resolvable(found, intentId, outcome);
  if (ctx.consumer === undefined)
    throw new AppError('PROVIDER_UNAVAILABLE', 'No consumer rails are configured.');
  const finding = await chainFindingFor(ctx, row, outcome);
  const resolution: Record<string, unknown> = {
    outcome,
    evidence,
    ...(finding === null ? {} : { chainFinding: finding }),
    review: row.stateReason,
    resolvedBy: describeActor(admin),
    resolvedAt: ctx.now().toISOString(),
    // An earlier resolution of the same purchase (a payment resolved PAID, then its delivery
    // reviewed) is kept, not overwritten.
    ...(typeof row.resolution?.outcome === 'string' ? { previous: row.resolution } : {}),
  };
  const moved = await withTransaction(ctx.db, async (client) => {
    const locked = resolvable(
      await getConsumerIntent(client, intentId, { forUpdate: true }),
      intentId,
      outcome,
    );
    switch (outcome) {
      case 'PAID':
        return settlePaid(
          client,
          ctx,
          locked,
          finding as Extract<ChainFinding, { status: 'PAID' }>,
          resolution,
        );
      case 'NOT_PAID':
        return settleNotPaid(client, ctx, locked, resolution);
      case 'ACCEPT_DELIVERY':
        return acceptDelivery(client, ctx, locked, resolution);
      case 'REFUND':
        return refundAfterReview(client, ctx, locked, resolution);
    }
  });
  if (moved === null) throw new Error(`intent ${intentId} moved under its row lock`);
  return consumerIntentView(moved);
}
