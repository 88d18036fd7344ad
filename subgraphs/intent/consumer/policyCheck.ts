// The policy's word on a consumer intent: the stored SpendIntent decided by the preflight path in
// process (the engine under the per-policy lock; a reservation on APPROVED; an escalation opened
// through the policy subgraph's functions on ESCALATED_*), with no x402 fee (it is the service's
// own decision, not an agent's paid call), then the intent moved to match: APPROVED →
// AWAITING_FUNDING, AWAITING_APPROVAL, or BLOCKED. Every move is a compare-and-set: a writer that
// lost the race gets null and re-reads; a repeated preflight of the same approved intent is
// answered with its first approval and never reserves twice.
import {
  isStateReasonCode,
  type StateReason,
  stateReason,
  textReason,
} from '../../../core/consumer/reasons';
import type { ConsumerIntentState } from '../../../core/consumer/lifecycle';
import { AppError } from '../../../core/errors';
import { withTransaction } from '../../../platform/db';
import type { SubgraphContext } from '../../kit';
import { preflightPayment } from '../preflight/dispatch';
import type { Json } from '../views';
import { type ConsumerIntentRow } from './store';
import { transitionConsumerIntent, updateConsumerIntent } from './transition';

/** What deciding needs: the pool, the clock, the key escalation codes are sealed with. */
export type ConsumerDeps = Pick<SubgraphContext, 'db' | 'now' | 'sealingKey'>;

export interface PolicyOutcome {
  readonly kind: 'APPROVED' | 'ESCALATED' | 'BLOCKED';
  /** The preflight response, verbatim. */
  readonly decision: Json;
  readonly reservationId: string | null;
  readonly pollRef: string | null;
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null
    ? (value as Record<string, unknown>)[key]
    : undefined;
}

/** The policy's decision as the state reason: its code, or free text for an unexpected word. */
function decisionReason(decision: Json): StateReason {
  const word = String(decision.decision);
  return isStateReasonCode(word) ? stateReason(word) : textReason(word);
}

/** The preflight response read as an outcome. */
export function outcomeOf(decision: Json): PolicyOutcome {
  const code = String(decision.decision);
  const reservationId = field(decision.reservation, 'reservationId');
  const pollRef = field(decision.escalation, 'pollRef');
  if (code === 'APPROVED' && typeof reservationId === 'string')
    return { kind: 'APPROVED', decision, reservationId, pollRef: null };
  if (code.startsWith('ESCALATED_') && typeof pollRef === 'string')
    return { kind: 'ESCALATED', decision, reservationId: null, pollRef };
  if (code.startsWith('BLOCKED_'))
    return { kind: 'BLOCKED', decision, reservationId: null, pollRef: null };
  throw new AppError('INTERNAL_ERROR', `The preflight answered an unreadable decision ${code}.`);
}

/** Decides the intent's stored SpendIntent (the policyId it names, the policy's current version). */
export async function runPolicyCheck(
  deps: ConsumerDeps,
  spendIntent: Record<string, unknown>,
): Promise<PolicyOutcome> {
  return outcomeOf(await preflightPayment(deps, spendIntent.policyId, spendIntent, null));
}

/**
 * Moves an intent that was in `from` (POLICY_CHECKING or AWAITING_APPROVAL) to where the outcome
 * puts it; null when another writer moved it first. An intent still escalated stays
 * AWAITING_APPROVAL with the escalation the preflight answered.
 */
export async function applyOutcome(
  deps: ConsumerDeps,
  row: ConsumerIntentRow,
  from: Extract<ConsumerIntentState, 'POLICY_CHECKING' | 'AWAITING_APPROVAL'>,
  outcome: PolicyOutcome,
): Promise<ConsumerIntentRow | null> {
  const now = deps.now();
  const decision = outcome.decision;
  switch (outcome.kind) {
    case 'APPROVED':
      return withTransaction(deps.db, async (client) => {
        const approved = await transitionConsumerIntent(client, row.intentId, from, 'APPROVED', {
          now,
          changes: { decision, reservationId: outcome.reservationId },
        });
        if (approved === null) return null;
        return transitionConsumerIntent(client, row.intentId, 'APPROVED', 'AWAITING_FUNDING', {
          now,
        });
      });
    case 'ESCALATED':
      if (from === 'AWAITING_APPROVAL')
        return updateConsumerIntent(
          deps.db,
          row.intentId,
          from,
          { decision, pollRef: outcome.pollRef },
          now,
        );
      return transitionConsumerIntent(deps.db, row.intentId, from, 'AWAITING_APPROVAL', {
        now,
        reason: decisionReason(decision),
        changes: { decision, pollRef: outcome.pollRef },
      });
    case 'BLOCKED':
      return transitionConsumerIntent(deps.db, row.intentId, from, 'BLOCKED', {
        now,
        reason: decisionReason(decision),
        changes: { decision },
      });
  }
}

/** What the caller should do next with an intent in this state. */
export function nextActionOf(state: ConsumerIntentState): 'FUND' | 'AWAIT_APPROVAL' | 'NONE' {
  if (state === 'AWAITING_FUNDING') return 'FUND';
  if (state === 'AWAITING_APPROVAL') return 'AWAIT_APPROVAL';
  return 'NONE';
}
