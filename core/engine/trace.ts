// Builders for trace entries, so every rule writes its line the same way. A rule that cannot
// be checked (no policy) is not a pass: it is reported as BLOCK with note NOT_EVALUATED:NO_POLICY.
import type { ApprovalNote, DecisionNote } from './decisionCodes';
import type { RuleId, TraceEntry } from './types';

export function pass(
  rule: RuleId,
  observed: string | null,
  limit: string | null,
  note: string | null = null,
): TraceEntry {
  return { rule, result: 'PASS', observed, limit, note };
}

export function block(
  rule: RuleId,
  observed: string | null,
  limit: string | null,
  note: DecisionNote,
): TraceEntry {
  return { rule, result: 'BLOCK', observed, limit, note };
}

export function escalate(
  rule: RuleId,
  observed: string | null,
  limit: string | null,
  note: DecisionNote,
): TraceEntry {
  return { rule, result: 'ESCALATE', observed, limit, note };
}

export const NOT_EVALUATED_NO_POLICY = 'NOT_EVALUATED:NO_POLICY';

export function notEvaluated(rule: RuleId): TraceEntry {
  return { rule, result: 'BLOCK', observed: null, limit: null, note: NOT_EVALUATED_NO_POLICY };
}

/**
 * An escalation that the owner already approved for this exact intentHash passes; the approval
 * note names the pollRef so the trace shows whose decision replaced the rule's.
 */
export function escalateUnlessApproved(
  rule: RuleId,
  observed: string | null,
  limit: string | null,
  note: DecisionNote,
  approvalNote: ApprovalNote | null,
): TraceEntry {
  if (approvalNote !== null) return { rule, result: 'PASS', observed, limit, note: approvalNote };
  return { rule, result: 'ESCALATE', observed, limit, note };
}
