// POST /generate_dispute_packet ($0.50, x402 on eip155:196 to the fee receiver; DECISIONS "Wave-2
// route shapes", docs/disputes.md): the evidence pack of a consumer intent. The body is judged
// before any 402 (a malformed one is a 400, never a charge) and needs a bearer (an intent is never
// shown to an anonymous caller: 401, also before any 402). Then the intent subgraph's free terms
// check runs, still before any 402: an intent the caller may not read, or none, is 404
// CONSUMER_INTENT_NOT_FOUND and is never offered a payment. Who may read which intent is the
// intent subgraph's to decide.
import { AppError } from '../../../core/errors';
import { parseDisputePacketRequest } from '../../../core/validation/disputeRequest';
import { refusalFromData } from '../refusal';
import { type RestInput, type RouteDefinition, usdt0 } from '../types';

function variablesOf(input: RestInput): Record<string, unknown> {
  const request = parseDisputePacketRequest(input.body ?? {});
  return request.kind === 'intentId'
    ? { intentId: request.intentId }
    : { intentHash: request.intentHash };
}

export const generateDisputePacketRoute: RouteDefinition = {
  method: 'POST',
  path: '/generate_dispute_packet',
  purpose:
    'the evidence pack of a consumer intent, {intentId} or {intentHash}: intent and hash, policy version and hash, decision trace, approval (never its code), both payment legs with tx hashes and blocks, providerAttested and serviceVerified apart, the receipt with its anchor proof, ledger groups, integrity.digest over its JCS; for the intent’s consumer session, its policy’s owner, an admin',
  group: 'control-plane',
  auth: 'public',
  // The body first (400), then a bearer (401), both before the terms check and any 402.
  validate: (input) => {
    parseDisputePacketRequest(input.body ?? {});
    if (input.actor.kind === 'anonymous') throw new AppError('AUTH_REQUIRED');
  },
  price: usdt0('0.50', {
    document: 'disputePacketTerms',
    operationName: 'DisputePacketTerms',
    variables: variablesOf,
    read: (data) =>
      refusalFromData(
        (data.disputePacketTerms as Record<string, unknown>).refusal,
        'CONSUMER_INTENT_NOT_FOUND',
      ),
  }),
  operation: {
    document: 'generateDisputePacket',
    operationName: 'GenerateDisputePacket',
    variables: variablesOf,
    respond: (data) => ({ status: 200, body: data.generateDisputePacket }),
  },
};
