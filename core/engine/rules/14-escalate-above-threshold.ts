// Rule 14, escalate.aboveThreshold: amounts above escalateAbove go to the owner. Last in order,
// so an owner is only asked about spends that every blocking rule already allows.
import { escalateUnlessApproved, notEvaluated, pass } from '../trace';
import type { Rule } from '../types';

export const escalateAboveThreshold: Rule = {
  id: 'escalate.aboveThreshold',
  evaluate({ intent, compiled, amountText, approvalNote }) {
    if (compiled === null) return notEvaluated('escalate.aboveThreshold');
    const limit = compiled.escalateAboveText;
    if (intent.amountAtomic <= compiled.escalateAboveAtomic)
      return pass('escalate.aboveThreshold', amountText, limit);
    return escalateUnlessApproved(
      'escalate.aboveThreshold',
      amountText,
      limit,
      'ESCALATED_THRESHOLD',
      approvalNote,
    );
  },
};
