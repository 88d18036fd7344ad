import {
  decodePaymentResponseHeader,
  encodePaymentRequiredHeader,
  encodePaymentResponseHeader,
} from '@x402/core/http';
import type { PaymentRequired, SettleResponse } from '@x402/core/types';
import fc from 'fast-check';
import { encodeRequiredHeader, encodeSettlementHeader } from './headerCodec';

const text = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.constant('USD₮0 \ud800'));
const json = fc.jsonValue().map((value) => JSON.parse(JSON.stringify(value)) as unknown);

describe('the x402 header encoders, against @x402/core’s', () => {
  it('encode PAYMENT-RESPONSE to the very same header, which the library reads back less the server-only part', () => {
    fc.assert(
      fc.property(
        fc.record(
          {
            success: fc.boolean(),
            transaction: text,
            network: text,
            payer: text,
            errorReason: text,
            extensions: fc.dictionary(text, json),
            extensionResponses: fc.dictionary(text, json),
          },
          { requiredKeys: ['success', 'transaction', 'network'] },
        ),
        (response) => {
          const ours = encodeSettlementHeader(response as unknown as SettleResponse);
          expect(ours).toBe(encodePaymentResponseHeader(response as unknown as SettleResponse));
          const { extensionResponses: _serverOnly, ...buyerFacing } = response;
          expect(decodePaymentResponseHeader(ours)).toEqual(buyerFacing);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('encode PAYMENT-REQUIRED to the very same header', () => {
    fc.assert(
      fc.property(
        fc.record({
          x402Version: fc.constant(2),
          error: text,
          resource: fc.record({ url: text, description: text, mimeType: text }),
          accepts: fc.array(fc.dictionary(text, json), { maxLength: 3 }),
          extensions: fc.dictionary(text, json),
        }),
        (required) => {
          expect(encodeRequiredHeader(required as unknown as PaymentRequired)).toBe(
            encodePaymentRequiredHeader(required as unknown as PaymentRequired),
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});
