// secp256k1 on the paid path's hot spots, through libsecp256k1 compiled to WebAssembly
// (tiny-secp256k1; the measurement that chose it is in docs/x402.md, "secp256k1 on npm"): recovering
// the signer of an EIP-3009 authorization and signing the x402 receipts. Both give exactly what
// viem gives (its pure-JS @noble/curves, ~8x slower): recovery accepts the same signatures (v 0/1
// or 27/28, any s below the order) and signing is RFC 6979 with a low s, so the bytes are equal
// (secp256k1.test.ts holds both to viem on random keys and digests). Typed data is hashed by
// eip712.ts, which gives viem's digest faster.
import * as secp from 'tiny-secp256k1';
import {
  type Address,
  bytesToHex,
  type hashTypedData,
  type Hex,
  hexToBytes,
  serializeTransaction,
  type TransactionSerializable,
  type TypedDataDefinition,
} from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { keccak256Bytes, keccak256Hex } from '../../core/canon/keccak';
import { hashTypedDataFast } from './eip712';

const SIGNATURE_BYTES = 65;
const DIGEST_BYTES = 32;

/** viem's toRecoveryBit: a 65-byte signature's last byte as the recovery bit, or null. */
function recoveryBitOf(v: number): 0 | 1 | null {
  if (v === 0 || v === 27) return 0;
  if (v === 1 || v === 28) return 1;
  return null;
}

/**
 * The address (lowercase) whose key signed `digest` with the 65-byte r ‖ s ‖ v `signature`, or
 * null when nothing can be recovered (a malformed signature, r or s out of range, no such point).
 */
export function recoverSigner(digest: Hex, signature: Hex): Address | null {
  const sig = hexToBytes(signature);
  const hash = hexToBytes(digest);
  if (sig.length !== SIGNATURE_BYTES || hash.length !== DIGEST_BYTES) return null;
  const bit = recoveryBitOf(sig[64]);
  if (bit === null) return null;
  let publicKey: Uint8Array | null;
  try {
    publicKey = secp.recover(hash, sig.subarray(0, 64), bit, false);
  } catch {
    return null; // r or s zero or not below the group order
  }
  if (publicKey === null) return null;
  return `0x${keccak256Hex(publicKey.subarray(1)).slice(-40)}` as Address;
}

/** r ‖ s ‖ v (v 27/28) over `digest`: RFC 6979, low s, as viem's `sign` serialises it. */
export function signDigest(digest: Hex, privateKey: Hex | Uint8Array): Hex {
  const key = typeof privateKey === 'string' ? hexToBytes(privateKey) : privateKey;
  const { signature, recoveryId } = secp.signRecoverable(hexToBytes(digest), key);
  const out = new Uint8Array(SIGNATURE_BYTES);
  out.set(signature);
  out[64] = 27 + recoveryId;
  return bytesToHex(out);
}

/** Signs EIP-712 typed data with one key, as a viem account's signTypedData does, faster. */
export interface TypedDataSigner {
  readonly address: Address;
  signTypedData(typedData: TypedDataDefinition | Parameters<typeof hashTypedData>[0]): Promise<Hex>;
}

export function typedDataSigner(privateKey: Hex): TypedDataSigner {
  const key = hexToBytes(privateKey); // once, not per signature
  if (!secp.isPrivate(key)) throw new Error('not a secp256k1 private key');
  return {
    address: privateKeyToAddress(privateKey),
    signTypedData: async (typedData) => signDigest(hashTypedDataFast(typedData), key),
  };
}

/**
 * Signs transactions with one key, byte for byte as a viem local account's signTransaction (the
 * same serialization, RFC 6979, low s), through libsecp256k1: the group relayer signs one per group.
 */
export function transactionSigner(privateKey: Hex): (transaction: TransactionSerializable) => Hex {
  const key = hexToBytes(privateKey); // once, not per transaction
  if (!secp.isPrivate(key)) throw new Error('not a secp256k1 private key');
  return (transaction) => {
    // As viem: a blob transaction is signed without its sidecars.
    const signable =
      transaction.type === 'eip4844' ? { ...transaction, sidecars: false as const } : transaction;
    const digest = keccak256Bytes(hexToBytes(serializeTransaction(signable)));
    const { signature, recoveryId } = secp.signRecoverable(digest, key);
    return serializeTransaction(transaction, {
      r: bytesToHex(signature.subarray(0, 32)),
      s: bytesToHex(signature.subarray(32, 64)),
      v: BigInt(27 + recoveryId),
      yParity: recoveryId,
    });
  };
}
