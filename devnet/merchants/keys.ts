// A devnet merchant's own two keys, separate from the service's key store: the relayer that pays its
// facilitator's settlement gas and the payTo that receives its sales. Fresh from the OS random source,
// or kept in a 0600 JSON file so a persistent devnet keeps one merchant identity (and its balance)
// across restarts (written and read by platform/chain/keyFile.ts, like the service's key file).
// Published development keys are refused; only the file writer touches the secrets.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { type Address, type Hex, bytesToHex } from 'viem';
import { type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { relayerAccount } from '../../platform/chain/facilitatorSigner';
import { isPublishedDevKey } from '../../platform/chain/devKeys';
import {
  InvalidPrivateKeyError,
  KeyFileError,
  PublishedDevKeyError,
} from '../../platform/chain/errors';
import { readKeyFile, writeKeyFile } from '../../platform/chain/keyFile';

const MERCHANT_KEY_NAMES = ['relayer', 'payTo'] as const;
type MerchantKeyName = (typeof MERCHANT_KEY_NAMES)[number];
const PRIVATE_KEY_PATTERN = /^0x[0-9a-f]{64}$/;
const MAX_KEY_FILE_BYTES = 4 * 1024;

export interface MerchantKeys {
  /** Signs the facilitator's transactions; its nonce manager keeps concurrent settlements in order. */
  readonly relayer: PrivateKeyAccount;
  /** Where buyers pay; the merchant never spends from it. */
  readonly payTo: Address;
}

function randomKey(name: MerchantKeyName): Hex {
  for (let attempt = 0; attempt < 8; attempt += 1) {
    const candidate = bytesToHex(crypto.randomBytes(32));
    try {
      privateKeyToAccount(candidate);
      if (!isPublishedDevKey(candidate)) return candidate;
    } catch {
      continue; // out of the curve's range: negligible, draw again
    }
  }
  throw new InvalidPrivateKeyError(`merchant ${name}`, 'no valid key after 8 random draws');
}

function keysFrom(secrets: Record<MerchantKeyName, Hex>): MerchantKeys {
  return {
    relayer: relayerAccount(secrets.relayer),
    payTo: privateKeyToAccount(secrets.payTo).address,
  };
}

function saveMerchantKeyFile(filePath: string, secrets: Record<MerchantKeyName, Hex>): void {
  const body: Record<string, { address: Address; privateKey: Hex }> = {};
  for (const name of MERCHANT_KEY_NAMES)
    body[name] = { address: privateKeyToAccount(secrets[name]).address, privateKey: secrets[name] };
  fs.mkdirSync(path.dirname(filePath), { recursive: true, mode: 0o755 });
  writeKeyFile(filePath, body);
}

function loadMerchantKeyFile(filePath: string): Record<MerchantKeyName, Hex> {
  const parsed = readKeyFile(filePath, MAX_KEY_FILE_BYTES) as Record<
    string,
    { address?: unknown; privateKey?: unknown } | undefined
  > | null;
  const secrets = {} as Record<MerchantKeyName, Hex>;
  for (const name of MERCHANT_KEY_NAMES) {
    const entry = parsed?.[name];
    const key = typeof entry?.privateKey === 'string' ? entry.privateKey.toLowerCase() : '';
    if (!PRIVATE_KEY_PATTERN.test(key))
      throw new KeyFileError(filePath, `${name}.privateKey is missing or not 32 bytes of hex`);
    if (isPublishedDevKey(key)) throw new PublishedDevKeyError(`merchant ${name}`);
    const address = privateKeyToAccount(key as Hex).address;
    if (
      typeof entry?.address !== 'string' ||
      entry.address.toLowerCase() !== address.toLowerCase()
    ) {
      throw new KeyFileError(
        filePath,
        `${name}.address does not match its private key (edited or corrupted file)`,
      );
    }
    secrets[name] = key as Hex;
  }
  return secrets;
}

/** Keys from `filePath`, created there on first use; null: fresh keys that live in memory only (tests). */
export function loadOrCreateMerchantKeys(filePath: string | null): MerchantKeys {
  if (filePath !== null && fs.existsSync(filePath)) return keysFrom(loadMerchantKeyFile(filePath));
  const secrets = { relayer: randomKey('relayer'), payTo: randomKey('payTo') };
  if (filePath !== null) saveMerchantKeyFile(filePath, secrets);
  return keysFrom(secrets);
}
