// The consumer purchase routes (docs/consumer.md): create an intent (the session asks for a
// capability; the merchant quotes, the policy decides), list and read the session's policy's
// intents, and the owner's decision on an escalated one. Each is one persisted operation of the
// intent subgraph; these only read the request's shape and name the answer's status.
import { isConsumerIntentState } from '../../../core/consumer/lifecycle';
import { AppError } from '../../../core/errors';
import { bodyFields, queryValue } from '../requestBodies';
import { FREE, type RestInput, type RouteDefinition } from '../types';

function objectBody(input: RestInput): Record<string, unknown> {
  const body = input.body ?? {};
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new AppError('REQUEST_INVALID', 'The body must be a JSON object.');
  return body as Record<string, unknown>;
}

function pageQuery(input: RestInput): Record<string, unknown> {
  const state = queryValue(input, 'state');
  if (state !== null && !isConsumerIntentState(state))
    throw new AppError('REQUEST_INVALID', 'state must be a consumer intent state.', [
      { field: 'state', reason: 'must be a consumer intent state such as AWAITING_FUNDING' },
    ]);
  const firstText = queryValue(input, 'first');
  if (firstText !== null && !/^[0-9]{1,3}$/.test(firstText))
    throw new AppError('REQUEST_INVALID', 'first must be 1–100.', [
      { field: 'first', reason: 'must be 1–100' },
    ]);
  return {
    policyId: queryValue(input, 'policyId'),
    state,
    after: queryValue(input, 'after'),
    first: firstText === null ? null : Number(firstText),
  };
}

const DECISIONS = new Set(['APPROVE', 'DENY']);

function approveVariables(input: RestInput): Record<string, unknown> {
  const fields = bodyFields(input, [
    { name: 'decision', required: true },
    { name: 'intentHash', required: true },
  ]) as { decision: string; intentHash: string };
  if (!DECISIONS.has(fields.decision))
    throw new AppError('REQUEST_INVALID', 'decision is APPROVE or DENY.', [
      { field: 'decision', reason: 'must be APPROVE or DENY' },
    ]);
  return { intentId: input.params.intentId, ...fields };
}

export const consumerIntentRoutes: readonly RouteDefinition[] = [
  {
    method: 'POST',
    path: '/consumer/intents',
    purpose:
      'a consumer session asks for a capability {capability, params, idempotencyKey?}: catalog gate, the merchant’s own x402 quote, the policy’s decision; 201 {intent, quote, decision, nextAction, fundingRequest} (200 for a repeated idempotencyKey)',
    group: 'consumer',
    auth: 'consumer',
    price: FREE,
    // Asks the merchant for its 402 before answering.
    rateLimit: 'outbound',
    idempotencyBodyKey: 'idempotencyKey',
    operation: {
      document: 'createConsumerIntent',
      operationName: 'CreateConsumerIntent',
      variables: (input) => ({ input: objectBody(input) }),
      respond: (data) => {
        const { created, ...body } = data.createConsumerIntent;
        return { status: created ? 201 : 200, body };
      },
    },
  },
  {
    method: 'GET',
    path: '/consumer/intents',
    purpose:
      'the session’s policy’s consumer intents, newest first (?state=, ?first= 1–100, ?after= the previous page’s endCursor)',
    group: 'consumer',
    auth: 'consumer',
    price: FREE,
    operation: {
      document: 'consumerIntents',
      operationName: 'ConsumerIntents',
      variables: pageQuery,
      respond: (data) => {
        const page = data.consumerIntents;
        return { status: 200, body: { intents: page.nodes, pageInfo: page.pageInfo } };
      },
    },
  },
  {
    method: 'GET',
    path: '/consumer/intents/:intentId',
    purpose: 'one consumer intent of the session’s policy (another policy’s id: 404)',
    group: 'consumer',
    auth: 'consumer',
    price: FREE,
    operation: {
      document: 'consumerIntent',
      operationName: 'ConsumerIntent',
      variables: (input) => ({ intentId: input.params.intentId }),
      respond: (data, input) => {
        if (data.consumerIntent === null || data.consumerIntent === undefined)
          throw new AppError('CONSUMER_INTENT_NOT_FOUND', undefined, {
            intentId: input.params.intentId,
          });
        return { status: 200, body: { intent: data.consumerIntent } };
      },
    },
  },
  {
    method: 'POST',
    path: '/consumer/intents/:intentId/approve',
    purpose:
      'the policy owner’s session decides an escalated consumer intent {decision: APPROVE|DENY, intentHash}; a stale intentHash is 409 APPROVAL_HASH_MISMATCH',
    group: 'owner',
    auth: 'consumer',
    price: FREE,
    operation: {
      document: 'approveConsumerIntent',
      operationName: 'ApproveConsumerIntent',
      variables: approveVariables,
      respond: (data) => ({ status: 200, body: data.approveConsumerIntent }),
    },
  },
];
