// Rule 10, rate.limit: approved calls in the last hour, plus this one, stay within callsPerHour.
// Observed is the count including this call.
import { block, notEvaluated, pass } from '../trace';
import type { Rule } from '../types';

export const rateLimit: Rule = {
  id: 'rate.limit',
  evaluate({ window, compiled }) {
    if (compiled === null) return notEvaluated('rate.limit');
    const callsWithThis = window.approvedCallsLastHour + 1;
    const observed = String(callsWithThis);
    if (callsWithThis > compiled.callsPerHour)
      return block('rate.limit', observed, compiled.callsPerHourText, 'BLOCKED_RATE');
    return pass('rate.limit', observed, compiled.callsPerHourText);
  },
};
