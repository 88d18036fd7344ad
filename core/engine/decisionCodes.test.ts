// The decision codes and trace notes as specified: the approval note is exactly the wire string
// `OWNER_APPROVED:<pollRef>` stored traces already hold, parsing gives its pollRef back and nothing
// for any other note, and a note's code is what precedes its first colon.
import {
  approvalNote,
  BLOCK_CODES,
  ESCALATE_CODES,
  noteCode,
  parseApprovalNote,
} from './decisionCodes';
import { evaluate } from './evaluate';
import { explainDecision } from './explain';

const POLL_REF = 'esc_0123456789abcdef01234567';

describe('decision codes and notes', () => {
  it('writes an approval note as OWNER_APPROVED:<pollRef>, the string on the wire', () => {
    expect(approvalNote(POLL_REF)).toBe(`OWNER_APPROVED:${POLL_REF}`);
  });

  it('reads the pollRef back from an approval note, and nothing from any other note', () => {
    expect(parseApprovalNote(approvalNote(POLL_REF))).toBe(POLL_REF);
    expect(parseApprovalNote(`OWNER_APPROVED:${POLL_REF}`)).toBe(POLL_REF);
    for (const other of [
      null,
      '',
      'OWNER_APPROVED',
      'owner_approved:esc_1',
      'ESCALATED_THRESHOLD',
      'BLOCKED_BUDGET:UTC_DAY:2026-01-01',
      'NOT_EVALUATED:NO_POLICY',
      ` OWNER_APPROVED:${POLL_REF}`,
    ])
      expect(parseApprovalNote(other)).toBeNull();
  });

  it('keeps a pollRef with colons whole', () => {
    expect(parseApprovalNote(approvalNote('a:b:c'))).toBe('a:b:c');
  });

  it('takes a note’s code from before its first colon', () => {
    expect(noteCode('BLOCKED_BUDGET:UTC_DAY:2026-01-01')).toBe('BLOCKED_BUDGET');
    expect(noteCode('ESCALATED_THRESHOLD')).toBe('ESCALATED_THRESHOLD');
    expect(noteCode('')).toBe('');
  });

  it('names block and escalate codes apart, each with its outcome’s prefix', () => {
    for (const code of BLOCK_CODES) expect(code.startsWith('BLOCKED_')).toBe(true);
    for (const code of ESCALATE_CODES) expect(code.startsWith('ESCALATED_')).toBe(true);
    expect(new Set([...BLOCK_CODES, ...ESCALATE_CODES]).size).toBe(
      BLOCK_CODES.length + ESCALATE_CODES.length,
    );
  });

  it('is what explainDecision reads: an approval note names the pollRef, another PASS note says nothing', () => {
    const pass = (note: string | null) => ({
      rule: 'escalate.aboveThreshold' as const,
      result: 'PASS' as const,
      observed: '2000000',
      limit: '1000000',
      note,
    });
    const decision = evaluate(null as never); // a fail-closed decision, for its engine fields
    const explained = (note: string | null) =>
      explainDecision(
        { ...decision, decision: 'APPROVED', outcome: 'APPROVED', ruleTrace: [pass(note)] },
        null,
      );
    expect(explained(approvalNote(POLL_REF))).toEqual([
      `The owner approved this exact intent (${POLL_REF}), which cleared the approval threshold check.`,
    ]);
    expect(explained('VENDOR_SCORE_UNAVAILABLE')).toEqual([]);
    expect(explained(null)).toEqual([]);
  });
});
