// secp256k1 implementations on npm, measured on what the paid path does with them: recover the
// signer's address from a 32-byte digest and a 65-byte Ethereum signature (an EIP-3009
// authorization's check), and sign a digest recoverably (the relayer's transaction, an x402
// receipt). Each candidate is loaded if installed and skipped otherwise, so the project depends only
// on the one chosen; install the others where you measure, e.g.
//   npm install --prefix /tmp/secp secp256k1 @noble/secp256k1 @noble/curves tiny-secp256k1 elliptic
//   node dist/bench/secp256k1.js /tmp/secp/node_modules
// CPU time per operation (process.cpuUsage, so a busy machine inflates wall time, not this much),
// and every recovered address and signature is checked against viem's before a row is printed.
// The choice and the table are in docs/x402.md.
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { bytesToHex, hexToBytes, keccak256, recoverAddress, type Hex } from 'viem';
import { privateKeyToAccount, sign as viemSign } from 'viem/accounts';

const SAMPLES = 500;
const ROUNDS = 3;

interface Candidate {
  readonly name: string;
  /** 65-byte uncompressed public key of the signer of `hash`; `signature` is r ‖ s ‖ v (27/28). */
  recover(hash: Uint8Array, signature: Uint8Array): Uint8Array;
  /** r ‖ s ‖ v (27/28) over `hash`. */
  sign(hash: Uint8Array, privateKey: Uint8Array): Uint8Array;
}

type Loader = (load: (name: string) => unknown) => Candidate;

const withV = (compact: Uint8Array, recid: number) => {
  const out = new Uint8Array(65);
  out.set(compact.subarray(0, 64));
  out[64] = 27 + recid;
  return out;
};
const recidOf = (signature: Uint8Array) => signature[64] - 27;
/** noble's 'recovered' format puts the recovery byte first. */
const nobleRecovered = (signature: Uint8Array) => {
  const out = new Uint8Array(65);
  out[0] = recidOf(signature);
  out.set(signature.subarray(0, 64), 1);
  return out;
};
const fromNobleRecovered = (sig: Uint8Array) => withV(sig.subarray(1), sig[0]);

interface NobleLike {
  /** Compressed (33 bytes): decompressed through Point for the address. */
  recoverPublicKey(sig: Uint8Array, msg: Uint8Array, opts: object): Uint8Array;
  Point: { fromBytes(bytes: Uint8Array): { toBytes(compressed: boolean): Uint8Array } };
  sign(msg: Uint8Array, key: Uint8Array, opts: object): Uint8Array;
}

