// The devnet's two local chains: eip155:196 (funding, USD₮0) and eip155:8453 (settlement, USDC),
// each an anvil process with our EIP-3009 token, funded fresh keys and a treasury float; the
// funding chain also carries the PolicyRegistry owners register their policies in. With a
// dataDir the chains, keys and contract addresses survive restarts; with null everything is
// ephemeral (tests). devnet.json tells other processes (CLI faucet) where the chains are; no secrets.
import fs from 'node:fs';
import path from 'node:path';
import { type Address, getAddress, isAddress, parseEther } from 'viem';
import {
  eip3009TokenAbi,
  eip3009TokenBytecode,
  policyRegistryBytecode,
  policyRegistryAbi,
} from '../contracts/artifacts/abis';
import { type AnvilNode, startAnvil } from '../platform/chain/anvil';
import {
  type ChainEndpoint,
  caip2Of,
  createAnvilTestClient,
  createChainPublicClient,
  createChainWalletClient,
} from '../platform/chain/clients';
import { deployArtifact, hasContractCode } from '../platform/chain/deploy';
import {
  KEY_ROLES,
  type KeyRole,
  type KeyStore,
  generateKeyStore,
  keyStoreAddresses,
  loadKeyFile,
  saveKeyFile,
} from '../platform/chain/keys';
import { mintToken, readTokenDomain } from '../platform/chain/tokens';
import { isProcessAlive as isAlive } from '../platform/process';

export const FUNDING_CHAIN_ID = 196;
export const SETTLEMENT_CHAIN_ID = 8453;
export const TOKEN_DECIMALS = 6;
/** 1,000,000 tokens on each chain: enough float for any demo or test run. */
export const DEFAULT_TREASURY_FLOAT_ATOMIC = 1_000_000n * 10n ** BigInt(TOKEN_DECIMALS);
/** Gas given to each service key on a fresh chain; anvil's base fee makes this last forever. */
export const GAS_FUND_WEI = parseEther('1000');
/** Local receipts arrive in milliseconds; poll fast so startup stays fast. */
export const DEVNET_POLLING_INTERVAL_MS = 20;
const ORPHAN_STOP_TIMEOUT_MS = 5_000;

export const DEVNET_FILE = 'devnet.json';
export const KEYS_FILE = 'keys.json';

export type ChainRole = 'funding' | 'settlement';

interface TokenSpec {
  readonly name: string;
  readonly symbol: string;
  readonly version: string;
}

/** The EIP-712 names match the real tokens' domains (x402 notes), so signing code is exercised honestly. */
export const DEVNET_TOKENS: Readonly<Record<ChainRole, TokenSpec & { chainId: number }>> = {
  funding: { chainId: FUNDING_CHAIN_ID, name: 'USD\u20AE0', symbol: 'USDT0', version: '1' },
  settlement: { chainId: SETTLEMENT_CHAIN_ID, name: 'USD Coin', symbol: 'USDC', version: '2' },
};

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
}

/** Contracts beside the tokens; all on the funding chain. */
export interface DevnetContracts {
  /** null only in a devnet.json written before the registry existed (the next start deploys it). */
  readonly policyRegistry: Address | null;
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

export interface DevnetChains {
  readonly info: DevnetInfo;
  /** The signing keys, for in-process consumers (gateway, tests). Redacted in logs. */
  readonly keys: KeyStore;
  readonly dataDir: string | null;
  /** Stops both chains (their state files are written) and marks devnet.json stopped. Idempotent. */
  stop(): Promise<void>;
}

export interface StartDevnetChainsOptions {
  readonly dataDir: string | null;
  readonly log?: (line: string) => void;
  readonly treasuryFloatAtomic?: bigint;
}

export class DevnetFileError extends Error {
  readonly path: string;

  constructor(filePath: string, reason: string, options?: { cause?: unknown }) {
    super(`${filePath}: ${reason}`, options);
    this.name = 'DevnetFileError';
    this.path = filePath;
  }
}

export class DevnetAlreadyRunningError extends Error {
  readonly dataDir: string;
  readonly ownerPid: number;

