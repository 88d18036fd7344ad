// The RFC 6962 tree against the published Certificate Transparency vectors (SHA-256; leaf inputs,
// node hashes, roots and inclusion proofs as in transparency-dev/merkle testonly and proof tests),
// then, for keccak256 receipts, against a straight transcription of the RFC's recursive MTH/PATH
// definitions built on viem only, with fast-check: every proof verifies, every tampering fails.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { type Hex, bytesToHex, concat, hexToBytes, keccak256 } from 'viem';
import {
  type MerkleHash,
  buildMerkleTree,
  inclusionProof,
  leafHash,
  merkleRoot,
  proofFromHex,
  proofToHex,
  receiptLeafData,
  receiptMerkleHash,
  rootFromInclusionProof,
  verifyInclusion,
} from './merkle';

const sha256: MerkleHash = (data) => new Uint8Array(createHash('sha256').update(data).digest());
const unhex = (hex: string): Uint8Array => hexToBytes(`0x${hex}`);
const hex = (bytes: Uint8Array): string => bytesToHex(bytes).slice(2);

const CT_LEAVES = [
  '',
  '00',
  '10',
  '2021',
  '3031',
  '40414243',
  '5051525354555657',
  '606162636465666768696a6b6c6d6e6f',
].map(unhex);
/** Roots of the trees over the first n leaves, n = 0..8. */
const CT_ROOTS = [
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];
/** Complete subtrees of the 8-leaf tree: level (0 = leaf hashes), then position in the level. */
const CT_NODES = [
  [
    '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
    '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
    '0298d122906dcfc10892cb53a73992fc5b9f493ea4c9badb27b791b4127a7fe7',
    '07506a85fd9dd2f120eb694f86011e5bb4662e5c415a62917033d4a9624487e7',
    'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    '4271a26be0d8a84f0bd54c8c302e7cb3a3b5d1fa6780a40bcce2873477dab658',
    'b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f',
    '46f6ffadd3d06a09ff3c5860d2755c8b9819db7df44251788c7d8e3180de8eb1',
  ],
  [
    'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
    '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
    '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
    'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
  ],
  [
    'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
  ],
  ['5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328'],
];
/** The published audit paths; `index` is 0-based here (the Go vectors count leaves from 1). */
const CT_INCLUSION = [
  {
    index: 0,
    size: 8,
    proof: [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  },
  {
    index: 5,
    size: 8,
    proof: [
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  },
  {
    index: 2,
    size: 3,
    proof: ['fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125'],
  },
  {
    index: 1,
    size: 5,
    proof: [
      '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ],
  },
];
const SOME_HASH = unhex('abacaba000000000000000000000000000000000000000000060061e00123456');

/** RFC 6962 §2.1 MTH, transcribed with viem's keccak256 and concat only. */
function referenceRoot(leaves: readonly Hex[]): Hex {
  if (leaves.length === 1) return keccak256(concat(['0x00', leaves[0]]));
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return keccak256(
    concat(['0x01', referenceRoot(leaves.slice(0, k)), referenceRoot(leaves.slice(k))]),
  );
}

/** RFC 6962 §2.1.1 PATH(m, D[n]). */
function referencePath(index: number, leaves: readonly Hex[]): Hex[] {
  if (leaves.length === 1) return [];
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return index < k
    ? [...referencePath(index, leaves.slice(0, k)), referenceRoot(leaves.slice(k))]
    : [...referencePath(index - k, leaves.slice(k)), referenceRoot(leaves.slice(0, k))];
}

function flipByte(bytes: Uint8Array, at: number): Uint8Array {
  const copy = Uint8Array.from(bytes);
  copy[at % copy.length] ^= 0x01;
  return copy;
}

/** 1..100 distinct leaves of random content (distinct: equal leaves make swapped indices verify). */
const leavesArbitrary = fc
  .array(fc.uint8Array({ maxLength: 40 }), { minLength: 1, maxLength: 100 })
  .map((datas) =>
    datas.map((data, i): Hex => concat([bytesToHex(data), `0x${i.toString(16).padStart(8, '0')}`])),
  );

describe('RFC 6962 Merkle tree, Certificate Transparency vectors (SHA-256)', () => {
  it('hashes the empty tree to SHA-256 of the empty string and trees of 1..8 leaves to the published roots', () => {
    for (let size = 0; size <= 8; size += 1)
      expect(hex(merkleRoot(sha256, CT_LEAVES.slice(0, size)))).toBe(CT_ROOTS[size]);
  });

  it('gives every complete subtree its published node hash, leaves as sha256(0x00 ‖ data)', () => {
    CT_NODES.forEach((level, depth) =>
      level.forEach((expected, position) => {
        const width = 2 ** depth;
        expect(
          hex(merkleRoot(sha256, CT_LEAVES.slice(position * width, (position + 1) * width))),
        ).toBe(expected);
      }),
    );
    expect(hex(leafHash(sha256, CT_LEAVES[1]))).toBe(hex(sha256(unhex('0000'))));
  });

  it.each(CT_INCLUSION)(
    'builds and verifies the published audit path of leaf $index in a tree of $size',
    ({ index, size, proof }) => {
      const leaves = CT_LEAVES.slice(0, size);
      const root = unhex(CT_ROOTS[size]);
      expect(inclusionProof(sha256, leaves, index).map(hex)).toEqual(proof);
      const path = proof.map(unhex);
      expect(verifyInclusion(sha256, leaves[index], index, size, path, root)).toBe(true);
      expect(
        hex(rootFromInclusionProof(sha256, leafHash(sha256, leaves[index]), index, size, path)!),
      ).toBe(CT_ROOTS[size]);
    },
  );

  it.each(CT_INCLUSION)(
    'refuses every corruption of the audit path of leaf $index in a tree of $size',
    ({ index, size, proof }) => {
      const leaf = CT_LEAVES[index];
      const root = unhex(CT_ROOTS[size]);
      const path = proof.map(unhex);
      const probes: Array<[string, number, number, Uint8Array, Uint8Array[], Uint8Array]> = [
        ['index - 1', index - 1, size, leaf, path, root],
        ['index + 1', index + 1, size, leaf, path, root],
        ['index ^ 2', index ^ 2, size, leaf, path, root],
        ['size * 2', index, size * 2, leaf, path, root],
        ['size / 2', index, Math.floor(size / 2), leaf, path, root],
        ['wrong leaf', index, size, new TextEncoder().encode('WrongLeaf'), path, root],
        ['empty-tree root', index, size, leaf, path, unhex(CT_ROOTS[0])],
        ['some other root', index, size, leaf, path, SOME_HASH],
        ['trailing empty', index, size, leaf, [...path, new Uint8Array(0)], root],
        ['trailing root', index, size, leaf, [...path, root], root],
        ['preceding empty', index, size, leaf, [new Uint8Array(0), ...path], root],
        ['preceding root', index, size, leaf, [root, ...path], root],
        ['removed last sibling', index, size, leaf, path.slice(0, -1), root],
        ['inserted sibling', index, size, leaf, [path[0], SOME_HASH, ...path.slice(1)], root],
        ...path.map((_, i): [string, number, number, Uint8Array, Uint8Array[], Uint8Array] => [
          `bit 3 of sibling ${i}`,
          index,
          size,
          leaf,
          path.map((s, j) => (j === i ? Uint8Array.from(s, (b, at) => (at === 0 ? b ^ 8 : b)) : s)),
          root,
        ]),
      ];
      const accepted = probes
        .filter(([, i, n, data, p, r]) => verifyInclusion(sha256, data, i, n, p, r))
        .map(([name]) => name);
      expect(accepted).toEqual([]);
    },
  );

  it('proves a single-leaf tree with the empty path, its root being the leaf hash', () => {
    const data = new TextEncoder().encode('data');
    const tree = buildMerkleTree(sha256, [data]);
    expect(tree.inclusionProof(0)).toEqual([]);
    expect(tree.root).toEqual(leafHash(sha256, data));
    expect(verifyInclusion(sha256, data, 0, 1, [], tree.root)).toBe(true);
    expect(verifyInclusion(sha256, data, 0, 0, [], tree.root)).toBe(false);
    expect(verifyInclusion(sha256, data, 1, 1, [], tree.root)).toBe(false);
  });

  it('refuses to prove an index outside the tree and answers null, not a throw, for impossible sizes', () => {
    const tree = buildMerkleTree(sha256, CT_LEAVES);
    expect(() => tree.inclusionProof(8)).toThrow(RangeError);
    expect(() => tree.inclusionProof(-1)).toThrow(RangeError);
    expect(() => tree.inclusionProof(0.5)).toThrow(RangeError);
    expect(() => buildMerkleTree(sha256, []).inclusionProof(0)).toThrow(RangeError);
    expect(rootFromInclusionProof(sha256, SOME_HASH, 0, 2 ** 32, [])).toBeNull();
    expect(rootFromInclusionProof(sha256, SOME_HASH, 0, Number.NaN, [])).toBeNull();
  });
});

describe('RFC 6962 Merkle tree for receipts (keccak256)', () => {
  it('equals the RFC’s recursive definitions, written with viem only, for roots and every audit path', () => {
    fc.assert(
      fc.property(leavesArbitrary, (leaves) => {
        const tree = buildMerkleTree(
          receiptMerkleHash,
          leaves.map((leaf) => hexToBytes(leaf)),
        );
        expect(bytesToHex(tree.root)).toBe(referenceRoot(leaves));
        for (let index = 0; index < leaves.length; index += 1) {
          expect(proofToHex(tree.inclusionProof(index))).toEqual(referencePath(index, leaves));
        }
      }),
      { numRuns: 150 },
    );
  });

  it('verifies every leaf’s proof, and fails when one byte of the leaf, a sibling or the root changes, or the index does', () => {
    fc.assert(
      fc.property(leavesArbitrary, fc.nat(), fc.nat(), (leafHexes, pick, flipAt) => {
        const leaves = leafHexes.map((leaf) => hexToBytes(leaf));
        const tree = buildMerkleTree(receiptMerkleHash, leaves);
        const n = leaves.length;
        const index = pick % n;
        for (let i = 0; i < n; i += 1)
          expect(
            verifyInclusion(receiptMerkleHash, leaves[i], i, n, tree.inclusionProof(i), tree.root),
          ).toBe(true);
        const proof = tree.inclusionProof(index);
        expect(
          verifyInclusion(
            receiptMerkleHash,
            flipByte(leaves[index], flipAt),
            index,
            n,
            proof,
            tree.root,
          ),
        ).toBe(false);
        expect(
          verifyInclusion(
            receiptMerkleHash,
            leaves[index],
            index,
            n,
            proof,
            flipByte(tree.root, flipAt),
          ),
        ).toBe(false);
        proof.forEach((_, i) => {
          const tampered = proof.map((sibling, j) =>
            j === i ? flipByte(sibling, flipAt) : sibling,
          );
          expect(
            verifyInclusion(receiptMerkleHash, leaves[index], index, n, tampered, tree.root),
          ).toBe(false);
        });
        for (let other = 0; other < n; other += 1) {
          if (other !== index)
            expect(
              verifyInclusion(receiptMerkleHash, leaves[index], other, n, proof, tree.root),
            ).toBe(false);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('round-trips a proof through 0x-hex', () => {
    const tree = buildMerkleTree(receiptMerkleHash, CT_LEAVES);
    const stored = proofToHex(tree.inclusionProof(6));
    expect(stored.every((sibling) => /^0x[0-9a-f]{64}$/.test(sibling))).toBe(true);
    expect(
      verifyInclusion(receiptMerkleHash, CT_LEAVES[6], 6, 8, proofFromHex(stored), tree.root),
    ).toBe(true);
  });

  it('makes a receipt’s leaf its 32-byte id followed by its 32-byte integrity digest', () => {
    const receiptId: Hex = `0x${'ab'.repeat(32)}`;
    const digest: Hex = `0x${'cd'.repeat(32)}`;
    expect(bytesToHex(receiptLeafData(receiptId, digest))).toBe(
      `0x${'ab'.repeat(32)}${'cd'.repeat(32)}`,
    );
    expect(() => receiptLeafData(`0x${'ab'.repeat(31)}`, digest)).toThrow(TypeError);
    expect(() => receiptLeafData(receiptId, `0x${'zz'.repeat(32)}` as Hex)).toThrow(TypeError);
  });
});
