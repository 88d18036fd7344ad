// The key store: the service's signing keys (deployer, treasury, relayer, feeReceiver, anchorWriter,
// and the devnet's fleet relayers), fresh from the OS random source or loaded from a 0600 JSON
// file. Published development keys are refused and key objects redact themselves in logs, JSON and
// inspection; only saveKeyFile reads the secret.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { inspect } from 'node:util';
import { type Address, type Hex, bytesToHex } from 'viem';
import { type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { type TypedDataSigner, typedDataSigner } from './secp256k1';
import { isPublishedDevKey } from './devKeys';
import { InvalidPrivateKeyError, KeyFileError, PublishedDevKeyError } from './errors';
import { readKeyFile, writeKeyFile } from './keyFile';

/** The devnet's fleet relayers, slots 1–4 of DEVNET_RELAYER_SLOT (devnetRelayer below). */
const FLEET_RELAYERS = [
  'fleetRelayer1',
  'fleetRelayer2',
  'fleetRelayer3',
  'fleetRelayer4',
] as const;

export const KEY_ROLES = [
  'deployer',
  'treasury',
  'relayer',
  'feeReceiver',
  'anchorWriter',
  ...FLEET_RELAYERS,
] as const;
export type KeyRole = (typeof KEY_ROLES)[number];
/**
 * Roles added after key files were first written: a key file without them is still valid and
 * gets fresh keys for them (addMissingKeyRoles). anchorWriter sends the ReceiptAnchor batches: a
 * key of its own, so its nonces never race the relayer's x402 settlements or the deployer's mints,
 * and so a mainnet deployment can authorise exactly this address through the writer timelock.
 */
export const LATER_KEY_ROLES: readonly KeyRole[] = ['anchorWriter', ...FLEET_RELAYERS];

/**
 * The devnet's relayers for a fleet (docker-compose.yml): each process that sends transactions
 * takes a slot of its own (DEVNET_RELAYER_SLOT), so two processes never draw nonces from one key.
 * Slot 0 is `relayer` (the all-in-one process and the devnet's own merchant); 1–4 the fleet keys.
 */
export const DEVNET_RELAYER_SLOTS = FLEET_RELAYERS.length;

export function devnetRelayer(store: KeyStore, slot: number): RoleKey {
  if (!Number.isInteger(slot) || slot < 0 || slot > DEVNET_RELAYER_SLOTS)
    throw new RangeError(`devnet relayer slot ${slot} is not 0–${DEVNET_RELAYER_SLOTS}`);
  return slot === 0 ? store.relayer : store[FLEET_RELAYERS[slot - 1]];
}

/** A key file is nine short entries; anything larger is not ours. */
const MAX_KEY_FILE_BYTES = 16 * 1024;
const REDACTED = '[redacted]';
const PRIVATE_KEY_PATTERN = /^0x[0-9a-fA-F]{64}$/;

export interface KeyPolicy {
  /** Further private keys or addresses to refuse (e.g. keys known to be leaked). */
  readonly extraDenied?: readonly string[];
}

/** One role's key. The secret lives in a true private field and never leaves through logs. */
export class RoleKey {
  readonly role: KeyRole;
  readonly address: Address;
  readonly account: PrivateKeyAccount;
  readonly #privateKey: Hex;

  private constructor(role: KeyRole, privateKey: Hex) {
    this.role = role;
    this.#privateKey = privateKey;
    this.account = privateKeyToAccount(privateKey);
    this.address = this.account.address;
  }

  /** Validates and wraps a private key; refuses published development keys, naming the role. */
  static fromPrivateKey(role: KeyRole, privateKey: string, policy: KeyPolicy = {}): RoleKey {
    if (!PRIVATE_KEY_PATTERN.test(privateKey)) {
      throw new InvalidPrivateKeyError(role, 'expected 0x followed by 64 hex characters');
    }
    if (isPublishedDevKey(privateKey, policy.extraDenied)) throw new PublishedDevKeyError(role);
    try {
      return new RoleKey(role, privateKey.toLowerCase() as Hex);
    } catch (error) {
      throw new InvalidPrivateKeyError(role, (error as Error).message.split('\n')[0]);
    }
  }

  /** A fresh key from the OS CSPRNG; redrawn in the negligible case it is out of range or denied. */
  static generate(role: KeyRole, policy: KeyPolicy = {}): RoleKey {
    const maxAttempts = 8;
    for (let attempt = 0; attempt < maxAttempts; attempt += 1) {
      const candidate = bytesToHex(crypto.randomBytes(32));
      try {
        return RoleKey.fromPrivateKey(role, candidate, policy);
      } catch {
        continue;
      }
    }
    throw new InvalidPrivateKeyError(role, `no valid key after ${maxAttempts} random draws`);
  }

  /** Signs EIP-712 typed data byte for byte as `account` does, through libsecp256k1 (x402 receipts). */
  typedDataSigner(): TypedDataSigner {
    return typedDataSigner(this.#privateKey);
  }

  /** The secret itself. Only the key file writer calls this; nothing should log it. */
  exportPrivateKey(): Hex {
    return this.#privateKey;
  }

  toJSON(): { role: KeyRole; address: Address; privateKey: string } {
    return { role: this.role, address: this.address, privateKey: REDACTED };
  }

  toString(): string {
    return `RoleKey(${this.role} ${this.address})`;
  }

  [inspect.custom](): string {
    return `RoleKey { role: '${this.role}', address: '${this.address}', privateKey: '${REDACTED}' }`;
  }
}

export type KeyStore = Readonly<Record<KeyRole, RoleKey>>;

export function generateKeyStore(policy: KeyPolicy = {}): KeyStore {
  const store = {} as Record<KeyRole, RoleKey>;
  for (const role of KEY_ROLES) store[role] = RoleKey.generate(role, policy);
  return store;
}

export function keyStoreAddresses(store: KeyStore): Record<KeyRole, Address> {
  const addresses = {} as Record<KeyRole, Address>;
  for (const role of KEY_ROLES) addresses[role] = store[role].address;
  return addresses;
}

/**
 * Writes every role of KEY_ROLES (each `{address, privateKey}`) with mode 0600, through a
 * temporary file, fsync and rename (keyFile.ts), so a crash never leaves a half-written key file.
 * Refuses to replace an existing file unless told to: losing a key loses what it holds.
 */
export function saveKeyFile(
  filePath: string,
  store: KeyStore,
  options: { overwrite?: boolean } = {},
): void {
  if (!options.overwrite && fs.existsSync(filePath)) {
    throw new KeyFileError(
      filePath,
      'already exists; refusing to replace keys (pass overwrite to force)',
    );
  }
  const body: Record<string, { address: Address; privateKey: Hex }> = {};
  for (const role of KEY_ROLES) {
    body[role] = { address: store[role].address, privateKey: store[role].exportPrivateKey() };
  }
  writeKeyFile(filePath, body);
}

/** Reads and validates a key file: owner-only mode, every role present, address matching its key. */
export function loadKeyFile(filePath: string, policy: KeyPolicy = {}): KeyStore {
  const parsed = readKeyFile(filePath, MAX_KEY_FILE_BYTES);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new KeyFileError(filePath, `expected an object with ${KEY_ROLES.join(', ')}`);
  }
  const entries = parsed as Record<string, unknown>;
  const unknownRoles = Object.keys(entries).filter(
    (key) => !(KEY_ROLES as readonly string[]).includes(key),
  );
  if (unknownRoles.length > 0)
    throw new KeyFileError(filePath, `unknown roles: ${unknownRoles.join(', ')}`);

  const store = {} as Record<KeyRole, RoleKey>;
  for (const role of KEY_ROLES) {
    const entry = entries[role] as { address?: unknown; privateKey?: unknown } | undefined;
    if (typeof entry !== 'object' || entry === null || typeof entry.privateKey !== 'string') {
      throw new KeyFileError(filePath, `missing ${role}.privateKey`);
    }
    const key = RoleKey.fromPrivateKey(role, entry.privateKey, policy);
    if (
      typeof entry.address !== 'string' ||
      entry.address.toLowerCase() !== key.address.toLowerCase()
    ) {
      throw new KeyFileError(
        filePath,
        `${role}.address does not match its private key (edited or corrupted file)`,
      );
    }
    store[role] = key;
  }
  return store;
}

/**
 * Gives a key file written before a later role existed a fresh key for it (same file, mode 0600,
 * atomic rewrite); the other keys are kept byte for byte. Returns the roles added.
 */
export function addMissingKeyRoles(filePath: string, policy: KeyPolicy = {}): KeyRole[] {
  const parsed = readKeyFile(filePath, MAX_KEY_FILE_BYTES);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return [];
  const entries = parsed as Record<string, unknown>;
  const added = LATER_KEY_ROLES.filter((role) => entries[role] === undefined);
  if (added.length === 0) return [];
  const body: Record<string, unknown> = { ...entries };
  for (const role of added) {
    const key = RoleKey.generate(role, policy);
    body[role] = { address: key.address, privateKey: key.exportPrivateKey() };
  }
  writeKeyFile(filePath, body);
  return added;
}
