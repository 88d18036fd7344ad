// The devnet faucet behind `spend-control devnet faucet <address> [amount]`: mints devnet USDT0 on
// eip155:196 and USDC on eip155:8453 to any address and gives it gas. Works only against a running
// devnet found through <dataDir>/devnet.json, and only there: the deployer key is the token minter.
import { type Address, type Hex, formatEther, getAddress, isAddress, zeroAddress } from 'viem';
import {
  type ChainEndpoint,
  createAnvilTestClient,
  createChainPublicClient,
  createChainWalletClient,
} from '../platform/chain/clients';
import { loadKeyFile } from '../platform/chain/keys';
import { mintToken } from '../platform/chain/tokens';
import {
  type ChainRole,
  DEVNET_POLLING_INTERVAL_MS,
  type DevnetChainInfo,
  type DevnetInfo,
  keysFilePath,
  readDevnetFile,
} from './chains';

export const DEFAULT_FAUCET_AMOUNT = '100.00';
/** Per call and per chain; devnet tokens are worthless, but a typo should not mint a quadrillion. */
export const MAX_FAUCET_AMOUNT_DISPLAY = 1_000_000n;
export const DEFAULT_FAUCET_GAS_WEI = 10n ** 18n;
/** A local chain answers in milliseconds; longer means it is not there. */
const PROBE_TIMEOUT_MS = 2_000;
/** Longer inputs are not amounts; bounding them keeps the parser's work bounded. */
const MAX_AMOUNT_TEXT_LENGTH = 64;

export interface FaucetOptions {
  readonly dataDir: string;
  readonly address: string;
  /** Display units of each token, e.g. "100.5"; default "100.00". */
  readonly amount?: string;
  readonly gasWei?: bigint;
}

export interface FaucetGrant {
  readonly txHash: Hex;
  readonly amountAtomic: bigint;
}

export interface FaucetResult {
  readonly address: Address;
  readonly funding: FaucetGrant;
  readonly settlement: FaucetGrant;
  /** Added to the address's native balance on each chain. */
  readonly gasWei: bigint;
}

export class FaucetRefusedError extends Error {
  readonly reason: 'DEVNET_NOT_RUNNING' | 'INVALID_ADDRESS' | 'INVALID_AMOUNT';

  constructor(
    reason: FaucetRefusedError['reason'],
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`faucet refused: ${message}`, options);
    this.name = 'FaucetRefusedError';
    this.reason = reason;
  }
}

/**
 * Exact decimal parsing of a display amount into atomic units: "100.5" with 6 decimals is
 * 100500000n. Digits with at most one point only: no sign, exponent, spaces or separators, and no
 * more fractional digits than the token has (silently rounding money is never right).
 */
export function parseDisplayAmount(text: string, decimals: number): bigint {
  if (text.length === 0 || text.length > MAX_AMOUNT_TEXT_LENGTH) {
    throw new RangeError(`amount must be 1–${MAX_AMOUNT_TEXT_LENGTH} characters`);
  }
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) throw new RangeError(`"${text}" is not a plain decimal amount like 100 or 100.25`);
  const fraction = match[2] ?? '';
  if (fraction.length > decimals) {
    throw new RangeError(`"${text}" has ${fraction.length} decimals; the token has ${decimals}`);
  }
  return BigInt(match[1]) * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, '0') || '0');
}

function parseRecipient(text: string): Address {
  // Mixed case must be a valid EIP-55 checksum: a typo in a checksummed address is caught, not paid.
  if (!isAddress(text)) {
    throw new FaucetRefusedError(
      'INVALID_ADDRESS',
      `"${text}" is not an address (0x + 40 hex, valid checksum if mixed case)`,
    );
  }
  const address = getAddress(text);
  if (address === zeroAddress)
    throw new FaucetRefusedError('INVALID_ADDRESS', 'the zero address cannot receive tokens');
  return address;
}