  constructor(dataDir: string, ownerPid: number) {
    super(
      `a devnet for ${dataDir} is already running (owner pid ${ownerPid}); stop it first, ` +
        `or delete ${DEVNET_FILE} there if that process is not a devnet`,
    );
    this.name = 'DevnetAlreadyRunningError';
    this.dataDir = dataDir;
    this.ownerPid = ownerPid;
  }
}

/** dataDirs with chains running in this process: a second start would share their state files. */
const activeDataDirs = new Set<string>();

export function devnetFilePath(dataDir: string): string {
  return path.join(dataDir, DEVNET_FILE);
}

export function keysFilePath(dataDir: string): string {
  return path.join(dataDir, KEYS_FILE);
}

function stateFilePath(dataDir: string, chainId: number): string {
  return path.join(dataDir, `anvil-${chainId}.json`);
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
  // Files from before the registry existed have no `contracts`; they stay readable.
  return { ...parsed, contracts: { policyRegistry: parsed.contracts?.policyRegistry ?? null } };
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
    KEY_ROLES.every((role) => typeof info.addresses?.[role] === 'string') &&
    (info.contracts?.policyRegistry == null || isAddress(info.contracts.policyRegistry)) &&
    typeof info.pids?.owner === 'number';
  if (!ok) throw new DevnetFileError(filePath, 'does not have the devnet.json shape');
}

function writeDevnetFile(dataDir: string, info: DevnetInfo): void {
  const filePath = devnetFilePath(dataDir);
  const tempPath = `${filePath}.${process.pid}.tmp`;
  fs.writeFileSync(tempPath, `${JSON.stringify(info, null, 2)}\n`);
  fs.renameSync(tempPath, filePath);
}

/** True for a live process started with `--state <stateFile>`: an anvil of this dataDir (Linux /proc). */
function isAnvilOnStateFile(pid: number, stateFile: string): boolean {
  try {
    const args = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const stateIndex = args.indexOf('--state');
    return stateIndex >= 0 && args[stateIndex + 1] === stateFile;
  } catch {
    return false;
  }
}

async function waitUntilGone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadlineMs = Date.now() + timeoutMs;
  while (Date.now() < deadlineMs) {
    if (!isAlive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return !isAlive(pid);
}

/**
 * Refuses a dataDir whose chains are still running for a live owner, and stops anvil orphans left
 * by an owner that died without stopping them: an orphan keeps dumping its stale state into the
 * same file every few seconds and would overwrite the new chain's state. A devnet counts as running
 * only while its anvils run on this dataDir's state files, so a reused owner pid cannot block a start.
 */
async function claimDataDir(
  dataDir: string,
  log: (line: string) => void,
): Promise<DevnetInfo | null> {
  if (activeDataDirs.has(dataDir)) throw new DevnetAlreadyRunningError(dataDir, process.pid);
  if (!fs.existsSync(devnetFilePath(dataDir))) return null;
  const previous = readDevnetFile(dataDir);
  const liveAnvils = (['funding', 'settlement'] as const)
    .map((role) => ({ role, pid: previous.pids[role] }))
    .filter(({ role, pid }) =>
      isAnvilOnStateFile(pid, stateFilePath(dataDir, previous.chains[role].chainId)),
    );
  if (liveAnvils.length === 0) return previous;
  const owner = previous.pids.owner;
  if (owner !== process.pid && isAlive(owner)) throw new DevnetAlreadyRunningError(dataDir, owner);
  for (const { role, pid } of liveAnvils) {
    log(`stopping orphaned anvil pid ${pid} (${role}) left by a previous run`);
    process.kill(pid, 'SIGTERM'); // anvil writes its state file on SIGTERM, so nothing is lost
    if (!(await waitUntilGone(pid, ORPHAN_STOP_TIMEOUT_MS))) {
      process.kill(pid, 'SIGKILL');
      await waitUntilGone(pid, ORPHAN_STOP_TIMEOUT_MS);
    }
  }
  return previous;
}

function loadOrCreateKeys(dataDir: string | null, log: (line: string) => void): KeyStore {
  if (dataDir === null) return generateKeyStore();
  const filePath = keysFilePath(dataDir);
  if (fs.existsSync(filePath)) return loadKeyFile(filePath);
  const keys = generateKeyStore();
  saveKeyFile(filePath, keys);
  log(`generated fresh keys in ${filePath}`);
  return keys;
}

/**
 * Reuses the recorded token when the chain still has its code (state restored); otherwise the chain
 * is fresh (first start, or the state file was lost): fund the keys with gas, deploy, mint the float.
 */
async function prepareChain(
  role: ChainRole,
  node: AnvilNode,
  keys: KeyStore,
  previous: DevnetChainInfo | null,
  treasuryFloatAtomic: bigint,
  log: (line: string) => void,
): Promise<DevnetChainInfo> {
  const spec = DEVNET_TOKENS[role];
  const endpoint: ChainEndpoint = { chainId: node.chainId, rpcUrl: node.rpcUrl };
  const clientOptions = { pollingIntervalMs: DEVNET_POLLING_INTERVAL_MS };
  const publicClient = createChainPublicClient(endpoint, clientOptions);
  const chainInfo = (address: Address): DevnetChainInfo => ({
    caip2: caip2Of(node.chainId),
    chainId: node.chainId,
    rpcUrl: node.rpcUrl,
    token: {
      address,
      name: spec.name,
      symbol: spec.symbol,
      version: spec.version,
      decimals: TOKEN_DECIMALS,
    },
  });

  if (previous !== null && (await hasContractCode(publicClient, previous.token.address))) {
    const domain = await readTokenDomain(publicClient, previous.token.address);
    const minter = await publicClient.readContract({
      address: previous.token.address,
      abi: eip3009TokenAbi,
      functionName: 'minter',
    });
    // A token minted by another deployer (keys.json was replaced) would leave the faucet unable to mint.
    if (
      domain.name === spec.name &&
      domain.version === spec.version &&
      minter === keys.deployer.address
    ) {
      log(`${spec.symbol} on ${caip2Of(node.chainId)}: reusing ${previous.token.address}`);
      return chainInfo(getAddress(previous.token.address));
    }
  }

  const testClient = createAnvilTestClient(endpoint);
  for (const keyRole of KEY_ROLES) {
    await testClient.setBalance({ address: keys[keyRole].address, value: GAS_FUND_WEI });
  }
  const deployer = createChainWalletClient(endpoint, keys.deployer.account, clientOptions);
  const deployment = await deployArtifact({
    publicClient,
    walletClient: deployer,
    contractName: `Eip3009Token (${spec.symbol})`,
    abi: eip3009TokenAbi,
    bytecode: eip3009TokenBytecode,
    args: [spec.name, spec.symbol, spec.version],
  });
  await mintToken({
    publicClient,
    minter: deployer,
    token: deployment.address,
    to: keys.treasury.address,
    amountAtomic: treasuryFloatAtomic,
  });
  log(
    `${spec.symbol} on ${caip2Of(node.chainId)}: deployed at ${deployment.address}, float minted to treasury`,
  );
  return chainInfo(deployment.address);
}

/** Reuses the recorded registry while the funding chain still holds its code; deploys it otherwise. */
async function prepareRegistry(
  node: AnvilNode,
  keys: KeyStore,
  previous: Address | null,
  log: (line: string) => void,
): Promise<Address> {
  const endpoint: ChainEndpoint = { chainId: node.chainId, rpcUrl: node.rpcUrl };
  const clientOptions = { pollingIntervalMs: DEVNET_POLLING_INTERVAL_MS };
  const publicClient = createChainPublicClient(endpoint, clientOptions);
  if (previous !== null && (await hasContractCode(publicClient, previous))) {
    log(`PolicyRegistry on ${caip2Of(node.chainId)}: reusing ${previous}`);
    return getAddress(previous);
  }
  const deployment = await deployArtifact({
    publicClient,
    walletClient: createChainWalletClient(endpoint, keys.deployer.account, clientOptions),
    contractName: 'PolicyRegistry',
    abi: policyRegistryAbi,
    bytecode: policyRegistryBytecode,
    args: [],
  });
  log(`PolicyRegistry on ${caip2Of(node.chainId)}: deployed at ${deployment.address}`);
  return deployment.address;
}

export async function startDevnetChains(options: StartDevnetChainsOptions): Promise<DevnetChains> {
  const log = options.log ?? (() => undefined);
  const treasuryFloatAtomic = options.treasuryFloatAtomic ?? DEFAULT_TREASURY_FLOAT_ATOMIC;
  const dataDir = options.dataDir === null ? null : path.resolve(options.dataDir);
  let claimed: DevnetInfo | null = null;
  if (dataDir !== null) {
    // 0755 like the rest of DATA_DIR: the embedded PostgreSQL (another OS user) must reach <dataDir>/pg; keys.json itself is 0600.
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o755 });
    claimed = await claimDataDir(dataDir, log);
    activeDataDirs.add(dataDir);
  }
  const previous = claimed;

