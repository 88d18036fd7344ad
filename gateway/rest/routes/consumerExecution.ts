// The consumer purchase path after funding: the consumer session queues its funded intent for
// execution (202; the worker pays the merchant), and an admin resolves an ambiguous payment
// against the chain. An intentId that is not `ci_` + 24 hex is a 400 before any lookup
// (requestGuards.ts checkPathIds, the same for every route that takes one).
import { bodyFields, stringFields } from '../requestBodies';
import { FREE, type RouteDefinition } from '../types';

export const executeConsumerIntentRoute: RouteDefinition = {
  method: 'POST',
  path: '/consumer/intents/:intentId/execute',
  purpose:
    'queue a FUNDED consumer intent for execution (202): gates, a one-time payment capability, the merchant paid on its own rail; a repeat changes nothing',
  group: 'consumer',
  auth: 'consumer',
  price: FREE,
  operation: {
    document: 'executeConsumerIntent',
    operationName: 'ExecuteConsumerIntent',
    variables: (input) => {
      bodyFields(input, []);
      return { intentId: input.params.intentId };
    },
    respond: (data) => ({ status: 202, body: data.executeConsumerIntent }),
  },
};

export const resolveConsumerIntentRoute: RouteDefinition = {
  method: 'POST',
  path: '/consumer/intents/:intentId/resolve',
  purpose:
    'admin: resolve an ambiguous consumer payment as PAID or NOT_PAID, only from MANUAL_REVIEW and only when the settlement chain agrees',
  group: 'operator',
  auth: 'admin',
  price: FREE,
  operation: {
    document: 'resolveConsumerIntent',
    operationName: 'ResolveConsumerIntent',
    variables: (input) => ({
      intentId: input.params.intentId,
      ...stringFields(input, [
        { name: 'outcome', required: true },
        { name: 'evidence', required: true },
      ]),
    }),
    respond: (data) => ({ status: 200, body: data.resolveConsumerIntent }),
  },
};
