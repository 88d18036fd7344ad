// Rule 5, recipient.allowDeny: the paid address is not denied, and is allowed when the policy
// keeps an allow list (an empty allow list means any recipient that is not denied).
import { block, notEvaluated, pass } from '../trace';
import type { Rule } from '../types';

export const recipientAllowDeny: Rule = {
  id: 'recipient.allowDeny',
  evaluate({ intent, compiled }) {
    if (compiled === null) return notEvaluated('recipient.allowDeny');
    const { recipient } = intent;
    if (compiled.recipientsDeny.has(recipient))
      return block('recipient.allowDeny', recipient, null, 'BLOCKED_RECIPIENT:DENIED');
    if (compiled.recipientsAllow.size > 0 && !compiled.recipientsAllow.has(recipient)) {
      return block('recipient.allowDeny', recipient, null, 'BLOCKED_RECIPIENT:NOT_ALLOWED');
    }
    return pass('recipient.allowDeny', recipient, null);
  },
};