const LOADERS: ReadonlyArray<readonly [string, Loader]> = [
  [
    '@noble/curves',
    (load) => {
      const { secp256k1 } = load('@noble/curves/secp256k1.js') as { secp256k1: NobleLike };
      return {
        name: '@noble/curves',
        recover: (hash, sig) =>
          secp256k1.Point.fromBytes(
            secp256k1.recoverPublicKey(nobleRecovered(sig), hash, { prehash: false }),
          ).toBytes(false),
        sign: (hash, key) =>
          fromNobleRecovered(secp256k1.sign(hash, key, { prehash: false, format: 'recovered' })),
      };
    },
  ],
  [
    '@noble/secp256k1',
    (load) => {
      const secp = load('@noble/secp256k1') as NobleLike & {
        hashes: Record<string, (...args: Uint8Array[]) => Uint8Array>;
      };
      secp.hashes.sha256 = (msg) => createHash('sha256').update(msg).digest();
      secp.hashes.hmacSha256 = (key, msg) => createHmac('sha256', key).update(msg).digest();
      return {
        name: '@noble/secp256k1',
        recover: (hash, sig) =>
          secp.recoverPublicKey(nobleRecovered(sig), hash, { prehash: false, isCompressed: false }),
        sign: (hash, key) =>
          fromNobleRecovered(secp.sign(hash, key, { prehash: false, format: 'recovered' })),
      };
    },
  ],
  [
    'tiny-secp256k1',
    (load) => {
      const tiny = load('tiny-secp256k1') as {
        recover(h: Uint8Array, sig: Uint8Array, recid: number, compressed: boolean): Uint8Array;
        signRecoverable(
          h: Uint8Array,
          d: Uint8Array,
        ): { signature: Uint8Array; recoveryId: number };
      };
      return {
        name: 'tiny-secp256k1',
        recover: (hash, sig) => tiny.recover(hash, sig.subarray(0, 64), recidOf(sig), false),
        sign: (hash, key) => {
          const { signature, recoveryId } = tiny.signRecoverable(hash, key);
          return withV(signature, recoveryId);
        },
      };
    },
  ],
  [
    'secp256k1',
    (load) => {
      const native = load('secp256k1') as {
        ecdsaRecover(
          sig: Uint8Array,
          recid: number,
          msg: Uint8Array,
          compressed: boolean,
        ): Uint8Array;
        ecdsaSign(msg: Uint8Array, key: Uint8Array): { signature: Uint8Array; recid: number };
      };
      // Without its compiled addon the package falls back to elliptic: say which ran.
      let build = 'elliptic fallback';
      try {
        load('secp256k1/bindings');
        build = 'native addon';
      } catch {
        // no addon built (no prebuilds are shipped; node-gyp needs the Node headers)
      }
      return {
        name: `secp256k1 (${build})`,
        recover: (hash, sig) => native.ecdsaRecover(sig.subarray(0, 64), recidOf(sig), hash, false),
        sign: (hash, key) => {
          const { signature, recid } = native.ecdsaSign(hash, key);
          return withV(signature, recid);
        },
      };
    },
  ],
  [
    'elliptic',
    (load) => {
      const { ec: EC } = load('elliptic') as {
        ec: new (curve: string) => {
          recoverPubKey(
            msg: Uint8Array,
            sig: { r: Uint8Array; s: Uint8Array },
            recid: number,
          ): { encode(enc: 'array', compact: boolean): number[] };
          keyFromPrivate(key: Uint8Array): {
            sign(
              msg: Uint8Array,
              opts: object,
            ): {
              r: { toArray(e: string, n: number): number[] };
              s: { toArray(e: string, n: number): number[] };
              recoveryParam: number;
            };
          };
        };
      };
      const curve = new EC('secp256k1');
      return {
        name: 'elliptic',
        recover: (hash, sig) =>
          Uint8Array.from(
            curve
              .recoverPubKey(
                hash,
                { r: sig.subarray(0, 32), s: sig.subarray(32, 64) },
                recidOf(sig),
              )
              .encode('array', false),
          ),
        sign: (hash, key) => {
          const signed = curve.keyFromPrivate(key).sign(hash, { canonical: true });
          const compact = Uint8Array.from([
            ...signed.r.toArray('be', 32),
            ...signed.s.toArray('be', 32),
          ]);
          return withV(compact, signed.recoveryParam);
        },
      };
    },
  ],
];

const addressOf = (publicKey: Uint8Array) =>
  `0x${keccak256(publicKey.subarray(1)).slice(-40)}`.toLowerCase();

