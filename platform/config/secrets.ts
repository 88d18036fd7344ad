// Key material and shared secrets from the environment: the two private keys, admin token hashes,
// the session and actor secrets, and DEV_KEY_DENYLIST. Published development keys (and denylisted
// ones) are refused in every environment, not only in production.
import { getAddress } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { isPublishedDevAddress, isPublishedDevKey } from '../chain/devKeys';
import type { EnvReader } from './envReader';
import type { Hex, Secrets } from './sections';

export function readSecrets(read: EnvReader): Secrets {
  const devKeyDenylist: string[] = [];
  read.list('DEV_KEY_DENYLIST').forEach((entry, index) => {
    const hex = (entry.startsWith('0x') ? entry : `0x${entry}`).toLowerCase();
    if (/^0x([0-9a-f]{64}|[0-9a-f]{40})$/.test(hex)) devKeyDenylist.push(hex);
    else
      read.problem(
        'DEV_KEY_DENYLIST',
        `entry ${index + 1} is neither a private key (64 hex) nor an address (40 hex)`,
      );
  });

  const adminTokenHashes: Buffer[] = [];
  const hashes = read.list('ADMIN_TOKEN_HASHES');
  if (read.raw('ADMIN_TOKEN_HASHES') !== undefined && hashes.length === 0) {
    read.problem('ADMIN_TOKEN_HASHES', 'lists no hash');
  }
  hashes.forEach((hash, index) => {
    if (/^[0-9a-fA-F]{64}$/.test(hash)) adminTokenHashes.push(Buffer.from(hash, 'hex'));
    else
      read.problem(
        'ADMIN_TOKEN_HASHES',
        `entry ${index + 1} is not a sha256 hex digest (64 hex characters)`,
      );
  });

  const treasuryPrivateKey = read.privateKey('TREASURY_PRIVATE_KEY');
  const relayerPrivateKey = read.privateKey('RELAYER_PRIVATE_KEY');
  if (treasuryPrivateKey !== null && treasuryPrivateKey === relayerPrivateKey) {
    read.problem(
      'RELAYER_PRIVATE_KEY',
      'must differ from TREASURY_PRIVATE_KEY: the relayer only pays gas and must not hold the treasury',
    );
  }
  const anchorWriterPrivateKey = read.privateKey('ANCHOR_WRITER_PRIVATE_KEY');
  if (
    anchorWriterPrivateKey !== null &&
    (anchorWriterPrivateKey === treasuryPrivateKey || anchorWriterPrivateKey === relayerPrivateKey)
  ) {
    read.problem(
      'ANCHOR_WRITER_PRIVATE_KEY',
      'must differ from TREASURY_PRIVATE_KEY and RELAYER_PRIVATE_KEY: its own nonces, its own authorisation',
    );
  }
  const sessionSecret = read.secret('SESSION_SECRET');
  const internalActorSecret = read.secret('INTERNAL_ACTOR_SECRET');
  if (sessionSecret && internalActorSecret && sessionSecret.equals(internalActorSecret)) {
    read.problem(
      'INTERNAL_ACTOR_SECRET',
      'must differ from SESSION_SECRET: one leaked secret must not forge both',
    );
  }
  return {
    treasuryPrivateKey,
    relayerPrivateKey,
    anchorWriterPrivateKey,
    adminTokenHashes,
    sessionSecret,
    internalActorSecret,
    devKeyDenylist,
  };
}

function addressOfKey(key: string): string | null {
  try {
    return privateKeyToAccount(key as Hex).address.toLowerCase();
  } catch {
    return null;
  }
}

/**
 * FEE_RECEIVER_ADDRESS and the treasury's address (TREASURY_ADDRESS, or TREASURY_PRIVATE_KEY's),
 * with the published-key checks: published development keys (and denylisted ones) are refused in
 * every environment, as are addresses that belong to them.
 */
export function readAddresses(
  read: EnvReader,
  secrets: Secrets,
  devnet: boolean,
): { feeReceiverAddress: Hex | null; treasuryAddress: Hex | null } {
  const feeReceiverAddress = read.address('FEE_RECEIVER_ADDRESS');
  const treasuryAddressSet = read.address('TREASURY_ADDRESS');
  checkDevKeys(read, secrets, [
    ['FEE_RECEIVER_ADDRESS', feeReceiverAddress],
    ['TREASURY_ADDRESS', treasuryAddressSet],
  ]);
  return {
    feeReceiverAddress,
    treasuryAddress: treasuryOf(read, treasuryAddressSet, secrets.treasuryPrivateKey, devnet),
  };
}

/** TREASURY_ADDRESS (refused on the devnet, which has its own) agreeing with TREASURY_PRIVATE_KEY. */
function treasuryOf(
  read: EnvReader,
  addressSet: Hex | null,
  key: Hex | null,
  devnet: boolean,
): Hex | null {
  if (devnet && read.raw('TREASURY_ADDRESS') !== undefined) {
    read.problem(
      'TREASURY_ADDRESS',
      'is set without the RPC URLs; the devnet has its own treasury',
    );
    return null;
  }
  const ofKey = key === null ? null : addressOfKey(key);
  if (addressSet !== null && ofKey !== null && addressSet.toLowerCase() !== ofKey) {
    read.problem('TREASURY_ADDRESS', 'is not the address of TREASURY_PRIVATE_KEY');
  }
  return addressSet ?? (ofKey === null ? null : getAddress(ofKey));
}

function checkDevKeys(
  read: EnvReader,
  secrets: Secrets,
  addresses: ReadonlyArray<readonly [string, Hex | null]>,
): void {
  const denylist = secrets.devKeyDenylist;
  const keys = [
    ['TREASURY_PRIVATE_KEY', secrets.treasuryPrivateKey],
    ['RELAYER_PRIVATE_KEY', secrets.relayerPrivateKey],
    ['ANCHOR_WRITER_PRIVATE_KEY', secrets.anchorWriterPrivateKey],
  ] as const;
  for (const [name, key] of keys) {
    if (key === null) continue;
    if (isPublishedDevKey(key)) {
      read.problem(
        name,
        'is a published development key (the anvil/hardhat test mnemonic); anyone can spend from it. Use a freshly generated key',
      );
    } else if (isPublishedDevKey(key, denylist)) {
      read.problem(name, 'is listed in DEV_KEY_DENYLIST; use a freshly generated key');
    }
  }
  const deniedAddresses = new Set(
    denylist.map((entry) => (entry.length === 66 ? addressOfKey(entry) : entry)),
  );
  for (const [name, given] of addresses) {
    if (given === null) continue;
    const address = given.toLowerCase();
    if (isPublishedDevAddress(address)) {
      read.problem(
        name,
        'belongs to a published development key; money sent there can be taken by anyone',
      );
    } else if (deniedAddresses.has(address)) {
      read.problem(name, 'is listed in DEV_KEY_DENYLIST (directly or by its key)');
    }
  }
}
