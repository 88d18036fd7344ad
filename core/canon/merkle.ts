// RFC 6962 Merkle trees (leaf = H(0x00 ‖ data), node = H(0x01 ‖ left ‖ right), a lone last node
// carried up unchanged), generic over the hash: SHA-256 for the Certificate Transparency vectors,
// keccak256 for receipts (docs/receipts.md). Pure, in memory: a tree of n leaves keeps ~2n hashes.
//
// Receipt leaves: data = receiptId (32 bytes) ‖ integrity digest (32 bytes), so a proof commits to
// the receipt's content, not only to its id; hash = keccak256, as the EVM's own opcode, so a
// verifier needs nothing but viem's keccak256 and concat (or Solidity's keccak256(abi.encodePacked)).
import { type Hex, bytesToHex, hexToBytes, isHex } from 'viem';
import { keccak256Bytes } from './keccak';

/** A hash function over bytes; every output must have the same length. */
export type MerkleHash = (data: Uint8Array) => Uint8Array;

export const LEAF_PREFIX = 0x00;
export const NODE_PREFIX = 0x01;
/** Receipts are hashed with keccak256 (DECISIONS.md "Receipts"). */
export const receiptMerkleHash: MerkleHash = keccak256Bytes;
const RECEIPT_PART_BYTES = 32;
/** More leaves than any batch (the contract's count is a uint32); indices stay exact integers. */
export const MAX_TREE_SIZE = 2 ** 32 - 1;

export interface MerkleTree {
  readonly treeSize: number;
  readonly root: Uint8Array;
  /** The RFC 6962 §2.1.1 audit path of leaf `index`, bottom-up: siblings from the leaf to the root. */
  inclusionProof(index: number): Uint8Array[];
}

