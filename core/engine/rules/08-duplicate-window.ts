// Rule 8, duplicate.window: no approved intent with the same key tuple (policy duplicates.keys)
// inside the last windowMinutes. Stops an agent looping on the same purchase. A window of 0
// disables the rule. Observed is the earlier intentHash that matched.
import type { SpendIntent } from '../../validation/intent';
import type { DuplicateKeyFlags } from '../compile';
import { block, notEvaluated, pass } from '../trace';
import type { RecentApproval, Rule } from '../types';

export const duplicateWindow: Rule = {
  id: 'duplicate.window',
  evaluate({ intent, window, compiled, nowMs }) {
    if (compiled === null) return notEvaluated('duplicate.window');
    const limit = compiled.duplicateWindowText;
    if (compiled.duplicateWindowMs === 0) return pass('duplicate.window', null, limit, 'DISABLED');
    const windowStartMs = nowMs - compiled.duplicateWindowMs;
    const recent = window.recentApproved;
    for (let i = 0; i < recent.length; i += 1) {
      const prior = recent[i]!;
      // Approvals stamped after `now` (clock skew between writers) still count as recent.
      if (prior.approvedAtMs > windowStartMs && sameKeys(intent, prior, compiled.duplicateKeys)) {
        return block(
          'duplicate.window',
          prior.intentHash.toLowerCase(),
          limit,
          'BLOCKED_DUPLICATE',
        );
      }
    }
    return pass('duplicate.window', null, limit);
  },
};

// Cheap, exact keys first; the hex keys (which a caller may have stored in any case) are
// compared case-insensitively, and only for the rare entry that already matched the rest.
function sameKeys(intent: SpendIntent, prior: RecentApproval, keys: DuplicateKeyFlags): boolean {
  return (
    (!keys.amount || prior.amountAtomic === intent.amountAtomic) &&
    (!keys.capability || prior.capability === intent.capability) &&
    (!keys.provider || prior.provider === intent.provider) &&
    (!keys.agentId || prior.agentId === intent.agentId) &&
    (!keys.endpoint || prior.endpoint === intent.endpoint) &&
    (!keys.recipient || sameHex(prior.recipient, intent.recipient)) &&
    (!keys.itemHash || sameHex(prior.itemHash, intent.itemHash))
  );
}

/** `lowercase` is a validated intent field; `stored` may come from storage in any case. */
function sameHex(stored: string, lowercase: string): boolean {
  return (
    stored === lowercase ||
    (stored.length === lowercase.length && stored.toLowerCase() === lowercase)
  );
}
