// Key material and shared secrets from the environment: the two private keys, admin token hashes,
// the session and actor secrets, and DEV_KEY_DENYLIST. Published development keys (and denylisted
// ones) are refused in every environment, not only in production.
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

/** Published development keys (and denylisted ones) are refused in every environment. */
export function checkDevKeys(
  read: EnvReader,
  secrets: Secrets,
  feeReceiverAddress: Hex | null,
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
  if (feeReceiverAddress === null) return;
  const address = feeReceiverAddress.toLowerCase();
  const deniedAddresses = new Set(
    denylist.map((entry) => (entry.length === 66 ? addressOfKey(entry) : entry)),
  );
  if (isPublishedDevAddress(address)) {
    read.problem(
      'FEE_RECEIVER_ADDRESS',
      'belongs to a published development key; fees sent there can be taken by anyone',
    );
  } else if (deniedAddresses.has(address)) {
    read.problem('FEE_RECEIVER_ADDRESS', 'is listed in DEV_KEY_DENYLIST (directly or by its key)');
  }
}
