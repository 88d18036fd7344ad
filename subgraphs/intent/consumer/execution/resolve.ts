// POST /consumer/intents/:intentId/resolve (admin): settles an ambiguous payment either way, only
// from MANUAL_REVIEW with reason PAYMENT_AMBIGUOUS, and only when the chain agrees. PAID (the
// nonce was used by the transfer to the merchant): SUSPENSE_MOVE clear to PROVIDER_SETTLEMENT, the
// recognition pair, → COMPLETED (the merchant was paid; delivery is verified independently
// later). NOT_PAID (past validBefore, nonce unused: it can never pay): SUSPENSE_MOVE clear back to
// TREASURY, REFUND owed, → REFUND_PENDING; the worker sends the refund. One transaction each.
import { isConsumerIntentId } from '../../../../core/canon/id-shapes';
import { AppError } from '../../../../core/errors';
import { type Db, withTransaction } from '../../../../platform/db';
import { describeActor, requireAdmin, type SubgraphContext } from '../../../kit';
import { accountId, assetId, postSuspenseMove } from '../../../ledger';
import { type ConsumerIntentRow, getConsumerIntent, transitionConsumerIntent } from '../store';
import { consumerIntentView, type ConsumerIntentView } from '../view';
import { type ChainFinding, findAuthorization } from './chainTruth';
import { AMBIGUOUS_REASON, oweRefund } from './failures';
import { authorizationToCheck } from './reconciler';
import { quoteOf } from './quoteFields';
import { postRecognition } from './settlement';

export type ResolutionOutcome = 'PAID' | 'NOT_PAID';
const MAX_EVIDENCE = 2000;

function resolvable(row: ConsumerIntentRow | null, intentId: string): ConsumerIntentRow {
  if (row === null) throw new AppError('CONSUMER_INTENT_NOT_FOUND', undefined, { intentId });
  const ambiguous =
    row.state === 'MANUAL_REVIEW' && (row.stateReason ?? '').startsWith(AMBIGUOUS_REASON);
  if (!ambiguous)
    throw new AppError('CONSUMER_INTENT_NOT_RESOLVABLE', undefined, {
      state: row.state,
      reason: row.stateReason,
    });
  return row;
}

function checkInput(outcome: string, evidence: string): ResolutionOutcome {
  if (outcome !== 'PAID' && outcome !== 'NOT_PAID')
    throw new AppError('REQUEST_INVALID', 'outcome is PAID or NOT_PAID.', [
      { field: 'outcome', reason: 'must be PAID or NOT_PAID' },
    ]);
  if (evidence.trim().length === 0 || evidence.length > MAX_EVIDENCE)
    throw new AppError('REQUEST_INVALID', `evidence is 1 to ${MAX_EVIDENCE} characters.`, [
      { field: 'evidence', reason: `must be 1 to ${MAX_EVIDENCE} characters` },
    ]);
  return outcome;
}

async function settlePaid(
  client: Db,
  ctx: SubgraphContext,
  row: ConsumerIntentRow,
  finding: Extract<ChainFinding, { status: 'PAID' }>,
  resolution: Record<string, unknown>,
): Promise<ConsumerIntentRow | null> {
  const rails = ctx.consumer!;
  const asset = assetId(rails.settlement.network, rails.settlement.token);
  await postSuspenseMove(client, {
    direction: 'CLEAR',
    asset,
    amountAtomic: quoteOf(row).providerCost,
    counterAccount: accountId('PROVIDER_SETTLEMENT', asset, row.provider),
    intentRef: row.intentId,
    policyId: row.policyId,
    idempotencyKey: `suspense-clear:${row.intentId}`,
  });
  await postRecognition(client, row, rails);
  return transitionConsumerIntent(client, row.intentId, 'MANUAL_REVIEW', 'COMPLETED', {
    now: ctx.now(),
    reason: `resolved PAID from chain transaction ${finding.txHash}`,
    changes: {
      resolution,
      settlement: {
        ...(row.settlement ?? {}),
        txHash: finding.txHash,
        blockNumber: finding.blockNumber,
        paidAt: ctx.now().toISOString(),
      },
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
  const asset = assetId(rails.settlement.network, rails.settlement.token);
  await postSuspenseMove(client, {
    direction: 'CLEAR',
    asset,
    amountAtomic: quoteOf(row).providerCost,
    counterAccount: accountId('TREASURY', asset, 'float'),
    intentRef: row.intentId,
    policyId: row.policyId,
    idempotencyKey: `suspense-clear:${row.intentId}`,
  });
  return oweRefund(
    client,
    { ...row, stateReason: 'resolved NOT_PAID: refund owed' },
    rails,
    ctx.now(),
    {
      resolution,
    },
  );
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
  const row = resolvable(found, intentId);
  const rails = ctx.consumer;
  if (rails === undefined)
    throw new AppError('PROVIDER_UNAVAILABLE', 'No consumer rails are configured.');
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
  const resolution = {
    outcome,
    evidence,
    chainFinding: finding,
    resolvedBy: describeActor(admin),
    resolvedAt: ctx.now().toISOString(),
  };
  const moved = await withTransaction(ctx.db, async (client) => {
    const locked = resolvable(
      await getConsumerIntent(client, intentId, { forUpdate: true }),
      intentId,
    );
    return finding.status === 'PAID'
      ? settlePaid(client, ctx, locked, finding, resolution)
      : settleNotPaid(client, ctx, locked, resolution);
  });
  if (moved === null) throw new Error(`intent ${intentId} moved under its row lock`);
  return consumerIntentView(moved);
}
