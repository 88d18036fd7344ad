// POST /score_vendor and POST /score_buyer ($0.20 each, x402 on eip155:196 to the fee receiver;
// DECISIONS "Wave-2 route shapes"): the service's own score of a provider `{provider}` or of a
// buyer `{agentId, policyId}`, computed by the intent subgraph from the consumer purchase history
// (docs/trust.md), never taken from the caller. The body is judged before any 402 (a malformed
// one is a 400, never a charge). Then the subgraph's free check runs, also before any 402: for a
// buyer, a caller who may not read the policy (not its owner, not its consumer session, not an
// admin) is 401/403 with no data; too little history is 422 SCORE_INSUFFICIENT_HISTORY. Neither is
// offered a payment.
import { AppError } from '../../../core/errors';
import {
  parseScoreBuyerRequest,
  parseScoreVendorRequest,
} from '../../../core/validation/scoreRequest';
import { refusalFromData } from '../refusal';
import { type RouteDefinition, type RestInput, usdt0 } from '../types';

function vendorVariables(input: RestInput): Record<string, unknown> {
  return { ...parseScoreVendorRequest(input.body ?? {}) };
}

function buyerVariables(input: RestInput): Record<string, unknown> {
  const request = parseScoreBuyerRequest(input.body ?? {});
  if (input.actor.kind === 'anonymous') throw new AppError('AUTH_REQUIRED');
  return { ...request };
}

function refusalOf(field: string) {
  return (data: Record<string, unknown>) =>
    refusalFromData((data[field] as Record<string, unknown>).refusal, 'SCORE_INSUFFICIENT_HISTORY');
}

export const scoreVendorRoute: RouteDefinition = {
  method: 'POST',
  path: '/score_vendor',
  purpose:
    'the service’s own score of a provider {provider}: the Wilson lower bound of its verified purchase outcomes, {score 0–100, confidence, lowerBound, basis, computedAt}, or 422 SCORE_INSUFFICIENT_HISTORY (never charged)',
  group: 'control-plane',
  auth: 'public',
  price: usdt0('0.20', {
    document: 'scoreVendorTerms',
    operationName: 'ScoreVendorTerms',
    variables: vendorVariables,
    read: refusalOf('scoreVendorTerms'),
  }),
  operation: {
    document: 'scoreVendor',
    operationName: 'ScoreVendor',
    variables: vendorVariables,
    respond: (data) => ({ status: 200, body: data.scoreVendor }),
  },
};

export const scoreBuyerRoute: RouteDefinition = {
  method: 'POST',
  path: '/score_buyer',
  purpose:
    'the service’s own score of a buyer {agentId, policyId} from its purchase outcomes under that policy, the same shape as /score_vendor; for the policy’s owner, its consumer session or an admin',
  group: 'control-plane',
  auth: 'public',
  price: usdt0('0.20', {
    document: 'scoreBuyerTerms',
    operationName: 'ScoreBuyerTerms',
    variables: buyerVariables,
    read: refusalOf('scoreBuyerTerms'),
  }),
  operation: {
    document: 'scoreBuyer',
    operationName: 'ScoreBuyer',
    variables: buyerVariables,
    respond: (data) => ({ status: 200, body: data.scoreBuyer }),
  },
};
