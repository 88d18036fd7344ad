// The preflight's side of escalations, inside its own transaction and per-policy lock, through the
// policy subgraph's published SQL functions (the policy subgraph owns escalations: approval
// authority is the owner's), which `intent.preflight_window` and `intent.preflight_record` call.
// Before the engine runs: an unused owner approval of exactly this intentHash. After it: an
// approval that cleared the escalation is used up; an ESCALATED_* decision opens the escalation
// (or finds the open one) with a fresh single-use reply code, kept only as its sha256 plus a
// sealed copy for the notices still to be delivered. This module prepares the arguments.
import { newEscalationPollRef } from '../../../core/canon/ids';
import {
  approvalNote,
  type Decision,
  explainDecision,
  type OwnerApproval,
  type PolicySnapshot,
} from '../../../core/engine';
import { seal } from '../../../platform/sealing';
import { codeDigest, newReplyCode } from '../../policy';

/** The escalation object of the preflight response (DECISIONS "Preflight response"). */
export interface PreflightEscalation {
  pollRef: string;
  expiresAt: string;
  pollUrl: string;
}

/** True when the decision is an approval that the owner's approval made possible. */
export function approvalWasUsed(
  decision: Decision,
  approval: OwnerApproval | null,
): approval is OwnerApproval {
  if (approval === null || decision.outcome !== 'APPROVED') return false;
  const note = approvalNote(approval.pollRef);
  return decision.ruleTrace.some((entry) => entry.note === note);
}

function decidingReason(decision: Decision, policy: PolicySnapshot): string {
  const entry = decision.ruleTrace.find((candidate) => candidate.rule === decision.decidingRule);
  if (entry === undefined) return decision.decision;
  const lines = explainDecision(
    { ...decision, ruleTrace: [entry] },
    { symbol: policy.rules.asset.symbol, decimals: policy.rules.asset.decimals },
  );
  return lines[0] ?? decision.decision;
}

/**
 * What `intent.preflight_record` passes to `policy.open_escalation` for an ESCALATED_* decision: a
 * fresh pollRef (kept only when no escalation of this intent is open yet), the deciding rule and
 * its plain-English reason, and a fresh single-use reply code as its sha256 plus a sealed copy for
 * the notices. The code itself never leaves this function in clear.
 */
export interface EscalationToOpen {
  pollRef: string;
  decidingRule: string;
  reason: string;
  codeSha256: Buffer;
  sealedCode: Buffer;
}

export function escalationToOpen(input: {
  policy: PolicySnapshot;
  decision: Decision;
  sealingKey: Buffer;
}): EscalationToOpen {
  const code = newReplyCode();
  return {
    pollRef: newEscalationPollRef(),
    decidingRule: input.decision.decidingRule ?? 'unknown',
    reason: decidingReason(input.decision, input.policy),
    codeSha256: codeDigest(code),
    sealedCode: seal(input.sealingKey, code),
  };
}

export function preflightEscalation(pollRef: string, expiresAt: Date): PreflightEscalation {
  return { pollRef, expiresAt: expiresAt.toISOString(), pollUrl: `/escalation_status/${pollRef}` };
}
