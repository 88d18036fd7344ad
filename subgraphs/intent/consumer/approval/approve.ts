// POST /consumer/intents/:intentId/approve (approveConsumerIntent): the policy's owner, in their
// owner session, decides an intent waiting for approval. The intentHash they saw must still be the
// intent's (409 APPROVAL_HASH_MISMATCH otherwise: they approved something else). The escalation is
// resolved by the policy subgraph's own owner decision (decideAsOwner, the dashboard's path, so
// its events, notices and subscription see it as any decision), then the intent advances as a
// channel reply would advance it (advance.ts). Someone else's intent reads as a missing one.
import { isQuoteFresh } from '../../../../core/consumer/quote';
import { AppError } from '../../../../core/errors';
import { requireActor, type SubgraphContext } from '../../../kit';
import { decideAsOwner, type OwnerDecision } from '../../../policy';
import { answerOf, type ConsumerIntentAnswer } from '../create/create';
import { policyOwner } from '../reads';
import { getConsumerIntent } from '../store';
import { advanceApproval } from './advance';

export interface ApproveInput {
  readonly intentId: string;
  readonly decision: OwnerDecision;
  readonly intentHash: string;
}

export async function approveConsumerIntent(
  ctx: SubgraphContext,
  input: ApproveInput,
): Promise<Omit<ConsumerIntentAnswer, 'created'>> {
  const actor = requireActor(ctx, ['owner']);
  const row = await getConsumerIntent(ctx.db, input.intentId);
  if (row === null || (await policyOwner(ctx.db, row.policyId)) !== actor.address.toLowerCase())
    throw new AppError('CONSUMER_INTENT_NOT_FOUND', undefined, { intentId: input.intentId });
  if (row.intentHash === null || input.intentHash.toLowerCase() !== row.intentHash)
    throw new AppError('APPROVAL_HASH_MISMATCH', undefined, {
      intentId: row.intentId,
      intentHash: row.intentHash,
    });
  if (row.state !== 'AWAITING_APPROVAL' || row.pollRef === null)
    throw new AppError('ILLEGAL_STATE_TRANSITION', 'Only an intent awaiting approval is decided.', {
      from: row.state,
      to: input.decision === 'APPROVE' ? 'APPROVED' : 'BLOCKED',
    });
  if (
    input.decision === 'APPROVE' &&
    (row.quoteExpiresAt === null || !isQuoteFresh(row.quoteExpiresAt, ctx.now()))
  )
    throw new AppError('QUOTE_EXPIRED', undefined, {
      quoteId: row.quote?.quoteId ?? null,
      expiresAt: row.quoteExpiresAt?.toISOString() ?? null,
    });
  try {
    await decideAsOwner(ctx, { pollRef: row.pollRef, decision: input.decision, signature: null });
  } catch (error) {
    // Decided already (a channel reply came first) or expired: the intent follows that outcome.
    if (!(error instanceof AppError && error.code === 'ESCALATION_NOT_PENDING')) throw error;
  }
  const advanced =
    (await advanceApproval(ctx, row)) ?? (await getConsumerIntent(ctx.db, row.intentId))!;
  const { created: _created, ...answer } = answerOf(advanced, false);
  return answer;
}
