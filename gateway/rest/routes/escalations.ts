// GET /escalation_status/:pollRef: an agent polls the escalation its preflight opened. A pollRef
// that is not an escalation poll ref (core/canon/id-shapes.ts) is ESCALATION_NOT_FOUND before any
// lookup, the same answer as an unknown one.
import { isEscalationPollRef } from '../../../core/canon/id-shapes';
import { AppError } from '../../../core/errors';
import { FREE, type RouteDefinition } from '../types';

function escalationPollRefParam(value: unknown): string {
  if (!isEscalationPollRef(value))
    throw new AppError('ESCALATION_NOT_FOUND', undefined, { pollRef: value ?? null });
  return value;
}

export const escalationStatusRoute: RouteDefinition = {
  method: 'GET',
  path: '/escalation_status/:pollRef',
  purpose:
    'poll an escalation: PENDING, APPROVED, DENIED or EXPIRED (outcome DENIED, reason ESCALATION_EXPIRED_DEFAULT_DENY), with its intentHash, amount and times',
  group: 'control-plane',
  auth: 'public',
  price: FREE,
  operation: {
    document: 'escalationStatus',
    operationName: 'EscalationStatus',
    variables: (input) => ({ pollRef: escalationPollRefParam(input.params.pollRef) }),
    respond: (data) => ({ status: 200, body: data.escalationStatus }),
  },
};
