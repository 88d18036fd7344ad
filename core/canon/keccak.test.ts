// The fast keccak256 of the hot paths against viem's (@noble/hashes), on random bytes and strings,
// including lone surrogates (hashed as the UTF-8 TextEncoder produces).
import fc from 'fast-check';
import { bytesToHex, keccak256, stringToBytes } from 'viem';
import { keccak256Bytes, keccak256Hex } from './keccak';

describe('keccak256', () => {
  it("is Ethereum's Keccak-256 (the empty input's known digest)", () => {
    expect(keccak256Hex('')).toBe(
      '0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470',
    );
  });

  it("equals viem's for any bytes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), (bytes) => {
        expect(keccak256Hex(bytes)).toBe(keccak256(bytes));
        expect(bytesToHex(keccak256Bytes(bytes))).toBe(keccak256(bytes));
      }),
      { numRuns: 2_000 },
    );
  });

  it("hashes a string as its UTF-8, as viem's stringToBytes encodes it", () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => {
        expect(keccak256Hex(text)).toBe(keccak256(stringToBytes(text)));
      }),
      { numRuns: 2_000 },
    );
    expect(keccak256Hex('\uD800')).toBe(keccak256(stringToBytes('\uD800')));
  });
});
