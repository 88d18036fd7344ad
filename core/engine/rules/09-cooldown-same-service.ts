// Rule 9, cooldown.sameService: the last approved call to the same provider was at least
// sameServiceMinutes ago. 0 disables it. Observed is the seconds elapsed since that call.
import { block, notEvaluated, pass } from '../trace';
import type { Rule } from '../types';

export const cooldownSameService: Rule = {
  id: 'cooldown.sameService',
  evaluate({ intent, window, compiled, nowMs }) {
    if (compiled === null) return notEvaluated('cooldown.sameService');
    const limit = compiled.cooldownText;
    if (compiled.cooldownMs === 0) return pass('cooldown.sameService', null, limit, 'DISABLED');
    const byProvider = window.lastApprovedAtMsByProvider;
    if (!Object.hasOwn(byProvider, intent.provider))
      return pass('cooldown.sameService', null, limit);
    const elapsedMs = nowMs - byProvider[intent.provider]!;
    const observed = String(Math.floor(elapsedMs / 1000));
    if (elapsedMs < compiled.cooldownMs)
      return block('cooldown.sameService', observed, limit, 'BLOCKED_COOLDOWN');
    return pass('cooldown.sameService', observed, limit);
  },
};
