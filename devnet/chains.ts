// The devnet's two local chains: eip155:196 (funding, USD₮0) and eip155:8453 (settlement, USDC),
// each an anvil process with our EIP-3009 token, funded fresh keys and a treasury float; the
// funding chain also carries the PolicyRegistry owners register their policies in and the
// ReceiptAnchor receipts are anchored in (the anchorWriter key a writer from the start). With a
// dataDir the chains, keys and contract addresses survive restarts; with null everything is
// ephemeral (tests). devnet.json (devnetFile.ts) tells other processes (CLI faucet) where the
// chains are, no secrets; dataDirClaim.ts keeps one devnet per dataDir. This is their public surface.
import fs from 'node:fs';
import path from 'node:path';
import { type Address, getAddress } from 'viem';
import {
  eip3009TokenAbi,
  eip3009TokenBytecode,
  policyRegistryBytecode,
  policyRegistryAbi,
} from '../contracts/artifacts/abis';
import { type AnvilNode, startAnvil } from '../platform/chain/anvil';
import {
  type ChainEndpoint,
  type ChainPublicClient,
  type ChainWalletClient,
  caip2Of,
  createAnvilTestClient,
  createChainPublicClient,
  createChainWalletClient,
} from '../platform/chain/clients';
import { type Deployment, deployArtifact, hasContractCode } from '../platform/chain/deploy';
import { deployGroupSettlement } from '../platform/chain/settlementContract';
import { devnetReceiptAnchorConfig, deployReceiptAnchor } from '../platform/chain/receiptAnchor';
import {
  KEY_ROLES,
  type KeyStore,
  LATER_KEY_ROLES,
  addMissingKeyRoles,
  generateKeyStore,
  keyStoreAddresses,
  loadKeyFile,
  saveKeyFile,
} from '../platform/chain/keys';
import { mintToken, readTokenDomain } from '../platform/chain/tokens';
import { claimDataDir, releaseDataDir, stateFilePath } from './dataDirClaim';
import { type DevnetChainInfo, type DevnetInfo, keysFilePath, writeDevnetFile } from './devnetFile';
import { fundAllKeys, GAS_FUND_WEI, topUpGas } from './gas';

export { DevnetAlreadyRunningError } from './dataDirClaim';
export {
  DEVNET_FILE,
  type DevnetChainInfo,
  type DevnetContracts,
  DevnetFileError,
  type DevnetInfo,
  type DevnetTokenInfo,
  KEYS_FILE,
  devnetFilePath,
  keysFilePath,
  readDevnetFile,
} from './devnetFile';
/** Gas given to each service key on a fresh chain; anvil's base fee makes this last forever. */
export { GAS_FUND_WEI } from './gas';

export const FUNDING_CHAIN_ID = 196;
export const SETTLEMENT_CHAIN_ID = 8453;
export const TOKEN_DECIMALS = 6;
/** 1,000,000 tokens on each chain: enough float for any demo or test run. */
export const DEFAULT_TREASURY_FLOAT_ATOMIC = 1_000_000n * 10n ** BigInt(TOKEN_DECIMALS);
/** Local receipts arrive in milliseconds; poll fast so startup stays fast. */
export const DEVNET_POLLING_INTERVAL_MS = 20;

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

function loadOrCreateKeys(dataDir: string | null, log: (line: string) => void): KeyStore {
  if (dataDir === null) return generateKeyStore();
  const filePath = keysFilePath(dataDir);
  if (fs.existsSync(filePath)) {
    const added = addMissingKeyRoles(filePath);
    if (added.length > 0) log(`added fresh ${added.join(', ')} keys to ${filePath}`);
    return loadKeyFile(filePath);
  }
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
  // Our GroupSettlement beside each token: reused while the chain still holds its code.
  const chainInfo = async (address: Address, group: Address | null): Promise<DevnetChainInfo> => ({
    groupSettlement: await prepareGroupSettlement(node, keys, group, log),
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
      await topUpGas(endpoint, publicClient, keys);
      return chainInfo(getAddress(previous.token.address), previous.groupSettlement ?? null);
    }
  }

  await fundAllKeys(endpoint, keys);
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
  return chainInfo(deployment.address, null);
}

/** Reuses a recorded contract while the chain still holds its code; deploys it with the deployer otherwise. */
async function reuseOrDeploy(
  node: AnvilNode,
  keys: KeyStore,
  previous: Address | null,
  contract: {
    readonly name: string;
    /** Which key sends the deployment (default the deployer). */
    readonly from?: 'deployer' | 'relayer';
    readonly deploy: (
      publicClient: ChainPublicClient,
      deployer: ChainWalletClient,
    ) => Promise<Deployment>;
  },
  log: (line: string) => void,
): Promise<Address> {
  const endpoint: ChainEndpoint = { chainId: node.chainId, rpcUrl: node.rpcUrl };
  const clientOptions = { pollingIntervalMs: DEVNET_POLLING_INTERVAL_MS };
  const publicClient = createChainPublicClient(endpoint, clientOptions);
  if (previous !== null && (await hasContractCode(publicClient, previous))) {
    log(`${contract.name} on ${caip2Of(node.chainId)}: reusing ${previous}`);
    return getAddress(previous);
  }
  const account = keys[contract.from ?? 'deployer'].account;
  const deployer = createChainWalletClient(endpoint, account, clientOptions);
  const deployment = await contract.deploy(publicClient, deployer);
  log(`${contract.name} on ${caip2Of(node.chainId)}: deployed at ${deployment.address}`);
  return deployment.address;
}