  const nodes: AnvilNode[] = [];
  try {
    const keys = loadOrCreateKeys(dataDir, log);
    const started = await Promise.allSettled(
      (['funding', 'settlement'] as const).map((role) =>
        startAnvil({
          chainId: DEVNET_TOKENS[role].chainId,
          ...(dataDir !== null
            ? { stateFile: stateFilePath(dataDir, DEVNET_TOKENS[role].chainId) }
            : {}),
          log: (line) => log(`[anvil ${DEVNET_TOKENS[role].chainId}] ${line}`),
        }),
      ),
    );
    for (const result of started) if (result.status === 'fulfilled') nodes.push(result.value);
    for (const result of started) if (result.status === 'rejected') throw result.reason;
    const [fundingNode, settlementNode] = nodes;

    // Recorded contracts are reused only with the keys they were set up for (gas, float, minter).
    const recorded =
      previous !== null &&
      KEY_ROLES.every((role) => previous.addresses[role] === keys[role].address)
        ? previous.chains
        : null;
    const [funding, settlement] = await Promise.all([
      prepareChain(
        'funding',
        fundingNode,
        keys,
        recorded?.funding ?? null,
        treasuryFloatAtomic,
        log,
      ),
      prepareChain(
        'settlement',
        settlementNode,
        keys,
        recorded?.settlement ?? null,
        treasuryFloatAtomic,
        log,
      ),
    ]);
    // After the token, so a fresh chain has already funded the deployer with gas.
    const policyRegistry = await prepareRegistry(
      fundingNode,
      keys,
      previous?.contracts.policyRegistry ?? null,
      log,
    );
    const info: DevnetInfo = {
      chains: { funding, settlement },
      contracts: { policyRegistry },
      addresses: keyStoreAddresses(keys),
      startedAt: new Date().toISOString(),
      stoppedAt: null,
      pids: { owner: process.pid, funding: fundingNode.pid, settlement: settlementNode.pid },
    };
    if (dataDir !== null) writeDevnetFile(dataDir, info);

    let stopping: Promise<void> | null = null;
    const stop = (): Promise<void> => {
      stopping ??= (async () => {
        await Promise.all(nodes.map((node) => node.stop()));
        if (dataDir !== null) {
          writeDevnetFile(dataDir, { ...info, stoppedAt: new Date().toISOString() });
          activeDataDirs.delete(dataDir);
        }
      })();
      return stopping;
    };
    return { info, keys, dataDir, stop };
  } catch (error) {
    await Promise.all(nodes.map((node) => node.stop()));
    if (dataDir !== null) activeDataDirs.delete(dataDir);
    throw error;
  }
}
