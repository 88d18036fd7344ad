// How escalations read on the wire: the Escalation an owner sees (with its owner, for the field
// resolvers' access checks) and the public poll body, which withholds the resolving channel. EXPIRED
// reports DENIED with the fail-closed reason.
import { spendIntentMessage, spendIntentTypedDataJson } from '../../../core/canon/intent-hash';
import { AppError } from '../../../core/errors';
import { outcomeOf, reasonOf } from '../../../core/escalations/outcome';
import { validateSpendIntent } from '../../../core/validation/intent';
import type { EscalationRow, EscalationState } from './reads';
import type { Escalation } from './schema';

/** What the poll route answers (DECISIONS "Escalation"): the resolving channel is withheld. */
export interface EscalationPollBody {
  pollRef: string;
  state: EscalationState;
  outcome: 'APPROVED' | 'DENIED' | null;
  reason: string | null;
  intentHash: string;
  policyId: string;
  amount: string;
  createdAt: string;
  expiresAt: string;
  resolvedAt: string | null;
}

export { EXPIRED_REASON, outcomeOf, reasonOf } from '../../../core/escalations/outcome';

export function pollBody(row: EscalationRow): EscalationPollBody {
  return {
    pollRef: row.pollRef,
    state: row.state,
    outcome: outcomeOf(row.state),
    reason: reasonOf(row.state),
    intentHash: row.intentHash,
    policyId: row.policyId,
    amount: row.amountAtomic,
    createdAt: row.createdAt.toISOString(),
    expiresAt: row.expiresAt.toISOString(),
    resolvedAt: row.resolvedAt?.toISOString() ?? null,
  };
}

/** The typed data an owner's wallet signs to approve (the intent as stored, validated at its creation time). */
export function escalationTypedData(
  row: Pick<EscalationRow, 'intent' | 'createdAt'>,
): Record<string, unknown> {
  const validated = validateSpendIntent(row.intent, row.createdAt);
  if (!validated.ok)
    throw new AppError('INTERNAL_ERROR', 'A stored escalated intent no longer validates.');
  return spendIntentTypedDataJson(spendIntentMessage(validated.intent));
}

export type EscalationView = Escalation & { readonly owner: string };

export function escalationView(row: EscalationRow): EscalationView {
  return {
    pollRef: row.pollRef,
    owner: row.owner,
    state: row.state,
    outcome: outcomeOf(row.state),
    reason: reasonOf(row.state),
    intentHash: row.intentHash,
    policyId: row.policyId,
    policyVersion: row.policyVersion,
    decision: row.decision,
    decidingRule: row.decidingRule,
    ruleReason: row.ruleReason,
    amountAtomic: row.amountAtomic,
    recipient: row.recipient,
    intent: row.intent,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    resolvedAt: row.resolvedAt,
    resolvedVia: row.resolvedVia,
    ownerSigned: row.ownerSigned,
    approvalUsed: row.approvalUsedAt !== null,
  };
}
