// Rule 11, hardCap.absolute: amount ≤ hardCap. The one money limit no owner approval can lift;
// it bounds what a compromised or careless approval can cost.
import { block, notEvaluated, pass } from '../trace';
import type { Rule } from '../types';

export const hardCapAbsolute: Rule = {
  id: 'hardCap.absolute',
  evaluate({ intent, compiled, amountText }) {
    if (compiled === null) return notEvaluated('hardCap.absolute');
    if (intent.amountAtomic > compiled.hardCapAtomic)
      return block('hardCap.absolute', amountText, compiled.hardCapText, 'BLOCKED_HARD_CAP');
    return pass('hardCap.absolute', amountText, compiled.hardCapText);
  },
};
