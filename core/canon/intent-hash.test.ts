// The SpendIntent EIP-712 hash against a digest computed by hand from the type string, a wallet
// signature round trip, and the property that amount, recipient, item and deadline are bound.
import fc from 'fast-check';
import { hashTypedData, keccak256, recoverTypedDataAddress, stringToBytes, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import {
  hashSpendIntentMessage,
  intentHash,
  itemHash,
  SPEND_INTENT_DOMAIN,
  SPEND_INTENT_TYPE_STRING,
  SPEND_INTENT_TYPES,
  spendIntentMessage,
  spendIntentTypedData,
  type SpendIntentFields,
  type SpendIntentMessage,
} from './intent-hash';
import { canonicalJson } from './jcs';

// The type string exactly as DECISIONS.md states it (one line, no spaces after commas).
const DECISIONS_TYPE_STRING =
  'SpendIntent(uint256 policyId,bytes32 policyHash,string agentId,string category,string provider,string capability,bytes32 itemHash,address recipient,string network,address token,uint256 amount,uint256 deadline,uint256 nonce,string endpoint)';

const ITEM = { description: 'EURUSD 1m candles, 24h', params: { pair: 'EURUSD' } };

const FIELDS: SpendIntentFields = {
  policyId: '76020000000000000000000000000000000000000000000000000000000000000001',
  policyHash: '0x9f0c2b6a4d7e5f1a3c8b2d4e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192',
  agentId: 'research-bot-1',
  category: 'market-data',
  provider: 'api.vendor.example',
  capability: 'quotes.read',
  itemHash: itemHash(ITEM),
  recipient: '0x2222222222222222222222222222222222222222',
  network: 'eip155:196',
  token: '0x779DED0C9E1022225F8E0630B35A9B54BE713736',
  amountAtomic: 50_000n,
  deadlineUnixSeconds: 1_795_342_400,
  nonce: 1n,
  endpoint: 'HTTPS://API.Vendor.Example:443/candles?b=2&a=1#top',
};

// ---- An EIP-712 digest computed by hand from the type string, sharing no code with viem's encoder.
const word = (value: bigint): Buffer => Buffer.from(value.toString(16).padStart(64, '0'), 'hex');
const hashBytes = (bytes: Uint8Array): Buffer => Buffer.from(keccak256(bytes).slice(2), 'hex');
const hashText = (text: string): Buffer => hashBytes(stringToBytes(text));
const fromHex = (hex: string): Buffer => Buffer.from(hex.slice(2), 'hex');

function encodeField(type: string, value: unknown): Buffer {
  switch (type) {
    case 'uint256':
      return word(value as bigint);
    case 'bytes32':
      return fromHex(value as string);
    case 'address':
      return Buffer.concat([Buffer.alloc(12), fromHex(value as string)]);
    case 'string':
      return hashText(value as string);
    default:
      throw new Error(`no encoder for ${type}`);
  }
}

function digestByHand(message: SpendIntentMessage): Hex {
  // Parse the member list out of the type string itself, so field order comes from the spec text.
  const members = DECISIONS_TYPE_STRING.slice('SpendIntent('.length, -1)
    .split(',')
    .map((member) => member.split(' ') as [string, string]);
  const encoded = members.map(([type, name]) =>
    encodeField(type, (message as unknown as Record<string, unknown>)[name]),
  );
  const structHash = hashBytes(Buffer.concat([hashText(DECISIONS_TYPE_STRING), ...encoded]));
  const domainSeparator = hashBytes(
    Buffer.concat([
      hashText('EIP712Domain(string name,string version,uint256 chainId)'),
      hashText('AgentSpendControl'),
      hashText('1'),
      word(196n),
    ]),
  );
  return `0x${hashBytes(Buffer.concat([Buffer.from([0x19, 0x01]), domainSeparator, structHash])).toString('hex')}`;
}

describe('the SpendIntent typed data', () => {
  it('declares exactly the primary type of DECISIONS.md', () => {
    const rendered = `SpendIntent(${SPEND_INTENT_TYPES.SpendIntent.map((f) => `${f.type} ${f.name}`).join(',')})`;
    expect(rendered).toBe(DECISIONS_TYPE_STRING);
    expect(SPEND_INTENT_TYPE_STRING).toBe(DECISIONS_TYPE_STRING);
    expect(SPEND_INTENT_DOMAIN).toEqual({ name: 'AgentSpendControl', version: '1', chainId: 196 });
  });

  it('builds the message in hashed units: canonical endpoint, lowercase addresses, unix-second deadline', () => {
    const message = spendIntentMessage(FIELDS);
    expect(message.endpoint).toBe('https://api.vendor.example/candles?a=1&b=2');
    expect(message.token).toBe('0x779ded0c9e1022225f8e0630b35a9b54be713736');
    expect(message.deadline).toBe(1_795_342_400n);
    expect(message.policyId).toBe(BigInt(FIELDS.policyId));
    expect(message.itemHash).toBe(keccak256(stringToBytes(canonicalJson(ITEM))));
  });
});

describe('intentHash', () => {
  it('equals an EIP-712 digest computed by hand from the type string', () => {
    const message = spendIntentMessage(FIELDS);
    expect(intentHash(FIELDS)).toBe(digestByHand(message));
  });

  it('equals the hand computation for other field values too', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10n ** 30n - 1n }),
        fc.string({ maxLength: 40 }),
        fc.uint8Array({ minLength: 20, maxLength: 20 }),
        (amountAtomic, agentId, recipientBytes) => {
          const fields = {
            ...FIELDS,
            amountAtomic,
            agentId,
            recipient: `0x${Buffer.from(recipientBytes).toString('hex')}`,
          };
          expect(intentHash(fields)).toBe(digestByHand(spendIntentMessage(fields)));
        },
      ),
      { numRuns: 50 },
    );
  });

  it("equals viem's generic hashTypedData over the wallet typed data, for any message", () => {
    const word = (bytes: number) =>
      fc
        .uint8Array({ minLength: bytes, maxLength: bytes })
        .map((value) => `0x${Buffer.from(value).toString('hex')}` as Hex);
    const uint256 = fc.bigInt({ min: 0n, max: (1n << 256n) - 1n });
    const text = fc.string({ unit: 'grapheme', maxLength: 60 });
    fc.assert(
      fc.property(
        fc.record({
          policyId: uint256,
          policyHash: word(32),
          agentId: text,
          category: text,
          provider: text,
          capability: text,
          itemHash: word(32),
          recipient: word(20),
          network: text,
          token: word(20),
          amount: uint256,
          deadline: uint256,
          nonce: uint256,
          endpoint: text,
        }),
        (message) => {
          expect(hashSpendIntentMessage(message as SpendIntentMessage)).toBe(
            hashTypedData(spendIntentTypedData(message as SpendIntentMessage)),
          );
        },
      ),
      { numRuns: 1_000 },
    );
  });

  it('refuses a message whose words do not fit their EIP-712 types', () => {
    const message = spendIntentMessage(FIELDS);
    expect(() => hashSpendIntentMessage({ ...message, amount: 1n << 256n })).toThrow(
      'amount is not a uint256',
    );
    expect(() => hashSpendIntentMessage({ ...message, nonce: -1n })).toThrow(
      'nonce is not a uint256',
    );
    expect(() => hashSpendIntentMessage({ ...message, policyHash: '0x1234' })).toThrow(
      'policyHash is not a bytes32',
    );
    expect(() => hashSpendIntentMessage({ ...message, recipient: '0x12' })).toThrow(
      'recipient is not an address',
    );
  });

  it('stays pinned for the reference intent (any drift here breaks every stored approval)', () => {
    expect(intentHash(FIELDS)).toBe(digestByHand(spendIntentMessage(FIELDS)));
    expect(intentHash(FIELDS)).toBe(
      '0xa63609a48ea22f1e23fffa4e8522cca1ab26ae9a76f533081ee7c752f4fc52cb',
    );
  });

  it('does not depend on the spelling of the endpoint or address case', () => {
    const respelled = {
      ...FIELDS,
      endpoint: 'https://api.vendor.example/candles?a=1&b=2',
      token: FIELDS.token.toLowerCase(),
    };
    expect(intentHash(respelled)).toBe(intentHash(FIELDS));
  });

  it('is what a wallet signs: a signature over the typed data recovers the signer', async () => {
    const owner = privateKeyToAccount(`0x${'5a'.repeat(32)}`);
    const typedData = spendIntentTypedData(spendIntentMessage(FIELDS));
    const signature = await owner.signTypedData(typedData);
    await expect(recoverTypedDataAddress({ ...typedData, signature })).resolves.toBe(owner.address);
    expect(hashSpendIntentMessage(typedData.message)).toBe(intentHash(FIELDS));
  });

  describe('binds amount, recipient, item and deadline', () => {
    const baseHash = intentHash(FIELDS);
    const baseItem = canonicalJson(ITEM);
    const address = fc
      .uint8Array({ minLength: 20, maxLength: 20 })
      .map((b) => `0x${Buffer.from(b).toString('hex')}`);
    const change = fc.oneof(
      fc
        .bigInt({ min: 1n, max: 10n ** 30n - 1n })
        .filter((a) => a !== FIELDS.amountAtomic)
        .map((amountAtomic) => ({ amountAtomic })),
      address
        .filter((a) => a !== FIELDS.recipient.toLowerCase())
        .map((recipient) => ({ recipient })),
      fc
        .integer({ min: 1, max: 2 ** 40 })
        .filter((d) => d !== FIELDS.deadlineUnixSeconds)
        .map((deadlineUnixSeconds) => ({ deadlineUnixSeconds })),
      fc
        .dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 })
        .filter((item) => canonicalJson(item) !== baseItem)
        .map((item) => ({ itemHash: itemHash(item) })),
    );

    it('any change to one of them gives a different intentHash', () => {
      fc.assert(
        fc.property(change, (changed) => {
          expect(intentHash({ ...FIELDS, ...changed })).not.toBe(baseHash);
        }),
        { numRuns: 10_000 },
      );
    });
  });
});
