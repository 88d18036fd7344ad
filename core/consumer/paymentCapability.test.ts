// The capability check before signing: exactly an EIP-3009 TransferWithAuthorization inside the
// capability passes (as the official x402 client builds it, signed for real and verified), and
// every mutation of a valid one is refused with its named reason.
import { ExactEvmScheme } from '@x402/evm/exact/client';
import fc from 'fast-check';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { getAddress, hashTypedData, verifyTypedData, type TypedDataDefinition } from 'viem';
import {
  authorizeTypedData,
  CAPABILITY_TTL_SECONDS,
  type CapabilityRefusalReason,
  type HexAddress,
  mintPaymentCapability,
  type PaymentCapability,
} from './paymentCapability';

const TOKEN: HexAddress = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const TREASURY: HexAddress = '0x1111111111111111111111111111111111111111';
const MERCHANT: HexAddress = getAddress('0xabcdef0123456789abcdef0123456789abcdef01');
const MINTED_AT = new Date('2026-11-22T10:00:00.000Z');
const NOW = new Date('2026-11-22T10:00:02.500Z');
const NOW_S = 1_795_341_602n;
const EXPIRY_S = NOW_S - 2n + BigInt(CAPABILITY_TTL_SECONDS);
const CEILING = 50_000n;

function capability(overrides: Partial<PaymentCapability> = {}): PaymentCapability {
  const minted = mintPaymentCapability({
    capabilityId: 'cap_00112233445566778899aabb',
    intentId: 'ci_00112233445566778899aabb',
    network: 'eip155:8453',
    asset: { token: TOKEN, name: 'USD Coin', version: '2' },
    payer: TREASURY,
    ceilingAtomic: CEILING,
    payTo: MERCHANT,
    now: MINTED_AT,
  });
  return { ...minted, redeemedAt: new Date(MINTED_AT.getTime() + 1000), ...overrides };
}

/** What x402's exact client passes to signTypedData, for the full ceiling. */
function validTypedData() {
  return {
    domain: { name: 'USD Coin', version: '2', chainId: 8453, verifyingContract: TOKEN },
    types: {
      TransferWithAuthorization: [
        { name: 'from', type: 'address' },
        { name: 'to', type: 'address' },
        { name: 'value', type: 'uint256' },
        { name: 'validAfter', type: 'uint256' },
        { name: 'validBefore', type: 'uint256' },
        { name: 'nonce', type: 'bytes32' },
      ],
    },
    primaryType: 'TransferWithAuthorization',
    message: {
      from: TREASURY,
      to: MERCHANT,
      value: CEILING,
      validAfter: 0n,
      validBefore: EXPIRY_S,
      nonce: `0x${'ab'.repeat(32)}`,
    },
  } as Record<string, any>;
}

function reasonOf(
  typedData: unknown,
  cap = capability(),
  now = NOW,
): CapabilityRefusalReason | 'OK' {
  const check = authorizeTypedData(cap, typedData, now);
  return check.ok ? 'OK' : check.reason;
}

const otherAddress = (avoid: string) =>
  fc
    .stringMatching(/^[0-9a-f]{40}$/)
    .map((hex) => `0x${hex}` as HexAddress)
    .filter((a) => a.toLowerCase() !== avoid.toLowerCase());