function cpuMsOf(work: () => void): number {
  const before = process.cpuUsage();
  work();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

interface Sample {
  hash: Uint8Array;
  hashHex: Hex;
  key: Uint8Array;
  signature: Uint8Array;
  signatureHex: Hex;
  address: string;
}

async function samples(): Promise<Sample[]> {
  const out: Sample[] = [];
  for (let i = 0; i < SAMPLES; i += 1) {
    const key = randomBytes(32);
    const hashHex = bytesToHex(randomBytes(32));
    const signatureHex = await viemSign({ hash: hashHex, privateKey: bytesToHex(key), to: 'hex' });
    out.push({
      hash: hexToBytes(hashHex),
      hashHex,
      key,
      signature: hexToBytes(signatureHex),
      signatureHex,
      address: privateKeyToAccount(bytesToHex(key)).address.toLowerCase(),
    });
  }
  return out;
}

interface Row {
  name: string;
  recoverUs: number;
  signUs: number;
}

/** viem as the facilitator and the relayer use it today (async API over @noble/curves 1.x). */
async function measureViem(all: readonly Sample[]): Promise<Row> {
  let recoverUs = Infinity;
  let signUs = Infinity;
  for (let round = 0; round < ROUNDS; round += 1) {
    let before = process.cpuUsage();
    for (const sample of all) {
      const recovered = await recoverAddress({
        hash: sample.hashHex,
        signature: sample.signatureHex,
      });
      if (recovered.toLowerCase() !== sample.address)
        throw new Error('viem recovered another address');
    }
    let used = process.cpuUsage(before);
    recoverUs = Math.min(recoverUs, (used.user + used.system) / all.length);
    before = process.cpuUsage();
    for (const sample of all)
      await viemSign({ hash: sample.hashHex, privateKey: bytesToHex(sample.key), to: 'hex' });
    used = process.cpuUsage(before);
    signUs = Math.min(signUs, (used.user + used.system) / all.length);
  }
  return {
    name: 'viem 2 (@noble/curves 1.x: what the facilitator and relayer run today)',
    recoverUs,
    signUs,
  };
}

/** Best of ROUNDS, in µs of CPU per operation, after checking every answer against viem's. */
async function measure(candidate: Candidate, all: readonly Sample[]): Promise<Row> {
  for (const sample of all) {
    if (addressOf(candidate.recover(sample.hash, sample.signature)) !== sample.address)
      throw new Error(`${candidate.name} recovered another address`);
    const signed = bytesToHex(candidate.sign(sample.hash, sample.key));
    const signer = await recoverAddress({ hash: sample.hashHex, signature: signed });
    if (signer.toLowerCase() !== sample.address)
      throw new Error(`${candidate.name} signed something viem does not recover to the key`);
  }
  let recoverMs = Infinity;
  let signMs = Infinity;
  for (let round = 0; round < ROUNDS; round += 1) {
    recoverMs = Math.min(
      recoverMs,
      cpuMsOf(() => {
        for (const sample of all) addressOf(candidate.recover(sample.hash, sample.signature));
      }),
    );
    signMs = Math.min(
      signMs,
      cpuMsOf(() => {
        for (const sample of all) candidate.sign(sample.hash, sample.key);
      }),
    );
  }
  return {
    name: candidate.name,
    recoverUs: (recoverMs * 1000) / all.length,
    signUs: (signMs * 1000) / all.length,
  };
}

/** The installed version, read from the package folder (some packages' exports hide package.json). */
function versionOf(from: string, name: string): string {
  try {
    return (
      JSON.parse(readFileSync(path.join(from, name, 'package.json'), 'utf8')) as { version: string }
    ).version;
  } catch {
    return '?';
  }
}

async function main(): Promise<void> {
  const from = process.argv[2] ? path.resolve(process.argv[2]) : path.resolve('node_modules');
  const load = createRequire(path.join(from, 'bench-loader.js'));
  process.stdout.write(
    `secp256k1: ${SAMPLES} signatures, best of ${ROUNDS} rounds, CPU µs per operation, node ${process.version}, ` +
      `${os.cpus().length} cores, load average ${os.loadavg()[0].toFixed(1)}; candidates from ${from}\n`,
  );
  const all = await samples();
  const rows: Row[] = [await measureViem(all)];
  for (const [name, loader] of LOADERS) {
    let candidate: Candidate;
    try {
      candidate = loader(load);
    } catch {
      process.stdout.write(`  ${name}: not installed, skipped\n`);
      continue;
    }
    const row = await measure(candidate, all);
    rows.push({ ...row, name: `${row.name} ${versionOf(from, name)}` });
  }
  process.stdout.write(
    'implementation                                              recover→address µs   sign µs\n',
  );
  for (const row of rows)
    process.stdout.write(
      `${row.name.padEnd(60)} ${row.recoverUs.toFixed(0).padStart(18)} ${row.signUs.toFixed(0).padStart(9)}\n`,
    );
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(
      `bench secp256k1 failed: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  },
);
