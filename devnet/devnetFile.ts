// devnet.json, the record other processes (the CLI faucet, `start`) read to find a devnet's chains:
// its shape, where it and keys.json live in a dataDir, and its reader and writer. Addresses, ports
// and pids only; private keys stay in keys.json (platform/chain/keys.ts).
import fs from 'node:fs';
import path from 'node:path';
import { type Address, isAddress } from 'viem';
import { KEY_ROLES, type KeyRole, LATER_KEY_ROLES } from '../platform/chain/keys';

export const DEVNET_FILE = 'devnet.json';
export const KEYS_FILE = 'keys.json';

export interface DevnetTokenInfo {
  readonly address: Address;
  readonly name: string;
  readonly symbol: string;
  readonly version: string;
  readonly decimals: number;
}

export interface DevnetChainInfo {
  readonly caip2: `eip155:${number}`;
  readonly chainId: number;
  readonly rpcUrl: string;
  readonly token: DevnetTokenInfo;
  /** Our GroupSettlement contract (x402 group settlement); absent in a devnet.json from before it. */
  readonly groupSettlement?: Address | null;
}

/** Contracts beside the tokens; all on the funding chain. */
export interface DevnetContracts {
  /** null only in a devnet.json written before the registry existed (the next start deploys it). */
  readonly policyRegistry: Address | null;
  /** ReceiptAnchor (writer: the anchorWriter key from the start); null only in a devnet.json from before it existed. */
  readonly receiptAnchor: Address | null;
}

/** The content of devnet.json. Addresses only; private keys stay in keys.json. */
export interface DevnetInfo {
  readonly chains: { readonly funding: DevnetChainInfo; readonly settlement: DevnetChainInfo };
  readonly contracts: DevnetContracts;
  readonly addresses: Readonly<Record<KeyRole, Address>>;
  readonly startedAt: string;
  /** Set by stop(); a devnet.json with stoppedAt is a record, not a running devnet. */
  readonly stoppedAt: string | null;
  /** owner: the process that started the chains; the others are the anvil processes. */
  readonly pids: { readonly owner: number; readonly funding: number; readonly settlement: number };
}

export class DevnetFileError extends Error {
  readonly path: string;

  constructor(filePath: string, reason: string, options?: { cause?: unknown }) {
    super(`${filePath}: ${reason}`, options);
    this.name = 'DevnetFileError';
    this.path = filePath;
  }
}

export function devnetFilePath(dataDir: string): string {
  return path.join(dataDir, DEVNET_FILE);
}

export function keysFilePath(dataDir: string): string {
  return path.join(dataDir, KEYS_FILE);
}

export function readDevnetFile(dataDir: string): DevnetInfo {
  const filePath = devnetFilePath(dataDir);
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(filePath, 'utf8'));
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new DevnetFileError(
      filePath,
      missing ? 'not found; the devnet was never started here' : 'unreadable',
      {
        cause: error,
      },
    );
  }
  assertDevnetInfo(filePath, parsed);
  // Files from before the registry or the anchor existed lack them; they stay readable.
  return {
    ...parsed,
    contracts: {
      policyRegistry: parsed.contracts?.policyRegistry ?? null,
      receiptAnchor: parsed.contracts?.receiptAnchor ?? null,
    },
  };
}

function assertDevnetInfo(filePath: string, value: unknown): asserts value is DevnetInfo {
  const info = value as Partial<DevnetInfo> | null;
  const chainOk = (chain: Partial<DevnetChainInfo> | undefined): boolean =>
    typeof chain?.chainId === 'number' &&
    typeof chain.rpcUrl === 'string' &&
    typeof chain.token?.address === 'string' &&
    isAddress(chain.token.address) &&
    typeof chain.token.decimals === 'number';
  const ok =
    typeof info === 'object' &&
    info !== null &&
    chainOk(info.chains?.funding) &&
    chainOk(info.chains?.settlement) &&
    KEY_ROLES.every(
      (role) => typeof info.addresses?.[role] === 'string' || LATER_KEY_ROLES.includes(role),
    ) &&
    (info.contracts?.policyRegistry == null || isAddress(info.contracts.policyRegistry)) &&
    (info.contracts?.receiptAnchor == null || isAddress(info.contracts.receiptAnchor)) &&
    typeof info.pids?.owner === 'number';
  if (!ok) throw new DevnetFileError(filePath, 'does not have the devnet.json shape');
}

export function writeDevnetFile(dataDir: string, info: DevnetInfo): void {
  const filePath = devnetFilePath(dataDir);
  const tempPath = `${filePath}.${process.pid}.tmp`;
  fs.writeFileSync(tempPath, `${JSON.stringify(info, null, 2)}\n`);
  fs.renameSync(tempPath, filePath);
}
