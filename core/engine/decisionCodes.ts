// The engine's decision codes and the trace notes that carry them, in one place: a BLOCK or
// ESCALATE line's note is `CODE` or `CODE:DETAIL` (its CODE is the decision that line stands for),
// and an owner approval that cleared an escalation is the PASS note `OWNER_APPROVED:<pollRef>`.
// These strings are on the wire and in stored traces: change none of them.

export const BLOCK_CODES = [
  'BLOCKED_POLICY_INACTIVE',
  'BLOCKED_POLICY_MISMATCH',
  'BLOCKED_DEADLINE',
  'BLOCKED_ASSET',
  'BLOCKED_CATEGORY',
  'BLOCKED_RECIPIENT',
  'BLOCKED_AGENT',
  'BLOCKED_VENDOR_RISK',
  'BLOCKED_DUPLICATE',
  'BLOCKED_COOLDOWN',
  'BLOCKED_RATE',
  'BLOCKED_HARD_CAP',
  'BLOCKED_PER_CALL_CAP',
  'BLOCKED_BUDGET',
  'BLOCKED_FAIL_CLOSED',
] as const;

export const ESCALATE_CODES = [
  'ESCALATED_VENDOR_RISK',
  'ESCALATED_PER_CALL_CAP',
  'ESCALATED_THRESHOLD',
] as const;

export type BlockCode = (typeof BLOCK_CODES)[number];
export type EscalateCode = (typeof ESCALATE_CODES)[number];
export type DecisionCode = 'APPROVED' | BlockCode | EscalateCode;
export type Outcome = 'APPROVED' | 'BLOCKED' | 'ESCALATED';

/** The note of a BLOCK or ESCALATE trace line: its decision code, alone or with a detail. */
export type DecisionNote<C extends BlockCode | EscalateCode = BlockCode | EscalateCode> =
  C | `${C}:${string}`;

const OWNER_APPROVED_PREFIX = 'OWNER_APPROVED:';

/** The PASS note of a rule whose escalation the owner approved (escalation `pollRef`). */
export type ApprovalNote = `OWNER_APPROVED:${string}`;

export function approvalNote(pollRef: string): ApprovalNote {
  return `${OWNER_APPROVED_PREFIX}${pollRef}`;
}

/** The pollRef an approval note names, or null for any other note. */
export function parseApprovalNote(note: string | null): string | null {
  if (note === null || !note.startsWith(OWNER_APPROVED_PREFIX)) return null;
  return note.slice(OWNER_APPROVED_PREFIX.length);
}

/** The code a note starts with (the text before its first colon, or the whole note). */
export function noteCode(note: string): string {
  const colon = note.indexOf(':');
  return colon < 0 ? note : note.slice(0, colon);
}
