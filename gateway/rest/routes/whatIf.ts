// POST /policy_what_if (free, an owner's session or admin): a draft policy replayed over the
// policy's past decisions in {from?, to?} (default the last 30 days, at most 92: RANGE_TOO_LONG),
// answered as GraphQL policyWhatIf answers it with the first 200 changed decisions.
import { bodyFields } from '../requestBodies';
import { FREE, type RouteDefinition } from '../types';
import { POLICY_ID_FIELD } from './inputs';

export const policyWhatIfRoute: RouteDefinition = {
  method: 'POST',
  path: '/policy_what_if',
  purpose:
    'replay a draft policy over the policy’s past decisions {policyId, draft, from?, to?} (default the last 30 days, at most 92): approved, escalated, blocked and spend before and after, per day, and the decisions it changes with their traces (the policy’s owner or admin)',
  group: 'owner',
  auth: 'consumer',
  price: FREE,
  operation: {
    document: 'policyWhatIf',
    operationName: 'PolicyWhatIf',
    variables: (input) =>
      bodyFields(input, [
        POLICY_ID_FIELD,
        { name: 'draft', kind: 'object', required: true },
        { name: 'from', required: false },
        { name: 'to', required: false },
      ]),
    respond: (data) => ({ status: 200, body: data.policyWhatIf }),
  },
};
