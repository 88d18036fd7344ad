import fc from 'fast-check';
import { authorizationTypes } from '@x402/evm';
import { RECEIPT_TYPES } from '@x402/extensions/offer-receipt';
import { bytesToHex, checksumAddress, hashTypedData, type Hex } from 'viem';
import { hashTypedDataFast, shortPathDigest } from './eip712';

type Input = Parameters<typeof hashTypedData>[0];

/** viem's answer: the digest, or 'throws' where viem refuses the input. */
function viemDigest(input: Input): string {
  try {
    return hashTypedData(input);
  } catch {
    return 'throws';
  }
}

/** Ours; the random inputs also count how often the short path answered, so the test shows it was used. */
let shortPathAnswers = 0;
function ourDigest(input: Input): string {
  if (shortPathDigest(input) !== null) shortPathAnswers += 1;
  try {
    return hashTypedDataFast(input);
  } catch {
    return 'throws';
  }
}

const hexBytes = (size: number) =>
  fc.uint8Array({ minLength: size, maxLength: size }).map((b) => bytesToHex(b));
const lowerAddress = hexBytes(20);
/** Addresses as callers write them: lower case, checksummed, upper case, or one letter's case flipped. */
const anyAddress = fc.oneof(
  { arbitrary: lowerAddress, weight: 3 },
  { arbitrary: lowerAddress.map((a) => checksumAddress(a)), weight: 3 },
  lowerAddress.map((a) => `0x${a.slice(2).toUpperCase()}` as Hex),
  lowerAddress.map((a) => {
    const checksummed = checksumAddress(a);
    const at = checksummed.slice(2).search(/[a-fA-F]/);
    if (at < 0) return checksummed;
    const c = checksummed[at + 2]!;
    const flipped = c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase();
    return `${checksummed.slice(0, at + 2)}${flipped}${checksummed.slice(at + 3)}` as Hex;
  }),
);
const uint256 = fc.oneof(
  fc.bigInt({ min: 0n, max: (1n << 256n) - 1n }),
  fc.constantFrom(0n, (1n << 256n) - 1n, 1n << 256n, -1n),
  fc.integer({ min: 0, max: 2 ** 31 }),
);
const text = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.constant('\ud800 lone surrogate'),
);
const domain = fc.record(
  {
    name: text,
    version: fc.oneof(fc.constant('2'), text),
    chainId: fc.oneof(
      fc.integer({ min: 1, max: 1_000_000 }),
      fc.bigInt({ min: 1n, max: 1n << 64n }),
    ),
    verifyingContract: anyAddress,
  },
  { requiredKeys: [] },
);

