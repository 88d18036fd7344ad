// Rule 12, perCall.cap: amount ≤ perCallCap. Above it the policy chooses: BLOCK, or ESCALATE to
// the owner (an approval for this exact intentHash then passes it).
import { block, escalateUnlessApproved, notEvaluated, pass } from '../trace';
import type { Rule } from '../types';

export const perCallCap: Rule = {
  id: 'perCall.cap',
  evaluate({ intent, compiled, amountText, approvalNote }) {
    if (compiled === null) return notEvaluated('perCall.cap');
    const limit = compiled.perCallCapText;
    if (intent.amountAtomic <= compiled.perCallCapAtomic)
      return pass('perCall.cap', amountText, limit);
    if (compiled.perCallCapVerdict === 'BLOCK')
      return block('perCall.cap', amountText, limit, 'BLOCKED_PER_CALL_CAP');
    return escalateUnlessApproved(
      'perCall.cap',
      amountText,
      limit,
      'ESCALATED_PER_CALL_CAP',
      approvalNote,
    );
  },
};
