// POST /verify_delivery ($0.10, x402 on eip155:196 to the fee receiver; DECISIONS "Wave-2 route
// shapes"): the service's own check of a delivery. The body is judged before any 402 (a malformed
// one is a 400, never a charge), and `{intentId}` needs a bearer (an intent is never shown to an
// anonymous caller, so asking without one is a 401, also before any 402). Who may read which
// intent is the intent subgraph's to decide.
import { AppError } from '../../../core/errors';
import { parseVerifyDeliveryRequest } from '../../../core/validation/deliveryRequest';
import { type RouteDefinition, usdt0 } from '../types';

export const verifyDeliveryRoute: RouteDefinition = {
  method: 'POST',
  path: '/verify_delivery',
  purpose:
    'the service’s own check of a delivery, {intentId} or {capability, params, providerAttested}: domains.check against the registry over RDAP, other capabilities labelled PROVIDER_ATTESTATION; answers {serviceVerified}, never the merchant’s claim as verified',
  group: 'control-plane',
  auth: 'public',
  price: usdt0('0.10'),
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
