// Decision receipts: the anchor object of a receipt, by path or logged by body. A receipt id that
// is not 0x + 64 hex is RECEIPT_ID_INVALID before any lookup; uppercase hex is accepted and passed
// on as written, because the intent subgraph lowercases it before its lookup.
import { isIdOfKindAnyHexCase } from '../../../core/canon/id-shapes';
import { AppError } from '../../../core/errors';
import { bodyFields } from '../requestBodies';
import { FREE, type RouteDefinition } from '../types';

function receiptIdParam(value: unknown): string {
  if (!isIdOfKindAnyHexCase('receipt', value))
    throw new AppError('RECEIPT_ID_INVALID', undefined, { receiptId: value ?? null });
  return value;
}

export const receiptStatusRoute: RouteDefinition = {
  method: 'GET',
  path: '/receipt_status/:receiptId',
  purpose:
    'the anchor object of a decision receipt: PENDING {receiptId}, or NOT_FOUND {receiptId} for an id never issued',
  group: 'control-plane',
  auth: 'public',
  price: FREE,
  operation: {
    document: 'receiptStatus',
    operationName: 'ReceiptStatus',
    variables: (input) => ({ receiptId: receiptIdParam(input.params.receiptId) }),
    respond: (data) => ({ status: 200, body: data.receiptAnchor }),
  },
};

export const logReceiptRoute: RouteDefinition = {
  method: 'POST',
  path: '/log_receipt',
  purpose: 'log a decision receipt for anchoring; answers its anchor object',
  group: 'control-plane',
  auth: 'public',
  price: FREE,
  operation: {
    document: 'logReceipt',
    operationName: 'LogReceipt',
    variables: (input) => ({
      receiptId: receiptIdParam(
        bodyFields(input, [{ name: 'receiptId', required: false }]).receiptId,
      ),
    }),
    respond: (data) => ({ status: 200, body: data.logReceipt }),
  },
};
