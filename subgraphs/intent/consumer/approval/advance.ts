// Moving an intent that waits for its owner once the escalation is decided, whoever decided it
// (the approve route, the dashboard, a channel reply, the timeout). The escalation's state is read
// through the policy subgraph's published `policy.escalation_outcome`. Approved: the same
// SpendIntent is decided again (the owner's unused approval turns the ESCALATE into a PASS and the
// preflight reserves) → APPROVED → AWAITING_FUNDING, unless the quote has expired meanwhile
// (→ EXPIRED). Denied, or expired without a decision (default deny): → BLOCKED.
import { STATE_REASON, stateReason } from '../../../../core/consumer/reasons';
import { isQuoteFresh } from '../../../../core/consumer/quote';
import type { Db } from '../../../../platform/db';
import { applyOutcome, type ConsumerDeps, runPolicyCheck } from '../policyCheck';
import { type ConsumerIntentRow } from '../store';
import { transitionConsumerIntent } from '../transition';

export type EscalationOutcomeState = 'PENDING' | 'APPROVED' | 'DENIED' | 'EXPIRED';

export async function escalationOutcome(
  db: Db,
  pollRef: string,
  now: Date,
): Promise<EscalationOutcomeState | null> {
  const result = await db.query<{ state: EscalationOutcomeState }>(
    'SELECT state FROM policy.escalation_outcome($1, $2)',
    [pollRef, now],
  );
  return result.rows[0]?.state ?? null;
}

/** Where a decided escalation leaves a denied intent, as its state reason. */
const BLOCK_REASON = {
  DENIED: STATE_REASON.ESCALATION_DENIED,
  EXPIRED: STATE_REASON.ESCALATION_EXPIRED_DEFAULT_DENY,
} as const;

/**
 * Advances an AWAITING_APPROVAL intent whose escalation is decided; the intent as it stands after
 * (unchanged while the escalation is pending; null when another writer moved it first).
 */
export async function advanceApproval(
  deps: ConsumerDeps,
  row: ConsumerIntentRow,
): Promise<ConsumerIntentRow | null> {
  if (row.state !== 'AWAITING_APPROVAL' || row.pollRef === null) return row;
  const now = deps.now();
  const state = await escalationOutcome(deps.db, row.pollRef, now);
  if (state === null || state === 'PENDING') return row;
  if (state === 'DENIED' || state === 'EXPIRED')
    return transitionConsumerIntent(deps.db, row.intentId, 'AWAITING_APPROVAL', 'BLOCKED', {
      now,
      reason: stateReason(BLOCK_REASON[state]),
    });
  if (row.quoteExpiresAt === null || !isQuoteFresh(row.quoteExpiresAt, now))
    return transitionConsumerIntent(deps.db, row.intentId, 'AWAITING_APPROVAL', 'EXPIRED', {
      now,
      reason: stateReason(STATE_REASON.QUOTE_EXPIRED),
    });
  const outcome = await runPolicyCheck(deps, row.spendIntent!);
  return applyOutcome(deps, row, 'AWAITING_APPROVAL', outcome);
}
