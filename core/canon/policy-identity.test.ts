// policyId against a by-hand abi.encodePacked(address, uint256) and keccak256.
import { keccak256 } from 'viem';
import { policyIdFor } from './policy-identity';

const OWNER = '0xAbCdEf0123456789aBcDeF0123456789AbCdEf01';

// abi.encodePacked(address, uint256): 20 address bytes then a 32-byte big-endian word.
function policyIdByHand(owner: string, nonce: bigint): string {
  const packed = Buffer.concat([
    Buffer.from(owner.slice(2), 'hex'),
    Buffer.from(nonce.toString(16).padStart(64, '0'), 'hex'),
  ]);
  expect(packed.length).toBe(52);
  return BigInt(keccak256(packed)).toString(10);
}

describe('policyIdFor', () => {
  it('is the decimal uint256 of keccak256(abi.encodePacked(owner, ownerNonce))', () => {
    for (const nonce of [1n, 2n, 255n, 2n ** 255n]) {
      expect(policyIdFor(OWNER, nonce)).toBe(policyIdByHand(OWNER, nonce));
    }
  });

  it('does not depend on the case of the owner address', () => {
    expect(policyIdFor(OWNER.toLowerCase(), 1)).toBe(policyIdFor(OWNER, 1n));
  });

  it('gives each owner nonce its own id', () => {
    expect(policyIdFor(OWNER, 1n)).not.toBe(policyIdFor(OWNER, 2n));
  });

  it('refuses nonce 0, negative or fractional nonces and malformed owners', () => {
    expect(() => policyIdFor(OWNER, 0n)).toThrow(RangeError);
    expect(() => policyIdFor(OWNER, -1n)).toThrow(RangeError);
    expect(() => policyIdFor(OWNER, 1.5)).toThrow(RangeError);
    expect(() => policyIdFor('0x1234', 1n)).toThrow(TypeError);
  });
});