/** One mutation of the valid typed data and the reason it must be refused for. */
const mutation: fc.Arbitrary<{
  name: string;
  reason: CapabilityRefusalReason;
  apply: (t: Record<string, any>) => void;
}> = fc.oneof(
  otherAddress(TOKEN).map((a) => ({
    name: 'token',
    reason: 'TOKEN_MISMATCH' as const,
    apply: (t: any) => void (t.domain.verifyingContract = a),
  })),
  fc
    .integer({ min: 1, max: 2 ** 40 })
    .filter((id) => id !== 8453)
    .map((id) => ({
      name: 'chainId',
      reason: 'CHAIN_ID_MISMATCH' as const,
      apply: (t: any) => void (t.domain.chainId = id),
    })),
  fc.constantFrom('8453', 8453.5, null).map((id) => ({
    name: 'chainId type',
    reason: 'CHAIN_ID_MISMATCH' as const,
    apply: (t: any) => void (t.domain.chainId = id),
  })),
  otherAddress(MERCHANT).map((a) => ({
    name: 'recipient',
    reason: 'RECIPIENT_NOT_ALLOWED' as const,
    apply: (t: any) => void (t.message.to = a),
  })),
  otherAddress(TREASURY).map((a) => ({
    name: 'from',
    reason: 'PAYER_MISMATCH' as const,
    apply: (t: any) => void (t.message.from = a),
  })),
  fc.bigInt({ min: 1n, max: 10n ** 30n }).map((d) => ({
    name: 'value+d',
    reason: 'VALUE_ABOVE_CEILING' as const,
    apply: (t: any) => void (t.message.value = CEILING + d),
  })),
  fc.bigInt({ min: 1n, max: CEILING - 1n }).map((d) => ({
    name: 'value-d',
    reason: 'VALUE_NOT_EXACT' as const,
    apply: (t: any) => void (t.message.value = CEILING - d),
  })),
  fc.constant({
    name: 'value 0',
    reason: 'VALUE_ZERO' as const,
    apply: (t: any) => void (t.message.value = 0n),
  }),
  fc.bigInt({ min: 1n, max: 10n ** 12n }).map((d) => ({
    name: 'validBefore later',
    reason: 'VALID_BEFORE_AFTER_EXPIRY' as const,
    apply: (t: any) => void (t.message.validBefore = EXPIRY_S + d),
  })),
  fc.bigInt({ min: 0n, max: NOW_S }).map((v) => ({
    name: 'validBefore passed',
    reason: 'VALID_BEFORE_PASSED' as const,
    apply: (t: any) => void (t.message.validBefore = v),
  })),
  fc.bigInt({ min: 1n, max: 10n ** 12n }).map((d) => ({
    name: 'validAfter future',
    reason: 'NOT_YET_VALID' as const,
    apply: (t: any) => void (t.message.validAfter = NOW_S + d),
  })),
  fc
    .string()
    .filter((s) => s !== 'TransferWithAuthorization')
    .map((p) => ({
      name: 'primaryType',
      reason: 'PRIMARY_TYPE_NOT_ALLOWED' as const,
      apply: (t: any) => void (t.primaryType = p),
    })),
  fc
    .constantFrom(
      'ReceiveWithAuthorization',
      'CancelAuthorization',
      'PermitWitnessTransferFrom',
      'Permit',
    )
    .map((p) => ({
      name: 'other EIP-3009/permit type',
      reason: 'PRIMARY_TYPE_NOT_ALLOWED' as const,
      apply: (t: any) => void (t.primaryType = p),
    })),
  fc
    .string()
    .filter((s) => s !== 'USD Coin')
    .map((n) => ({
      name: 'domain name',
      reason: 'DOMAIN_NAME_MISMATCH' as const,
      apply: (t: any) => void (t.domain.name = n),
    })),
  fc
    .string()
    .filter((s) => s !== '2')
    .map((v) => ({
      name: 'domain version',
      reason: 'DOMAIN_VERSION_MISMATCH' as const,
      apply: (t: any) => void (t.domain.version = v),
    })),
  fc.constantFrom('salt', 'extra', '__proto__x').map((k) => ({
    name: `domain.${k}`,
    reason: 'DOMAIN_MALFORMED' as const,
    apply: (t: any) => void (t.domain[k] = `0x${'00'.repeat(32)}`),
  })),
  fc.constantFrom('memo', 'data', 'extra').map((k) => ({
    name: `message.${k}`,
    reason: 'MESSAGE_MALFORMED' as const,
    apply: (t: any) => void (t.message[k] = '0x'),
  })),
  fc.constantFrom('account', 'extra', 'signature').map((k) => ({
    name: `top.${k}`,
    reason: 'TYPED_DATA_MALFORMED' as const,
    apply: (t: any) => void (t[k] = 1),
  })),
  fc.constantFrom('EIP712Domain', 'Extra').map((k) => ({
    name: `types.${k}`,
    reason: 'TYPES_NOT_EIP3009' as const,
    apply: (t: any) => void (t.types[k] = [{ name: 'x', type: 'uint256' }]),
  })),
  fc
    .constantFrom(
      (fields: any[]) => fields.reverse(),
      (fields: any[]) => fields.pop(),
      (fields: any[]) => fields.push({ name: 'memo', type: 'bytes' }),
      (fields: any[]) => void (fields[2].type = 'uint128'),
      (fields: any[]) => void (fields[0].indexed = true),
    )
    .map((edit) => ({
      name: 'type fields',
      reason: 'TYPES_NOT_EIP3009' as const,
      apply: (t: any) => void edit(t.types.TransferWithAuthorization),
    })),
  fc.constantFrom('value', 'validAfter', 'validBefore').chain((field) =>
    fc.constantFrom<unknown>(50_000, '50000', -1n, 2n ** 256n, null).map((v) => ({
      name: `${field} type`,
      reason: 'MESSAGE_MALFORMED' as const,
      apply: (t: any) => void (t.message[field] = v),
    })),
  ),
  fc
    .constantFrom<unknown>('0x1234', `0x${'zz'.repeat(32)}`, 7n, `0x${'ab'.repeat(33)}`)
    .map((n) => ({
      name: 'nonce',
      reason: 'MESSAGE_MALFORMED' as const,
      apply: (t: any) => void (t.message.nonce = n),
    })),
  fc.constantFrom('from', 'to', 'value', 'validAfter', 'validBefore', 'nonce').map((k) => ({
    name: `missing ${k}`,
    reason: 'MESSAGE_MALFORMED' as const,
    apply: (t: any) => void delete t.message[k],
  })),
  fc.constantFrom('name', 'version', 'chainId', 'verifyingContract').map((k) => ({
    name: `missing domain.${k}`,
    reason: 'DOMAIN_MALFORMED' as const,
    apply: (t: any) => void delete t.domain[k],
  })),
);