/** Our GroupSettlement contract beside the token (x402 group settlement). */
function prepareGroupSettlement(
  node: AnvilNode,
  keys: KeyStore,
  previous: Address | null,
  log: (line: string) => void,
): Promise<Address> {
  // Sent by the relayer (funded with gas like every key): the deployer's transactions stay the token's.
  const contract = {
    name: 'GroupSettlement',
    from: 'relayer' as const,
    deploy: deployGroupSettlement,
  };
  return reuseOrDeploy(node, keys, previous, contract, log);
}

/** The PolicyRegistry on the funding chain. */
function prepareRegistry(
  node: AnvilNode,
  keys: KeyStore,
  previous: Address | null,
  log: (line: string) => void,
): Promise<Address> {
  const deploy = (publicClient: ChainPublicClient, walletClient: ChainWalletClient) =>
    deployArtifact({
      publicClient,
      walletClient,
      contractName: 'PolicyRegistry',
      abi: policyRegistryAbi,
      bytecode: policyRegistryBytecode,
      args: [],
    });
  return reuseOrDeploy(node, keys, previous, { name: 'PolicyRegistry', deploy }, log);
}

/**
 * Reuses the recorded ReceiptAnchor while the chain holds its code; otherwise deploys one with the
 * devnet config (a few seconds of writer delay, the deployer as admin, the anchorWriter key a
 * writer from the start). The writer gets gas if it has none (a key added to an older devnet).
 */
async function prepareReceiptAnchor(
  node: AnvilNode,
  keys: KeyStore,
  previous: Address | null,
  log: (line: string) => void,
): Promise<Address> {
  const endpoint: ChainEndpoint = { chainId: node.chainId, rpcUrl: node.rpcUrl };
  const clientOptions = { pollingIntervalMs: DEVNET_POLLING_INTERVAL_MS };
  const publicClient = createChainPublicClient(endpoint, clientOptions);
  const writer = keys.anchorWriter.address;
  if ((await publicClient.getBalance({ address: writer })) === 0n)
    await createAnvilTestClient(endpoint).setBalance({ address: writer, value: GAS_FUND_WEI });
  if (previous !== null && (await hasContractCode(publicClient, previous))) {
    log(`ReceiptAnchor on ${caip2Of(node.chainId)}: reusing ${previous}`);
    return getAddress(previous);
  }
  const deployment = await deployReceiptAnchor(
    publicClient,
    createChainWalletClient(endpoint, keys.deployer.account, clientOptions),
    devnetReceiptAnchorConfig(keys.deployer.address, writer),
  );
  log(`ReceiptAnchor on ${caip2Of(node.chainId)}: deployed at ${deployment.address}`);
  return deployment.address;
}

// Both anvils, pushed onto `nodes` as they come up so a failed start stops the one that did. State
// is written on stop only: anvil's dump holds the whole chain, so a periodic one costs more the
// longer it runs (docs/operations.md "The local devnet"); orphans are stopped with SIGTERM, so dump.
async function startNodes(
  dataDir: string | null,
  log: (line: string) => void,
  nodes: AnvilNode[],
): Promise<[AnvilNode, AnvilNode]> {
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
  return [nodes[0], nodes[1]];
}

/** Tokens on both chains, the registry and the anchor on the funding chain, reused where still on chain. */
async function prepareContracts(
  [fundingNode, settlementNode]: [AnvilNode, AnvilNode],
  keys: KeyStore,
  previous: DevnetInfo | null,
  treasuryFloatAtomic: bigint,
  log: (line: string) => void,
): Promise<Pick<DevnetInfo, 'chains' | 'contracts'>> {
  // Recorded contracts are reused only with the keys they were set up for (gas, float, minter);
  // a role added since (absent from the record) does not count.
  const recorded =
    previous !== null &&
    KEY_ROLES.every(
      (role) =>
        previous.addresses[role] === keys[role].address ||
        (previous.addresses[role] === undefined && LATER_KEY_ROLES.includes(role)),
    )
      ? previous.chains
      : null;
  const [funding, settlement] = await Promise.all([
    prepareChain('funding', fundingNode, keys, recorded?.funding ?? null, treasuryFloatAtomic, log),
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
  const receiptAnchor = await prepareReceiptAnchor(
    fundingNode,
    keys,
    recorded === null ? null : (previous?.contracts.receiptAnchor ?? null),
    log,
  );
  return { chains: { funding, settlement }, contracts: { policyRegistry, receiptAnchor } };
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
  }
  const previous = claimed;

  const nodes: AnvilNode[] = [];
  try {
    const keys = loadOrCreateKeys(dataDir, log);
    const [fundingNode, settlementNode] = await startNodes(dataDir, log, nodes);
    const contracts = await prepareContracts(
      [fundingNode, settlementNode],
      keys,
      previous,
      treasuryFloatAtomic,
      log,
    );
    const info: DevnetInfo = {
      ...contracts,
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
          releaseDataDir(dataDir);
        }
      })();
      return stopping;
    };
    return { info, keys, dataDir, stop };
  } catch (error) {
    await Promise.all(nodes.map((node) => node.stop()));
    if (dataDir !== null) releaseDataDir(dataDir);
    throw error;
  }
}
