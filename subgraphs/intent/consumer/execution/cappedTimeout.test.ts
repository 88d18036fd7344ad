// The maxTimeoutSeconds wrapper: the inner exact-EVM scheme signs validBefore within the
// capability's life, while the requirements the client echoes as `accepted` stay the merchant's.
import { x402Client } from '@x402/core/client';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  CappedTimeoutScheme,
  CapabilityTooShortError,
  cappedTimeoutSeconds,
  MIN_TIMEOUT_SECONDS,
  TIMEOUT_MARGIN_SECONDS,
} from './cappedTimeout';

const TOKEN = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const PAY_TO = '0xabcdef0123456789abcdef0123456789abcdef01';

function required(maxTimeoutSeconds: number): PaymentRequired {
  const requirements: PaymentRequirements = {
    scheme: 'exact',
    network: 'eip155:8453',
    amount: '50000',
    asset: TOKEN,
    payTo: PAY_TO,
    maxTimeoutSeconds,
    extra: { name: 'USD Coin', version: '2' },
  };
  return {
    x402Version: 2,
    resource: {
      url: 'http://127.0.0.1/domains/check?domain=a.test',
      description: '',
      mimeType: '',
    },
    accepts: [requirements],
  } as PaymentRequired;
}

describe('cappedTimeoutSeconds', () => {
  const now = new Date('2026-11-22T10:00:00.400Z');
  test('keeps a request shorter than the capability’s life', () => {
    expect(cappedTimeoutSeconds(60, new Date(now.getTime() + 300_000), now)).toBe(60);
  });
  test('caps a request reaching past the expiry to the remaining whole seconds less the margin', () => {
    const expiresAt = new Date(now.getTime() + 299_000);
    const capped = cappedTimeoutSeconds(300, expiresAt, now);
    expect(capped).toBe(
      Math.floor(expiresAt.getTime() / 1000) -
        Math.ceil(now.getTime() / 1000) -
        TIMEOUT_MARGIN_SECONDS,
    );
    expect(Math.floor(now.getTime() / 1000) + capped).toBeLessThan(expiresAt.getTime() / 1000);
  });
  test('refuses when too little life is left for a merchant to verify', () => {
    const expiresAt = new Date(
      now.getTime() + (MIN_TIMEOUT_SECONDS + TIMEOUT_MARGIN_SECONDS - 1) * 1000,
    );
    expect(() => cappedTimeoutSeconds(300, expiresAt, now)).toThrow(CapabilityTooShortError);
  });
});

describe('CappedTimeoutScheme inside the official client', () => {
  test('signs validBefore within the capability; `accepted` is the merchant’s requirements verbatim', async () => {
    const payer = privateKeyToAccount(generatePrivateKey());
    const expiresAt = new Date(Date.now() + 120_000);
    const client = new x402Client().register(
      'eip155:8453',
      new CappedTimeoutScheme(new ExactEvmScheme(payer), expiresAt),
    );
    client.setSpendControls({
      allowedAssets: [{ network: 'eip155:8453', asset: TOKEN, maxAmountPerPayment: '50000' }],
    });
    const challenge = required(300);
    const payload = await client.createPaymentPayload(challenge);
    expect(payload.accepted).toEqual(challenge.accepts[0]);
    const authorization = (payload.payload as { authorization: { validBefore: string } })
      .authorization;
    expect(BigInt(authorization.validBefore)).toBeLessThanOrEqual(
      BigInt(Math.floor(expiresAt.getTime() / 1000)),
    );
    expect(BigInt(authorization.validBefore)).toBeGreaterThan(
      BigInt(Math.floor(Date.now() / 1000) + 100),
    );
  });

  test('spend controls refuse more than the ceiling before anything is signed', async () => {
    let signed = 0;
    const payer = privateKeyToAccount(generatePrivateKey());
    const counting = {
      address: payer.address,
      signTypedData: (data: never) => {
        signed += 1;
        return payer.signTypedData(data);
      },
    };
    const client = new x402Client().register(
      'eip155:8453',
      new CappedTimeoutScheme(new ExactEvmScheme(counting), new Date(Date.now() + 120_000)),
    );
    client.setSpendControls({
      allowedAssets: [{ network: 'eip155:8453', asset: TOKEN, maxAmountPerPayment: '49999' }],
    });
    await expect(client.createPaymentPayload(required(60))).rejects.toThrow(/spendControls/);
    expect(signed).toBe(0);
  });
});