describe('mintPaymentCapability', () => {
  it('mints one intent’s capability: the quote’s payTo only, 5 minutes, not redeemed', () => {
    const minted = mintPaymentCapability({
      capabilityId: 'cap_00112233445566778899aabb',
      intentId: 'ci_00112233445566778899aabb',
      network: 'eip155:8453',
      asset: { token: TOKEN, name: 'USD Coin', version: '2' },
      payer: TREASURY,
      ceilingAtomic: CEILING,
      payTo: MERCHANT,
      now: MINTED_AT,
    });
    expect(minted.recipients).toEqual([MERCHANT]);
    expect(minted.expiresAt.toISOString()).toBe('2026-11-22T10:05:00.000Z');
    expect(minted.redeemedAt).toBeNull();
  });

  it('refuses to mint a malformed capability', () => {
    const base = {
      capabilityId: 'cap_00112233445566778899aabb',
      intentId: 'ci_00112233445566778899aabb',
      network: 'eip155:8453',
      asset: { token: TOKEN, name: 'USD Coin', version: '2' },
      payer: TREASURY,
      ceilingAtomic: CEILING,
      payTo: MERCHANT,
      now: MINTED_AT,
    };
    expect(() => mintPaymentCapability({ ...base, capabilityId: 'cq_001122334455667788' })).toThrow(
      RangeError,
    );
    expect(() => mintPaymentCapability({ ...base, ceilingAtomic: 0n })).toThrow(RangeError);
    expect(() => mintPaymentCapability({ ...base, network: 'solana:mainnet' })).toThrow(RangeError);
    expect(() => mintPaymentCapability({ ...base, payTo: '0x12' })).toThrow(RangeError);
    expect(() => mintPaymentCapability({ ...base, now: new Date(Number.NaN) })).toThrow(RangeError);
  });
});