describe('hashTypedDataFast against viem hashTypedData', () => {
  it('takes the short path for the paid path’s own inputs: a checksummed authorization, a receipt', () => {
    const domain = {
      name: 'USD₮0',
      version: '1',
      chainId: 196,
      verifyingContract: checksumAddress(`0x${'3c'.repeat(20)}`),
    };
    const authorization = {
      types: authorizationTypes,
      primaryType: 'TransferWithAuthorization',
      domain,
      message: {
        from: checksumAddress(`0x${'a1'.repeat(20)}`),
        to: `0x${'b2'.repeat(20)}`,
        value: 50_000n,
        validAfter: 0n,
        validBefore: 1_900_000_000n,
        nonce: `0x${'07'.repeat(32)}`,
      },
    } as unknown as Input;
    const receipt = {
      types: RECEIPT_TYPES,
      primaryType: 'Receipt',
      domain: { name: 'x402 receipt', version: '1', chainId: 1 },
      message: {
        version: 1n,
        network: 'eip155:196',
        resourceUrl: 'http://127.0.0.1/ping_service',
        payer: `0x${'a1'.repeat(20)}`,
        issuedAt: 1_800_000_000n,
        transaction: `0x${'ee'.repeat(32)}`,
      },
    } as unknown as Input;
    for (const input of [authorization, receipt]) {
      expect(shortPathDigest(input)).toBe(hashTypedData(input));
      // Asked again, from the kept domain separator and type hash: the same digest.
      expect(shortPathDigest(input)).toBe(hashTypedData(input));
    }
  });

  it('gives viem’s digest for EIP-3009 authorizations, or refuses where viem refuses', () => {
    shortPathAnswers = 0;
    fc.assert(
      fc.property(
        domain,
        anyAddress,
        anyAddress,
        uint256,
        uint256,
        uint256,
        fc.oneof({ arbitrary: hexBytes(32), weight: 6 }, hexBytes(31), hexBytes(33)),
        (dom, from, to, value, validAfter, validBefore, nonce) => {
          const input = {
            types: authorizationTypes,
            primaryType: 'TransferWithAuthorization',
            domain: dom,
            message: { from, to, value, validAfter, validBefore, nonce },
          } as unknown as Input;
          expect(ourDigest(input)).toBe(viemDigest(input));
        },
      ),
      { numRuns: 400 },
    );
    expect(shortPathAnswers).toBeGreaterThan(40);
  });

  it('gives viem’s digest for x402 receipts (strings, uint256, a string payer)', () => {
    shortPathAnswers = 0;
    fc.assert(
      fc.property(
        domain,
        uint256,
        text,
        text,
        text,
        uint256,
        text,
        (dom, version, network, resourceUrl, payer, issuedAt, transaction) => {
          const input = {
            types: RECEIPT_TYPES,
            primaryType: 'Receipt',
            domain: dom,
            message: { version, network, resourceUrl, payer, issuedAt, transaction },
          } as unknown as Input;
          expect(ourDigest(input)).toBe(viemDigest(input));
        },
      ),
      { numRuns: 300 },
    );
    expect(shortPathAnswers).toBeGreaterThan(100);
  });

  it('hands whatever it does not take to viem: nested structs, arrays, declared domains, odd values', () => {
    const base = { domain: { name: 'x', chainId: 1 }, primaryType: 'Mail' };
    const cases: Input[] = [
      // a nested struct
      {
        ...base,
        types: {
          Mail: [
            { name: 'from', type: 'Person' },
            { name: 'body', type: 'string' },
          ],
          Person: [{ name: 'wallet', type: 'address' }],
        },
        message: { from: { wallet: `0x${'11'.repeat(20)}` }, body: 'hi' },
      },
      // an array, dynamic bytes, a signed integer
      {
        ...base,
        types: {
          Mail: [
            { name: 'to', type: 'address[]' },
            { name: 'data', type: 'bytes' },
            { name: 'delta', type: 'int256' },
          ],
        },
        message: { to: [`0x${'22'.repeat(20)}`], data: '0xdeadbeef', delta: -5n },
      },
      // a declared EIP712Domain
      {
        ...base,
        types: {
          EIP712Domain: [{ name: 'name', type: 'string' }],
          Mail: [{ name: 'body', type: 'string' }],
        },
        domain: { name: 'x' },
        message: { body: 'hi' },
      },
      // uint8 out of range, a missing field, a number where a string goes, a bad struct name
      { ...base, types: { Mail: [{ name: 'n', type: 'uint8' }] }, message: { n: 256 } },
      { ...base, types: { Mail: [{ name: 'n', type: 'uint8' }] }, message: {} },
      { ...base, types: { Mail: [{ name: 'body', type: 'string' }] }, message: { body: 7 } },
      {
        ...base,
        primaryType: 'uint256',
        types: { uint256: [{ name: 'b', type: 'bool' }] },
        message: { b: true },
      },
      // a bool, bytes4, a salted domain, a domain with a null field, an extra domain key
      {
        ...base,
        types: {
          Mail: [
            { name: 'ok', type: 'bool' },
            { name: 'tag', type: 'bytes4' },
          ],
        },
        message: { ok: true, tag: '0xcafebabe' },
      },
      {
        ...base,
        domain: { name: 'x', salt: `0x${'ab'.repeat(32)}` },
        types: { Mail: [{ name: 'ok', type: 'bool' }] },
        message: { ok: false },
      },
      {
        ...base,
        domain: { name: 'x', version: null, chainId: 5 },
        types: { Mail: [{ name: 'ok', type: 'bool' }] },
        message: { ok: true },
      },
      {
        ...base,
        domain: { name: 'x', chainId: 5, extra: 'ignored by viem' },
        types: { Mail: [{ name: 'ok', type: 'bool' }] },
        message: { ok: true },
      },
      // a bad checksum in the domain's verifying contract
      {
        ...base,
        domain: { name: 'x', verifyingContract: `0x${'aB'.repeat(20)}` },
        types: { Mail: [{ name: 'ok', type: 'bool' }] },
        message: { ok: true },
      },
    ] as unknown as Input[];
    const answers = cases.map((input) => [ourDigest(input), viemDigest(input)]);
    for (const [ours, theirs] of answers) expect(ours).toBe(theirs);
    // The short path declines the nested struct, the array, the declared domain and the odd values.
    for (const index of [0, 1, 2, 3, 4, 5, 6, 10, 11])
      expect(shortPathDigest(cases[index]!)).toBeNull();
    // ...and takes the flat ones viem hashes (bool, bytes4, a salt, a null domain field).
    for (const index of [7, 8, 9])
      expect(shortPathDigest(cases[index]!)).toBe(viemDigest(cases[index]!));
    // The cases include both kinds: some viem hashes, some it refuses.
    expect(answers.some(([, theirs]) => theirs === 'throws')).toBe(true);
    expect(answers.some(([, theirs]) => theirs !== 'throws')).toBe(true);
  });
});