function prefixed(prefix: number, parts: readonly Uint8Array[]): Uint8Array {
  let length = 1;
  for (const part of parts) length += part.length;
  const out = new Uint8Array(length);
  out[0] = prefix;
  let offset = 1;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

export function leafHash(hash: MerkleHash, data: Uint8Array): Uint8Array {
  return hash(prefixed(LEAF_PREFIX, [data]));
}

export function nodeHash(hash: MerkleHash, left: Uint8Array, right: Uint8Array): Uint8Array {
  return hash(prefixed(NODE_PREFIX, [left, right]));
}

function assertTreeSize(treeSize: number): void {
  if (!Number.isSafeInteger(treeSize) || treeSize < 0 || treeSize > MAX_TREE_SIZE) {
    throw new RangeError(`tree size must be an integer in [0, ${MAX_TREE_SIZE}], got ${treeSize}`);
  }
}

/**
 * Hashes the leaves and every level above them. Pairing neighbours level by level and carrying an
 * odd last node up unchanged gives exactly RFC 6962's split at the largest power of two below n.
 */
export function buildMerkleTree(hash: MerkleHash, leaves: readonly Uint8Array[]): MerkleTree {
  assertTreeSize(leaves.length);
  const levels: Uint8Array[][] = [leaves.map((data) => leafHash(hash, data))];
  for (let level = levels[0]; level.length > 1; level = levels[levels.length - 1]) {
    const parents: Uint8Array[] = [];
    for (let i = 0; i + 1 < level.length; i += 2)
      parents.push(nodeHash(hash, level[i], level[i + 1]));
    if (level.length % 2 === 1) parents.push(level[level.length - 1]);
    levels.push(parents);
  }
  const treeSize = leaves.length;
  // RFC 6962 §2.1: the hash of an empty list is the hash of the empty string.
  const root = treeSize === 0 ? hash(new Uint8Array(0)) : levels[levels.length - 1][0];
  const inclusionProof = (index: number): Uint8Array[] => {
    if (!Number.isSafeInteger(index) || index < 0 || index >= treeSize) {
      throw new RangeError(`leaf index must be an integer in [0, ${treeSize}), got ${index}`);
    }
    const path: Uint8Array[] = [];
    let position = index;
    for (let depth = 0; depth < levels.length - 1; depth += 1) {
      const sibling = position ^ 1;
      // No sibling: this node is the carried-up last one, which adds nothing to the path.
      if (sibling < levels[depth].length) path.push(levels[depth][sibling]);
      position = Math.floor(position / 2);
    }
    return path;
  };
  return { treeSize, root, inclusionProof };
}

export function merkleRoot(hash: MerkleHash, leaves: readonly Uint8Array[]): Uint8Array {
  return buildMerkleTree(hash, leaves).root;
}

export function inclusionProof(
  hash: MerkleHash,
  leaves: readonly Uint8Array[],
  index: number,
): Uint8Array[] {
  return buildMerkleTree(hash, leaves).inclusionProof(index);
}

/**
 * The root an audit path leads to from a leaf hash (RFC 9162 §2.1.3.2), or null when the path
 * cannot belong to a tree of that size (index or size out of range, too many or too few siblings,
 * a sibling of another length). Never throws: its inputs come from whoever asks for a check.
 */
export function rootFromInclusionProof(
  hash: MerkleHash,
  leafHashValue: Uint8Array,
  index: number,
  treeSize: number,
  proof: readonly Uint8Array[],
): Uint8Array | null {
  if (!Number.isSafeInteger(treeSize) || treeSize < 1 || treeSize > MAX_TREE_SIZE) return null;
  if (!Number.isSafeInteger(index) || index < 0 || index >= treeSize) return null;
  // Plain numbers are exact here: treeSize < 2^32, and the loop only halves.
  let fn = index;
  let sn = treeSize - 1;
  let result = leafHashValue;
  for (const sibling of proof) {
    if (sn === 0 || sibling.length !== leafHashValue.length) return null;
    if (fn % 2 === 1 || fn === sn) {
      result = nodeHash(hash, sibling, result);
      // A right-edge node with no right sibling is carried up: skip the levels it was carried through.
      while (fn % 2 === 0 && fn !== 0) {
        fn /= 2;
        sn = Math.floor(sn / 2);
      }
    } else {
      result = nodeHash(hash, result, sibling);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 ? result : null;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i += 1) difference |= a[i] ^ b[i];
  return difference === 0;
}

/** True only when `leafData` is leaf `index` of the tree of `treeSize` leaves whose root is `root`. */
export function verifyInclusion(
  hash: MerkleHash,
  leafData: Uint8Array,
  index: number,
  treeSize: number,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): boolean {
  const computed = rootFromInclusionProof(hash, leafHash(hash, leafData), index, treeSize, proof);
  return computed !== null && sameBytes(computed, root);
}

/** The 64 leaf bytes of a receipt: its id, then its integrity digest, both 32-byte 0x-hex. */
export function receiptLeafData(receiptId: Hex, integrityDigest: Hex): Uint8Array {
  for (const [name, value] of [
    ['receiptId', receiptId],
    ['integrityDigest', integrityDigest],
  ] as const) {
    if (!isHex(value, { strict: true }) || value.length !== 2 + 2 * RECEIPT_PART_BYTES) {
      throw new TypeError(
        `${name} must be ${RECEIPT_PART_BYTES} bytes of 0x-hex, got ${String(value)}`,
      );
    }
  }
  const data = new Uint8Array(2 * RECEIPT_PART_BYTES);
  data.set(hexToBytes(receiptId), 0);
  data.set(hexToBytes(integrityDigest), RECEIPT_PART_BYTES);
  return data;
}

/** A proof as stored and sent: 0x-hex siblings, bottom-up. */
export function proofToHex(proof: readonly Uint8Array[]): Hex[] {
  return proof.map((sibling) => bytesToHex(sibling));
}

export function proofFromHex(proof: readonly Hex[]): Uint8Array[] {
  return proof.map((sibling) => hexToBytes(sibling));
}
