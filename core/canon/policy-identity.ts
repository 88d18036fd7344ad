// The two names of a policy: policyId (who owns it and which of their policies it is, derived
// exactly as the PolicyRegistry contract derives it) and policyHash (what it says, over the
// normalised rules, so two spellings of the same rules share one hash).
import { encodePacked, hexToBigInt, keccak256, type Address, type Hex } from 'viem';
import { UINT256_MAX } from '../money/amount';
import type { NormalisedPolicyRules } from '../validation/policy';
import { hashJson } from './jcs';

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** Decimal uint256(keccak256(abi.encodePacked(address owner, uint256 ownerNonce))). */
export function policyIdFor(owner: Address | string, ownerNonce: bigint | number): string {
  if (typeof owner !== 'string' || !ADDRESS.test(owner))
    throw new TypeError('owner must be 0x + 40 hex');
  const nonce = typeof ownerNonce === 'number' ? toBigIntExactly(ownerNonce) : ownerNonce;
  // Nonces count from 1 per owner; 0 would be an id no registration ever produces.
  if (typeof nonce !== 'bigint' || nonce < 1n || nonce > UINT256_MAX)
    throw new RangeError('ownerNonce must be 1…2^256-1');
  const packed = encodePacked(['address', 'uint256'], [owner.toLowerCase() as Address, nonce]);
  return hexToBigInt(keccak256(packed)).toString(10);
}

function toBigIntExactly(value: number): bigint {
  if (!Number.isSafeInteger(value)) throw new RangeError('ownerNonce must be an integer');
  return BigInt(value);
}

/** `policyHash = hashJson(rules)`; pass the output of validatePolicy, never a raw document. */
export function policyHash(rules: NormalisedPolicyRules): Hex {
  return hashJson(rules);
}
