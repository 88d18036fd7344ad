// Rule 1, policy.binding: a policy exists, is ACTIVE and unexpired, and the intent was written
// against exactly this policy (policyId and policyHash). An intent committed to an older
// version of the rules is refused even if the new rules would allow it.
import { block, pass } from '../trace';
import type { Rule } from '../types';

export const policyBinding: Rule = {
  id: 'policy.binding',
  evaluate({ intent, policy, compiled, nowMs }) {
    if (policy === null || compiled === null)
      return block('policy.binding', null, null, 'BLOCKED_POLICY_INACTIVE:NOT_FOUND');
    if (policy.status !== 'ACTIVE')
      return block('policy.binding', policy.status, 'ACTIVE', 'BLOCKED_POLICY_INACTIVE:PAUSED');
    if (compiled.expiresAtMs !== null && nowMs >= compiled.expiresAtMs) {
      return block(
        'policy.binding',
        String(Math.floor(nowMs / 1000)),
        compiled.expiresAtText,
        'BLOCKED_POLICY_INACTIVE:EXPIRED',
      );
    }
    if (intent.policyId !== policy.policyId) {
      return block(
        'policy.binding',
        intent.policyId,
        policy.policyId,
        'BLOCKED_POLICY_MISMATCH:POLICY_ID',
      );
    }
    if (intent.policyHash !== compiled.policyHash) {
      return block(
        'policy.binding',
        intent.policyHash,
        compiled.policyHash,
        'BLOCKED_POLICY_MISMATCH:POLICY_HASH',
      );
    }
    return pass('policy.binding', intent.policyHash, compiled.policyHash);
  },
};
