// The wire format of our 402 and the chain-free checks of a presented payment, one refusal each.
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentRequirements } from '@x402/core/types';
import {
  CLOCK_SKEW_ALLOWANCE_SECONDS,
  challenge,
  checkPayment,
  paymentRequired,
  requirementsFor,
  type PaymentTerms,
} from './protocol';

const TERMS: PaymentTerms = {
  network: 'eip155:196',
  asset: '0x779Ded0c9e1022225f8E0630b35a9b54bE713736',
  assetName: 'USD\u20AE0',
  assetVersion: '1',
  payTo: '0x1111111111111111111111111111111111111111',
};
const NOW_S = 1_800_000_000n;
const PAYER = '0x2222222222222222222222222222222222222222';
const offered = requirementsFor(TERMS, 10_000n);

function header(
  accepted: Partial<PaymentRequirements> = {},
  authorization: Record<string, string> = {},
  extra: Record<string, unknown> = {},
): string {
  return encodePaymentSignatureHeader({
    x402Version: 2,
    resource: { url: 'http://127.0.0.1/ping_service' },
    accepted: { ...offered, ...accepted },
    payload: {
      authorization: {
        from: PAYER,
        to: TERMS.payTo,
        value: '10000',
        validAfter: '0',
        validBefore: String(NOW_S + 300n),
        nonce: `0x${'ab'.repeat(32)}`,
        ...authorization,
      },
      signature: `0x${'11'.repeat(65)}`,
    },
    ...extra,
  } as never);
}

describe('the challenge', () => {
  it('is 402 with body {} and the standard-base64 v2 PaymentRequired, UTF-8 token name intact', () => {
    const result = challenge(
      paymentRequired(
        { url: 'http://127.0.0.1/ping_service', description: 'ping', mimeType: 'application/json' },
        offered,
        'Payment required',
      ),
    );
    expect(result.status).toBe(402);
    expect(result.body).toEqual({});
    const encoded = result.headers!['payment-required'];
    expect(encoded).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
    expect(Buffer.from(encoded, 'base64').toString('utf8')).toContain('"name":"USD\u20AE0"');
    expect(decodePaymentRequiredHeader(encoded)).toEqual({
      x402Version: 2,
      error: 'Payment required',
      resource: {
        url: 'http://127.0.0.1/ping_service',
        description: 'ping',
        mimeType: 'application/json',
      },
      accepts: [
        {
          scheme: 'exact',
          network: 'eip155:196',
          amount: '10000',
          asset: TERMS.asset,
          payTo: TERMS.payTo,
          maxTimeoutSeconds: 300,
          extra: { name: 'USD\u20AE0', version: '1' },
        },
      ],
    });
  });
});

describe('checkPayment', () => {
  it('accepts a payment that echoes the offer and authorizes exactly it (addresses in any case)', () => {
    const check = checkPayment(
      header({
        asset: TERMS.asset.toLowerCase(),
        payTo: TERMS.payTo.toUpperCase().replace('0X', '0x'),
      }),
      offered,
      NOW_S,
    );
    expect(check.ok).toBe(true);
    if (check.ok)
      expect(check.authorization).toMatchObject({
        from: PAYER,
        value: 10_000n,
        validBefore: NOW_S + 300n,
      });
  });

  it('accepts validBefore up to maxTimeoutSeconds plus the clock-skew allowance ahead, not a second more', () => {
    expect(
      checkPayment(
        header({}, { validBefore: String(NOW_S + 300n + CLOCK_SKEW_ALLOWANCE_SECONDS) }),
        offered,
        NOW_S,
      ).ok,
    ).toBe(true);
    expect(
      checkPayment(
        header({}, { validBefore: String(NOW_S + 301n + CLOCK_SKEW_ALLOWANCE_SECONDS) }),
        offered,
        NOW_S,
      ).ok,
    ).toBe(false);
  });

  it.each<[string, string, string]>([
    ['not base64 JSON', '%%%', 'invalid_payload'],
    ['x402 v1', header({}, {}, { x402Version: 1 }), 'invalid_x402_version'],
    ['another scheme', header({ scheme: 'upto' }), 'invalid_scheme'],
    ['another network', header({ network: 'eip155:8453' }), 'invalid_network'],
    ['another asset', header({ asset: PAYER }), 'invalid_payment_requirements'],
    ['another payTo', header({ payTo: PAYER }), 'invalid_exact_evm_recipient_mismatch'],
    [
      'another amount',
      header({ amount: '9999' }),
      'invalid_exact_evm_payload_authorization_value_mismatch',
    ],
    ['another timeout', header({ maxTimeoutSeconds: 60 }), 'invalid_payment_requirements'],
    [
      'another token domain',
      header({ extra: { name: 'USDT0', version: '1' } }),
      'invalid_exact_evm_missing_eip712_domain',
    ],
    [
      'authorization to someone else',
      header({}, { to: PAYER }),
      'invalid_exact_evm_recipient_mismatch',
    ],
    [
      'authorization for less',
      header({}, { value: '9999' }),
      'invalid_exact_evm_payload_authorization_value_mismatch',
    ],
    [
      'authorization expiring now',
      header({}, { validBefore: String(NOW_S + 5n) }),
      'invalid_exact_evm_payload_authorization_valid_before',
    ],
    [
      'authorization valid past maxTimeoutSeconds + the clock allowance',
      header({}, { validBefore: String(NOW_S + 300n + 60n + 1n) }),
      'invalid_exact_evm_payload_authorization_valid_before',
    ],
    [
      'authorization valid until 2^255',
      header({}, { validBefore: String(2n ** 255n) }),
      'invalid_exact_evm_payload_authorization_valid_before',
    ],
    [
      'authorization not valid yet',
      header({}, { validAfter: String(NOW_S + 60n) }),
      'invalid_exact_evm_payload_authorization_valid_after',
    ],
    ['a malformed nonce', header({}, { nonce: '0x1234' }), 'invalid_payload'],
    ['a negative value', header({}, { value: '-1' }), 'invalid_payload'],
  ])('refuses %s', (_name, value, reason) => {
    const check = checkPayment(value, offered, NOW_S);
    expect(check.ok).toBe(false);
    if (!check.ok) expect(check.reason).toBe(reason);
  });
});
