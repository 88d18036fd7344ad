// The public receipt of a consumer intent (docs/receipts.md "Consumer receipts"): no credential;
// the body exactly as the intent subgraph stored it. An unknown or malformed id and an intent not
// funded yet all answer 404 RECEIPT_NOT_FOUND.
import { AppError } from '../../../core/errors';
import { FREE, type RouteDefinition } from '../types';

export const consumerReceiptRoute: RouteDefinition = {
  method: 'GET',
  path: '/consumer/receipt/:intentId',
  // Public: a malformed id reads like an unknown one (test/e2e/consumerReceipt.test.ts).
  malformedIntentId: 'RECEIPT_NOT_FOUND',
  purpose:
    'the public receipt of a consumer intent: both payment legs, providerAttested and serviceVerified apart, fee, spread, anchor, integrity.digest; no credential',
  group: 'consumer',
  auth: 'public',
  price: FREE,
  operation: {
    document: 'consumerReceipt',
    operationName: 'ConsumerReceipt',
    variables: (input) => ({ intentId: input.params.intentId }),
    respond: (data, input) => {
      if (data.consumerReceipt === null || data.consumerReceipt === undefined)
        throw new AppError('RECEIPT_NOT_FOUND', undefined, { intentId: input.params.intentId });
      return { status: 200, body: data.consumerReceipt };
    },
  },
};
