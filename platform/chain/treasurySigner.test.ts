// The treasury signer: it signs exactly what the payment capability allows (the signature
// recovers to the treasury over the checked typed data), refuses anything outside it without
// signing, and never lets its key out through JSON, strings or inspection.
import { inspect } from 'node:util';
import { getAddress, recoverTypedDataAddress } from 'viem';
import {
  mintPaymentCapability,
  type PaymentCapability,
} from '../../core/consumer/paymentCapability';
import { RoleKey } from './keys';
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from './tokens';
import { CapabilityRefusedError, createTreasurySigner } from './treasurySigner';

const treasury = RoleKey.generate('treasury');
const TOKEN = getAddress('0x833589fcd6edb6e08f4c7c32d4f71b54bda02913');
const MERCHANT = getAddress('0xabcdef0123456789abcdef0123456789abcdef01');
const NOW = new Date('2026-11-22T10:00:00.000Z');
const NOW_S = BigInt(NOW.getTime() / 1000);

function capability(overrides: Partial<PaymentCapability> = {}): PaymentCapability {
  const minted = mintPaymentCapability({
    capabilityId: 'cap_00112233445566778899aabb',
    intentId: 'ci_00112233445566778899aabb',
    network: 'eip155:8453',
    asset: { token: TOKEN, name: 'USD Coin', version: '2' },
    payer: treasury.address,
    ceilingAtomic: 50_000n,
    payTo: MERCHANT,
    now: NOW,
  });
  return { ...minted, redeemedAt: NOW, ...overrides };
}

function typedData(message: Partial<Record<string, unknown>> = {}) {
  return {
    domain: { name: 'USD Coin', version: '2', chainId: 8453, verifyingContract: TOKEN },
    types: {
      TransferWithAuthorization: TRANSFER_WITH_AUTHORIZATION_TYPES.TransferWithAuthorization.map(
        (field) => ({ ...field }),
      ),
    },
    primaryType: 'TransferWithAuthorization',
    message: {
      from: treasury.address,
      to: MERCHANT,
      value: 50_000n,
      validAfter: 0n,
      validBefore: NOW_S + 60n,
      nonce: `0x${'ab'.repeat(32)}`,
      ...message,
    },
  };
}

describe('treasury signer', () => {
  const signer = createTreasurySigner(treasury);

  test('signs typed data inside the capability; the signature recovers to the treasury', async () => {
    const signed = await signer.signTransferAuthorization(capability(), typedData(), NOW);
    const recovered = await recoverTypedDataAddress({
      ...signed.typedData,
      types: TRANSFER_WITH_AUTHORIZATION_TYPES,
      signature: signed.signature,
    });
    expect(recovered).toBe(treasury.address);
    expect(signed.typedData.message.value).toBe(50_000n);
  });

  test.each([
    ['VALUE_ABOVE_CEILING', {}, { value: 50_001n }],
    ['VALUE_NOT_EXACT', {}, { value: 49_999n }],
    ['RECIPIENT_NOT_ALLOWED', {}, { to: getAddress(`0x${'12'.repeat(20)}`) }],
    ['PAYER_MISMATCH', {}, { from: getAddress(`0x${'34'.repeat(20)}`) }],
    ['VALID_BEFORE_AFTER_EXPIRY', {}, { validBefore: NOW_S + 301n }],
    ['CAPABILITY_NOT_REDEEMED', { redeemedAt: null }, {}],
    ['CAPABILITY_EXPIRED', { expiresAt: NOW }, {}],
  ] as const)('refuses %s and signs nothing', async (reason, capabilityChange, messageChange) => {
    const refused = signer.signTransferAuthorization(
      capability(capabilityChange as Partial<PaymentCapability>),
      typedData(messageChange),
      NOW,
    );
    await expect(refused).rejects.toBeInstanceOf(CapabilityRefusedError);
    await expect(refused).rejects.toMatchObject({ reason });
  });

  test('refuses a permit or any other primary type', async () => {
    await expect(
      signer.signTransferAuthorization(
        capability(),
        { ...typedData(), primaryType: 'PermitWitnessTransferFrom' },
        NOW,
      ),
    ).rejects.toMatchObject({ reason: 'PRIMARY_TYPE_NOT_ALLOWED' });
  });

  test('refuses a capability naming another payer', async () => {
    const other = RoleKey.generate('treasury');
    await expect(
      signer.signTransferAuthorization(capability({ payer: other.address }), typedData(), NOW),
    ).rejects.toMatchObject({ reason: 'PAYER_MISMATCH' });
  });

  test('the key never leaves: not in JSON, strings, inspection or any property', () => {
    const secret = treasury.exportPrivateKey().slice(2);
    const views = [
      JSON.stringify(signer),
      String(signer),
      inspect(signer, { depth: 10, showHidden: true }),
      JSON.stringify(
        Object.getOwnPropertyNames(signer).map((name) => String((signer as never)[name])),
      ),
    ];
    for (const view of views) expect(view.toLowerCase()).not.toContain(secret.toLowerCase());
    expect(Object.keys(signer).sort()).toEqual([
      'address',
      'signRefundAuthorization',
      'signTransferAuthorization',
    ]);
  });

  test('only the treasury key makes a treasury signer', () => {
    expect(() => createTreasurySigner(RoleKey.generate('relayer'))).toThrow(/treasury key/);
  });
});
