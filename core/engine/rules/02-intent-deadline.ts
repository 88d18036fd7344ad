// Rule 2, intent.deadline: now < deadline ≤ now + maxDeadlineMinutes. A deadline in the past is
// stale; one too far ahead would hold a reservation (authority to spend) open too long.
import { block, notEvaluated, pass } from '../trace';
import type { Rule } from '../types';

export const intentDeadline: Rule = {
  id: 'intent.deadline',
  evaluate({ intent, compiled, nowMs }) {
    if (compiled === null) return notEvaluated('intent.deadline');
    const deadlineMs = intent.deadlineUnixSeconds * 1000;
    const observed = String(intent.deadlineUnixSeconds);
    if (deadlineMs <= nowMs)
      return block(
        'intent.deadline',
        observed,
        String(Math.floor(nowMs / 1000)),
        'BLOCKED_DEADLINE:PASSED',
      );
    const latestMs = nowMs + compiled.maxDeadlineMs;
    const limit = String(Math.floor(latestMs / 1000));
    if (deadlineMs > latestMs)
      return block('intent.deadline', observed, limit, 'BLOCKED_DEADLINE:TOO_FAR');
    return pass('intent.deadline', observed, limit);
  },
};
