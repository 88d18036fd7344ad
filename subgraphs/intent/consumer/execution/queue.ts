// POST /consumer/intents/:intentId/execute: the intent's consumer session queues a FUNDED intent
// for the execution worker (FUNDED → EXECUTION_QUEUED, compare-and-set). A repeat while queued
// or later changes nothing and answers the intent as it is; an unfunded intent is refused. Another
// policy's intent, or an unknown id, is CONSUMER_INTENT_NOT_FOUND (the same answer).
import { isConsumerIntentId } from '../../../../core/canon/id-shapes';
import {
  type ConsumerIntentState,
  STATES_BEFORE_FUNDING,
} from '../../../../core/consumer/lifecycle';
import { AppError } from '../../../../core/errors';
import { requireActor, type SubgraphContext } from '../../../kit';
import { type ConsumerIntentRow, getConsumerIntent } from '../store';
import { transitionConsumerIntent } from '../transition';
import { consumerIntentView, type ConsumerIntentView } from '../view';

/** States before funding (and the ends reached there): nothing to execute. */
const NOT_EXECUTABLE: ReadonlySet<ConsumerIntentState> = new Set<ConsumerIntentState>([
  ...STATES_BEFORE_FUNDING,
  'BLOCKED',
  'EXPIRED',
  'CANCELLED',
]);

export async function sessionIntent(
  ctx: SubgraphContext,
  intentId: string,
): Promise<ConsumerIntentRow> {
  const actor = requireActor(ctx, ['consumer']);
  const row = isConsumerIntentId(intentId) ? await getConsumerIntent(ctx.db, intentId) : null;
  if (row === null || row.policyId !== actor.policyId)
    throw new AppError('CONSUMER_INTENT_NOT_FOUND', undefined, { intentId });
  return row;
}

export async function queueExecution(
  ctx: SubgraphContext,
  intentId: string,
): Promise<ConsumerIntentView> {
  let row = await sessionIntent(ctx, intentId);
  if (row.state === 'FUNDED') {
    const queued = await transitionConsumerIntent(ctx.db, intentId, 'FUNDED', 'EXECUTION_QUEUED', {
      now: ctx.now(),
    });
    if (queued !== null) return consumerIntentView(queued);
    // Another call queued it (or a reorg moved it) first: answer what it is now.
    row = (await getConsumerIntent(ctx.db, intentId)) ?? row;
  }
  if (NOT_EXECUTABLE.has(row.state))
    throw new AppError('CONSUMER_INTENT_NOT_EXECUTABLE', undefined, { state: row.state });
  return consumerIntentView(row);
}
