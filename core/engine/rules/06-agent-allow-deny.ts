// Rule 6, agent.allowDeny: the same allow/deny logic as recipients, for agentId. Agent ids are
// compared exactly (case-sensitive), as they are stored.
import { block, notEvaluated, pass } from '../trace';
import type { Rule } from '../types';

export const agentAllowDeny: Rule = {
  id: 'agent.allowDeny',
  evaluate({ intent, compiled }) {
    if (compiled === null) return notEvaluated('agent.allowDeny');
    const { agentId } = intent;
    if (compiled.agentsDeny.has(agentId))
      return block('agent.allowDeny', agentId, null, 'BLOCKED_AGENT:DENIED');
    if (compiled.agentsAllow.size > 0 && !compiled.agentsAllow.has(agentId)) {
      return block('agent.allowDeny', agentId, null, 'BLOCKED_AGENT:NOT_ALLOWED');
    }
    return pass('agent.allowDeny', agentId, null);
  },
};
