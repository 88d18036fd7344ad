// The agent tools that take a SpendIntent: store it, decide it (preflight), or ask whether it
// repeats an approved one. Each reads the same intent body (intentBodies.ts) and answers the
// intent subgraph's REST body verbatim.
import { intentBody } from '../intentBodies';
import { BUNDLED, type RouteDefinition, usdt0 } from '../types';

export const createSpendIntentRoute: RouteDefinition = {
  method: 'POST',
  path: '/create_spend_intent',
  purpose:
    'validate a SpendIntent (per-field INTENT_MALFORMED), bind it to the policy and store it; returns its intentHash and canonical form',
  group: 'control-plane',
  auth: 'public',
  price: BUNDLED,
  operation: {
    document: 'createSpendIntent',
    operationName: 'CreateSpendIntent',
    variables: (input) => intentBody(input, { allowHash: false }),
    respond: (data) => ({ status: 200, body: data.createSpendIntent }),
  },
};

export const preflightPaymentRoute: RouteDefinition = {
  method: 'POST',
  path: '/preflight_payment',
  purpose:
    'evaluate an intent (or a stored intentHash) against the policy: decision, 14-rule trace, reservation on APPROVED, receiptId',
  group: 'control-plane',
  auth: 'public',
  price: usdt0('0.05'),
  operation: {
    document: 'preflightPayment',
    operationName: 'PreflightPayment',
    variables: (input) => intentBody(input, { allowHash: true }),
    respond: (data) => ({ status: 200, body: data.preflightPayment }),
  },
};

export const detectDuplicateRoute: RouteDefinition = {
  method: 'POST',
  path: '/detect_duplicate',
  purpose:
    'whether an approved intent with the same duplicate key tuple lies inside the policy’s window: prior intentHash, seconds left, keys matched',
  group: 'control-plane',
  auth: 'public',
  price: usdt0('0.02'),
  operation: {
    document: 'detectDuplicate',
    operationName: 'DetectDuplicate',
    variables: (input) => intentBody(input, { allowHash: true }),
    respond: (data) => ({ status: 200, body: data.detectDuplicate }),
  },
};