function parseGrant(text: string, decimals: number): bigint {
  let amountAtomic: bigint;
  try {
    amountAtomic = parseDisplayAmount(text, decimals);
  } catch (error) {
    throw new FaucetRefusedError('INVALID_AMOUNT', (error as Error).message, { cause: error });
  }
  if (amountAtomic === 0n)
    throw new FaucetRefusedError('INVALID_AMOUNT', 'amount must be positive');
  if (amountAtomic > MAX_FAUCET_AMOUNT_DISPLAY * 10n ** BigInt(decimals)) {
    throw new FaucetRefusedError('INVALID_AMOUNT', `at most ${MAX_FAUCET_AMOUNT_DISPLAY} per call`);
  }
  return amountAtomic;
}

/** The chain must answer with its recorded id: a dead port, or a port reused by something else, is refused. */
async function assertChainRunning(role: ChainRole, chain: DevnetChainInfo): Promise<void> {
  const publicClient = createChainPublicClient(chain, {
    timeoutMs: PROBE_TIMEOUT_MS,
    retryCount: 0,
  });
  let chainId: number;
  try {
    chainId = await publicClient.getChainId();
  } catch (error) {
    throw new FaucetRefusedError(
      'DEVNET_NOT_RUNNING',
      `the devnet ${role} chain (${chain.caip2}) does not answer at ${chain.rpcUrl}; start the devnet first`,
      { cause: error },
    );
  }
  if (chainId !== chain.chainId) {
    throw new FaucetRefusedError(
      'DEVNET_NOT_RUNNING',
      `${chain.rpcUrl} answers chain id ${chainId}, not the devnet's ${chain.chainId}; start the devnet again`,
    );
  }
}

function readRunningDevnet(dataDir: string): DevnetInfo {
  let info: DevnetInfo;
  try {
    info = readDevnetFile(dataDir);
  } catch (error) {
    throw new FaucetRefusedError('DEVNET_NOT_RUNNING', (error as Error).message, { cause: error });
  }
  if (info.stoppedAt !== null) {
    throw new FaucetRefusedError(
      'DEVNET_NOT_RUNNING',
      `the devnet in ${dataDir} was stopped at ${info.stoppedAt}`,
    );
  }
  return info;
}

export async function faucet(options: FaucetOptions): Promise<FaucetResult> {
  const address = parseRecipient(options.address);
  const amountText = options.amount ?? DEFAULT_FAUCET_AMOUNT;
  const gasWei = options.gasWei ?? DEFAULT_FAUCET_GAS_WEI;
  if (gasWei < 0n)
    throw new FaucetRefusedError(
      'INVALID_AMOUNT',
      `gas must not be negative (${formatEther(gasWei)} ETH)`,
    );
  const info = readRunningDevnet(options.dataDir);
  const grants = {
    funding: parseGrant(amountText, info.chains.funding.token.decimals),
    settlement: parseGrant(amountText, info.chains.settlement.token.decimals),
  };
  // One after the other, so the refusal always names the first chain that is down.
  await assertChainRunning('funding', info.chains.funding);
  await assertChainRunning('settlement', info.chains.settlement);
  const deployer = loadKeyFile(keysFilePath(options.dataDir)).deployer;

  const grant = async (role: ChainRole): Promise<FaucetGrant> => {
    const chain = info.chains[role];
    const endpoint: ChainEndpoint = { chainId: chain.chainId, rpcUrl: chain.rpcUrl };
    const clientOptions = { pollingIntervalMs: DEVNET_POLLING_INTERVAL_MS };
    const publicClient = createChainPublicClient(endpoint, clientOptions);
    const minted = await mintToken({
      publicClient,
      minter: createChainWalletClient(endpoint, deployer.account, clientOptions),
      token: chain.token.address,
      to: address,
      amountAtomic: grants[role],
    });
    if (gasWei > 0n) {
      const balanceWei = await publicClient.getBalance({ address });
      await createAnvilTestClient(endpoint).setBalance({ address, value: balanceWei + gasWei });
    }
    return { txHash: minted.txHash, amountAtomic: grants[role] };
  };
  const [funding, settlement] = await Promise.all([grant('funding'), grant('settlement')]);
  return { address, funding, settlement, gasWei };
}
