import fc from 'fast-check';
import { bytesToHex, type Hex, hexToBigInt, numberToHex, recoverAddress, size } from 'viem';
import { privateKeyToAccount, sign as viemSign } from 'viem/accounts';
import { recoverSigner, signDigest, transactionSigner, typedDataSigner } from './secp256k1';

/** secp256k1's group order. */
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

const bytes32 = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => bytesToHex(b));
/** A valid private key: nonzero and below the order. */
const privateKey = bytes32.filter((k) => {
  const d = hexToBigInt(k);
  return d > 0n && d < N;
});

/** viem's answer: the recovered address, lowercase, or null where viem throws. */
async function viemRecover(digest: Hex, signature: Hex): Promise<string | null> {
  try {
    return (await recoverAddress({ hash: digest, signature })).toLowerCase();
  } catch {
    return null;
  }
}

function withS(signature: Hex, s: bigint): Hex {
  return `${signature.slice(0, 66)}${numberToHex(s, { size: 32 }).slice(2)}${signature.slice(130)}` as Hex;
}

function withV(signature: Hex, v: number): Hex {
  return `${signature.slice(0, 130)}${v.toString(16).padStart(2, '0')}` as Hex;
}

describe('secp256k1 (tiny-secp256k1) against viem', () => {
  it('signs digests byte for byte as viem does (RFC 6979, low s, v 27/28)', async () => {
    await fc.assert(
      fc.asyncProperty(privateKey, bytes32, async (key, digest) => {
        const ours = signDigest(digest, key);
        const theirs = await viemSign({ hash: digest, privateKey: key, to: 'hex' });
        expect(ours).toBe(theirs);
      }),
      { numRuns: 200 },
    );
  });

  it('recovers the signer viem recovers, also from v 0/1 and from the high-s twin', async () => {
    await fc.assert(
      fc.asyncProperty(privateKey, bytes32, async (key, digest) => {
        const signer = privateKeyToAccount(key).address.toLowerCase();
        const signature = signDigest(digest, key);
        expect(recoverSigner(digest, signature)).toBe(signer);
        const v = parseInt(signature.slice(130), 16);
        const lowV = withV(signature, v - 27);
        expect(recoverSigner(digest, lowV)).toBe(await viemRecover(digest, lowV));
        // (r, n - s) with the other recovery bit recovers the same key; with the same bit, another.
        const s = hexToBigInt(`0x${signature.slice(66, 130)}`);
        const highS = withS(signature, N - s);
        for (const twin of [highS, withV(highS, v === 27 ? 28 : 27)])
          expect(recoverSigner(digest, twin)).toBe(await viemRecover(digest, twin));
        expect(recoverSigner(digest, withV(highS, v === 27 ? 28 : 27))).toBe(signer);
      }),
      { numRuns: 100 },
    );
  });

  it('refuses what viem refuses: a bad v, r or s of zero or at the order, a short signature', async () => {
    const key = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d' as Hex;
    const digest = `0x${'ab'.repeat(32)}` as Hex;
    const good = signDigest(digest, key);
    const zeroR = `0x${'00'.repeat(32)}${good.slice(66)}` as Hex;
    const bad: Hex[] = [
      withV(good, 2),
      withV(good, 29),
      withV(good, 35),
      withS(good, 0n),
      withS(good, N),
      zeroR,
      good.slice(0, 130) as Hex,
    ];
    for (const signature of bad) {
      expect(recoverSigner(digest, signature)).toBeNull();
      if (size(signature) === 65) expect(await viemRecover(digest, signature)).toBeNull();
    }
  });

  it('recovers what viem recovers from arbitrary 65 bytes', async () => {
    const signature65 = fc
      .tuple(fc.uint8Array({ minLength: 64, maxLength: 64 }), fc.constantFrom(0, 1, 27, 28))
      .map(([rs, v]) => bytesToHex(Uint8Array.from([...rs, v])));
    await fc.assert(
      fc.asyncProperty(bytes32, signature65, async (digest, signature) => {
        expect(recoverSigner(digest, signature)).toBe(await viemRecover(digest, signature));
      }),
      { numRuns: 200 },
    );
  });

  it("signs EIP-712 typed data as a viem account does (an x402 receipt's shape)", async () => {
    const key = '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba' as Hex;
    const typedData = {
      domain: { name: 'x402 receipt', version: '1', chainId: 31337 },
      types: {
        Receipt: [
          { name: 'resourceUrl', type: 'string' },
          { name: 'payer', type: 'address' },
          { name: 'issuedAt', type: 'uint256' },
        ],
      },
      primaryType: 'Receipt',
      message: {
        resourceUrl: 'http://127.0.0.1/v1/preflight',
        payer: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
        issuedAt: 1_764_000_000n,
      },
    } as const;
    const signer = typedDataSigner(key);
    const account = privateKeyToAccount(key);
    expect(signer.address).toBe(account.address);
    expect(await signer.signTypedData(typedData)).toBe(await account.signTypedData(typedData));
  });

  it('refuses a key that is not a secp256k1 private key', () => {
    expect(() => typedDataSigner(`0x${'00'.repeat(32)}`)).toThrow('not a secp256k1 private key');
    expect(() => typedDataSigner(numberToHex(N, { size: 32 }))).toThrow(
      'not a secp256k1 private key',
    );
  });
});

describe('transactionSigner against a viem local account', () => {
  const address = fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => bytesToHex(b));
  const data = fc.uint8Array({ maxLength: 300 }).map((b) => bytesToHex(b));
  const eip1559 = fc.record({
    type: fc.constant('eip1559' as const),
    chainId: fc.integer({ min: 1, max: 2 ** 31 }),
    nonce: fc.integer({ min: 0, max: 2 ** 31 }),
    to: address,
    data,
    gas: fc.bigInt({ min: 21_000n, max: 30_000_000n }),
    maxFeePerGas: fc.bigInt({ min: 10n ** 9n, max: 10n ** 12n }),
    maxPriorityFeePerGas: fc.bigInt({ min: 0n, max: 10n ** 9n }),
    value: fc.bigInt({ min: 0n, max: 10n ** 20n }),
  });
  const legacy = fc.record({
    type: fc.constant('legacy' as const),
    chainId: fc.integer({ min: 1, max: 2 ** 31 }),
    nonce: fc.integer({ min: 0, max: 2 ** 31 }),
    to: address,
    data,
    gas: fc.bigInt({ min: 21_000n, max: 30_000_000n }),
    gasPrice: fc.bigInt({ min: 1n, max: 10n ** 12n }),
  });

  it('gives the very bytes viem signs, for EIP-1559 and legacy transactions', async () => {
    await fc.assert(
      fc.asyncProperty(privateKey, fc.oneof(eip1559, legacy), async (key, transaction) => {
        const ours = transactionSigner(key)(transaction);
        const theirs = await privateKeyToAccount(key).signTransaction(transaction);
        expect(ours).toBe(theirs);
      }),
      { numRuns: 150 },
    );
  });
});