describe('authorizeTypedData', () => {
  it('accepts the valid typed data and returns exactly it, with the same EIP-712 hash', () => {
    const typedData = validTypedData();
    const check = authorizeTypedData(capability(), typedData, NOW);
    expect(check.ok).toBe(true);
    if (!check.ok) return;
    expect(check.typedData).toEqual(typedData);
    expect(hashTypedData(check.typedData as unknown as TypedDataDefinition)).toBe(
      hashTypedData(typedData as TypedDataDefinition),
    );
  });

  it('refuses a capability that is not redeemed, expired or malformed, whatever the typed data', () => {
    expect(reasonOf(validTypedData(), capability({ redeemedAt: null }))).toBe(
      'CAPABILITY_NOT_REDEEMED',
    );
    expect(
      reasonOf(
        validTypedData(),
        capability(),
        new Date(MINTED_AT.getTime() + CAPABILITY_TTL_SECONDS * 1000),
      ),
    ).toBe('CAPABILITY_EXPIRED');
    expect(reasonOf(validTypedData(), capability({ recipients: [] }))).toBe('CAPABILITY_MALFORMED');
    expect(reasonOf(validTypedData(), capability({ ceilingAtomic: -5n }))).toBe(
      'CAPABILITY_MALFORMED',
    );
    expect(reasonOf(validTypedData(), capability({ intentId: 'ci_short' }))).toBe(
      'CAPABILITY_MALFORMED',
    );
    expect(() => authorizeTypedData(capability(), validTypedData(), new Date(Number.NaN))).toThrow(
      RangeError,
    );
  });

  it('refuses what is not a plain typed-data object', () => {
    for (const bad of [
      null,
      undefined,
      'typed data',
      [],
      new Map(),
      Object.assign(Object.create({ inherited: 1 }), validTypedData()),
    ]) {
      expect(reasonOf(bad)).toBe('TYPED_DATA_MALFORMED');
    }
    const withSymbol = validTypedData();
    (withSymbol.message as Record<symbol, unknown>)[Symbol('x')] = 1;
    expect(reasonOf(withSymbol)).toBe('MESSAGE_MALFORMED');
  });

  it('checks the copies it returns, so a getter cannot show the check one value and the signer another', () => {
    const typedData = validTypedData();
    let reads = 0;
    Object.defineProperty(typedData.message, 'value', {
      enumerable: true,
      get: () => (reads++ === 0 ? CEILING : CEILING * 1000n),
    });
    const check = authorizeTypedData(capability(), typedData, NOW);
    expect(check.ok && check.typedData.message.value).toBe(CEILING);
    expect(reads).toBe(1);
  });

  it('accepts exactly the authorised amount and any validBefore up to the expiry, addresses in any case', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: NOW_S + 1n, max: EXPIRY_S }),
        fc.bigInt({ min: 0n, max: NOW_S }),
        fc.boolean(),
        (validBefore, validAfter, upper) => {
          const typedData = validTypedData();
          Object.assign(typedData.message, { value: CEILING, validBefore, validAfter });
          if (upper) typedData.message.to = `0x${MERCHANT.slice(2).toUpperCase()}`;
          expect(reasonOf(typedData)).toBe('OK');
        },
      ),
    );
  });

  it('property: every mutation of a valid typed data is refused, with its named reason', () => {
    fc.assert(
      fc.property(mutation, ({ reason, apply }) => {
        const typedData = validTypedData();
        apply(typedData);
        expect(reasonOf(typedData)).toBe(reason);
      }),
      { numRuns: 3000 },
    );
  });

  it('accepts what the official x402 client asks to sign, and a real signature of the answer verifies as the treasury', async () => {
    const treasury = privateKeyToAccount(generatePrivateKey());
    const now = new Date();
    const cap: PaymentCapability = {
      ...capability({ payer: treasury.address }),
      expiresAt: new Date(now.getTime() + CAPABILITY_TTL_SECONDS * 1000),
      redeemedAt: now,
    };
    const asked: unknown[] = [];
    const signer = {
      address: treasury.address,
      signTypedData: async (typedData: unknown) => {
        asked.push(typedData);
        const check = authorizeTypedData(cap, typedData, now);
        if (!check.ok) throw new Error(check.reason);
        return treasury.signTypedData(check.typedData as unknown as TypedDataDefinition);
      },
    };
    const requirements = {
      scheme: 'exact',
      network: 'eip155:8453',
      amount: '50000',
      asset: TOKEN,
      payTo: MERCHANT,
      maxTimeoutSeconds: 240,
      extra: { name: 'USD Coin', version: '2' },
    };
    const payload = await new ExactEvmScheme(signer).createPaymentPayload(2, requirements as never);
    expect(asked).toHaveLength(1);
    const signature = (payload.payload as { signature: `0x${string}` }).signature;
    expect(
      await verifyTypedData({
        ...(asked[0] as TypedDataDefinition),
        address: treasury.address,
        signature,
      }),
    ).toBe(true);

    // The same client, asked for more or less than the quote, or a permit2 transfer, gets no signature.
    await expect(
      new ExactEvmScheme(signer).createPaymentPayload(2, {
        ...requirements,
        amount: '50001',
      } as never),
    ).rejects.toThrow('VALUE_ABOVE_CEILING');
    await expect(
      new ExactEvmScheme(signer).createPaymentPayload(2, {
        ...requirements,
        amount: '49999',
      } as never),
    ).rejects.toThrow('VALUE_NOT_EXACT');
    await expect(
      new ExactEvmScheme(signer).createPaymentPayload(2, {
        ...requirements,
        extra: { ...requirements.extra, assetTransferMethod: 'permit2' },
      } as never),
    ).rejects.toThrow('PRIMARY_TYPE_NOT_ALLOWED');
  });

  it('refuses the official client’s authorization when the merchant’s maxTimeoutSeconds outlives the capability', async () => {
    // x402 sets validBefore = now + maxTimeoutSeconds; a capability minted earlier with the same
    // 5 minutes ends sooner, so a 300-second merchant timeout cannot be signed.
    const treasury = privateKeyToAccount(generatePrivateKey());
    const mintedAt = new Date(Date.now() - 1000);
    const cap: PaymentCapability = {
      ...capability({ payer: treasury.address }),
      expiresAt: new Date(mintedAt.getTime() + CAPABILITY_TTL_SECONDS * 1000),
      redeemedAt: mintedAt,
    };
    const signer = {
      address: treasury.address,
      signTypedData: async (typedData: unknown) => {
        const check = authorizeTypedData(cap, typedData, new Date());
        if (!check.ok) throw new Error(check.reason);
        return treasury.signTypedData(check.typedData as unknown as TypedDataDefinition);
      },
    };
    const requirements = {
      scheme: 'exact',
      network: 'eip155:8453',
      amount: '50000',
      asset: TOKEN,
      payTo: MERCHANT,
      maxTimeoutSeconds: 300,
      extra: { name: 'USD Coin', version: '2' },
    };
    await expect(
      new ExactEvmScheme(signer).createPaymentPayload(2, requirements as never),
    ).rejects.toThrow('VALID_BEFORE_AFTER_EXPIRY');
  });
});
