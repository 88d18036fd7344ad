// The x402 headers this service writes, encoded as @x402/core's encoders do (base64 of the JSON's
// UTF-8) but through Node's Buffer: the library's encoder, in Node, builds a binary string one
// character at a time for btoa, which was a few per cent of a paid call's CPU. Same bytes out
// (headerCodec.test.ts holds them to the library's on random payloads). Headers that come from
// outside (PAYMENT-SIGNATURE) are still decoded by the library, which checks them.
import type { PaymentRequired, SettleResponse } from '@x402/core/types';

function base64Json(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64');
}

/** encodePaymentResponseHeader: the settlement, less what is for the server only (extensionResponses). */
export function encodeSettlementHeader(response: SettleResponse): string {
  const buyerFacing: Record<string, unknown> = { ...response };
  delete buyerFacing.extensionResponses;
  return base64Json(buyerFacing);
}

/** encodePaymentRequiredHeader. */
export function encodeRequiredHeader(required: PaymentRequired): string {
  return base64Json(required);
}

function fromBase64Json<T>(header: string): T {
  return JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as T;
}

/** A PAYMENT-REQUIRED header this service wrote (never one from outside), decoded. */
export function decodeOwnRequiredHeader(header: string): PaymentRequired {
  return fromBase64Json<PaymentRequired>(header);
}
