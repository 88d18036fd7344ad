// The preflight's side of escalations, inside its own transaction and per-policy lock, through the
// policy subgraph's published SQL functions (the policy subgraph owns escalations: approval
// authority is the owner's). Before the engine runs: an unused owner approval of exactly this
// intentHash. After it: an approval that cleared the escalation is used up; an ESCALATED_*
// decision opens the escalation (or finds the open one) with a fresh single-use reply code, kept
// only as its sha256 plus a sealed copy for the notices still to be delivered.
import type { PoolClient } from 'pg';
import { newEscalationPollRef } from '../../core/canon/ids';
import { type Decision, explainDecision, type OwnerApproval, type PolicySnapshot } from '../../core/engine';
import { AppError } from '../../core/errors';
import { spendIntentToWire, type SpendIntent } from '../../core/validation/intent';
import { seal } from '../../platform/sealing';
import { codeDigest, newReplyCode } from '../policy/escalationCode';

type Db = Pick<PoolClient, 'query'>;

/** The escalation object of the preflight response (DECISIONS "Preflight response"). */
export interface PreflightEscalation {
  pollRef: string;
  expiresAt: string;
  pollUrl: string;
}

export async function ownerApprovalFor(db: Db, intentHash: string): Promise<OwnerApproval | null> {
  const result = await db.query<{ poll_ref: string | null }>('SELECT policy.escalation_approval($1) AS poll_ref', [intentHash]);
  const pollRef = result.rows[0]?.poll_ref ?? null;
  return pollRef === null ? null : { pollRef, intentHash };
}

/** True when the decision is an approval that the owner's approval made possible. */
export function approvalWasUsed(decision: Decision, approval: OwnerApproval | null): approval is OwnerApproval {
  if (approval === null || decision.outcome !== 'APPROVED') return false;
  const note = `OWNER_APPROVED:${approval.pollRef}`;
  return decision.ruleTrace.some((entry) => entry.note === note);
}

export async function useOwnerApproval(db: Db, approval: OwnerApproval, now: Date): Promise<void> {
  const result = await db.query<{ used: boolean }>('SELECT policy.use_escalation_approval($1, $2) AS used', [approval.pollRef, now]);
  // Read and used under the same per-policy lock: losing it means the invariant broke; refuse.
  if (result.rows[0]?.used !== true) throw new AppError('INTERNAL_ERROR', 'An owner approval was used concurrently.');
}

function decidingReason(decision: Decision, policy: PolicySnapshot): string {
  const entry = decision.ruleTrace.find((candidate) => candidate.rule === decision.decidingRule);
  if (entry === undefined) return decision.decision;
  const lines = explainDecision({ ...decision, ruleTrace: [entry] }, { symbol: policy.rules.asset.symbol, decimals: policy.rules.asset.decimals });
  return lines[0] ?? decision.decision;
}

export async function openEscalation(
  db: Db,
  input: { intent: SpendIntent; policy: PolicySnapshot; decision: Decision; sealingKey: Buffer; now: Date },
): Promise<PreflightEscalation> {
  const { intent, policy, decision } = input;
  const code = newReplyCode();
  const result = await db.query<{ poll_ref: string; expires_at: Date }>(
    'SELECT poll_ref, expires_at FROM policy.open_escalation($1, $2, $3, $4, $5, $6, $7, $8::numeric, $9, $10, $11, $12, $13)',
    [
      newEscalationPollRef(), intent.intentHash, policy.policyId, policy.version, decision.decision, decision.decidingRule ?? 'unknown',
      decidingReason(decision, policy), intent.amountAtomic.toString(), intent.recipient, JSON.stringify(spendIntentToWire(intent)),
      codeDigest(code), seal(input.sealingKey, code), input.now,
    ],
  );
  const row = result.rows[0]!;
  return { pollRef: row.poll_ref, expiresAt: row.expires_at.toISOString(), pollUrl: `/escalation_status/${row.poll_ref}` };
}
