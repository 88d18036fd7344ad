// POST /verify_delivery ($0.10, x402 on eip155:196 to the fee receiver; DECISIONS "Wave-2 route
// shapes"): the service's own check of a delivery. The body is judged before any 402 (a malformed
// one is a 400, never a charge), and `{intentId}` needs a bearer (an intent is never shown to an
// anonymous caller, so asking without one is a 401, also before any 402). For `{intentId}` the
// intent subgraph's free check runs next, also before any 402: an intent the caller may not read
// (or none) is 404 CONSUMER_INTENT_NOT_FOUND, one the merchant has not answered yet 409
// DELIVERY_NOT_READY, and neither is offered a payment. `{capability, params, providerAttested}`
// needs no lookup. Who may read which intent is the intent subgraph's to decide.
import { AppError } from '../../../core/errors';
import { parseVerifyDeliveryRequest } from '../../../core/validation/deliveryRequest';
import { refusalFromData } from '../refusal';
import { type RouteDefinition, usdt0 } from '../types';

export const verifyDeliveryRoute: RouteDefinition = {
  method: 'POST',
  path: '/verify_delivery',
  purpose:
    'the service’s own check of a delivery, {intentId} or {capability, params, providerAttested}: domains.check against the registry over RDAP, other capabilities labelled PROVIDER_ATTESTATION; answers {serviceVerified}, never the merchant’s claim as verified',
  group: 'control-plane',
  auth: 'public',
  price: usdt0('0.10', {
    document: 'verifyDeliveryTerms',
    operationName: 'VerifyDeliveryTerms',
    variables: (input) => {
      const request = parseVerifyDeliveryRequest(input.body ?? {});
      return request.kind === 'intent' ? { intentId: request.intentId } : null;
    },
    read: (data) =>
      refusalFromData(
        (data.verifyDeliveryTerms as Record<string, unknown>).refusal,
        'DELIVERY_NOT_READY',
      ),
  }),
  // Asks the RDAP registry.
  rateLimit: 'outbound',
  operation: {
    document: 'verifyDelivery',
    operationName: 'VerifyDelivery',
    variables: (input) => {
      const request = parseVerifyDeliveryRequest(input.body ?? {});
      if (request.kind === 'intent') {
        if (input.actor.kind === 'anonymous') throw new AppError('AUTH_REQUIRED');
        return { intentId: request.intentId };
      }
      const { capability, params, providerAttested } = request;
      return { capability, params, providerAttested };
    },
    respond: (data) => ({ status: 200, body: data.verifyDelivery }),
  },
};
