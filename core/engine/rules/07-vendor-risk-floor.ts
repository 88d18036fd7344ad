// Rule 7, vendor.riskFloor: the service's own score of the provider (from the ledger window,
// never from the caller) is at least minScore. Below it: onBelow. No score: onUnavailable
// (ALLOW passes with a note, BLOCK blocks, ESCALATE asks the owner). Approval turns ESCALATE to PASS.
import { block, escalateUnlessApproved, notEvaluated, pass } from '../trace';
import type { Rule } from '../types';

export const vendorRiskFloor: Rule = {
  id: 'vendor.riskFloor',
  evaluate({ window, compiled, approvalNote }) {
    if (compiled === null) return notEvaluated('vendor.riskFloor');
    const score = window.vendorScore;
    const limit = compiled.minScoreText;
    if (score === null) {
      switch (compiled.onScoreUnavailable) {
        case 'ALLOW':
          return pass('vendor.riskFloor', null, limit, 'VENDOR_SCORE_UNAVAILABLE');
        case 'BLOCK':
          return block('vendor.riskFloor', null, limit, 'BLOCKED_VENDOR_RISK:SCORE_UNAVAILABLE');
        case 'ESCALATE':
          return escalateUnlessApproved(
            'vendor.riskFloor',
            null,
            limit,
            'ESCALATED_VENDOR_RISK:SCORE_UNAVAILABLE',
            approvalNote,
          );
      }
    }
    const observed = String(score);
    if (score >= compiled.minScore) return pass('vendor.riskFloor', observed, limit);
    if (compiled.onBelowMinScore === 'BLOCK')
      return block('vendor.riskFloor', observed, limit, 'BLOCKED_VENDOR_RISK:BELOW_FLOOR');
    return escalateUnlessApproved(
      'vendor.riskFloor',
      observed,
      limit,
      'ESCALATED_VENDOR_RISK:BELOW_FLOOR',
      approvalNote,
    );
  },
};
