// The two chains from the environment: funding (X Layer, USDT0) and settlement (Base, USDC), or
// the local devnet when neither RPC URL is set. Half a pair is refused, and so are token and
// registry addresses that the devnet would deploy itself.
import { DEVNET_RELAYER_SLOTS } from '../chain/keys';
import { RPC, type EnvReader } from './envReader';
import type { ChainConfig, ConfigFields } from './sections';

export function readChains(
  read: EnvReader,
): Pick<
  ConfigFields,
  'devnet' | 'devnetRelayerSlot' | 'funding' | 'settlement' | 'policyRegistryAddress'
> {
  const chain = (
    prefix: 'FUNDING' | 'SETTLEMENT',
    chainId: number,
    tokenName: string,
    tokenVersion: string,
    tokenSymbol: string,
  ): ChainConfig => {
    const rpcUrl = read.url(`${prefix}_RPC_URL`, RPC);
    const tokenAddress = read.address(`${prefix}_TOKEN_ADDRESS`);
    if (
      rpcUrl !== null &&
      tokenAddress === null &&
      read.raw(`${prefix}_TOKEN_ADDRESS`) === undefined
    ) {
      read.problem(`${prefix}_TOKEN_ADDRESS`, `is required when ${prefix}_RPC_URL is set`);
    }
    return {
      chainId: read.integer(`${prefix}_CHAIN_ID`, chainId, 1, Number.MAX_SAFE_INTEGER),
      rpcUrl,
      tokenAddress,
      tokenName: read.string(`${prefix}_TOKEN_NAME`, tokenName, 100),
      tokenVersion: read.string(`${prefix}_TOKEN_VERSION`, tokenVersion, 20),
      tokenSymbol: readSymbol(read, `${prefix}_TOKEN_SYMBOL`, tokenSymbol),
      tokenDecimals: read.integer(`${prefix}_TOKEN_DECIMALS`, 6, 0, 36),
    };
  };
  const funding = chain('FUNDING', 196, 'USD₮0', '1', 'USDT0');
  const settlement = chain('SETTLEMENT', 8453, 'USD Coin', '2', 'USDC');
  const fundingSet = read.raw('FUNDING_RPC_URL') !== undefined;
  const settlementSet = read.raw('SETTLEMENT_RPC_URL') !== undefined;
  if (fundingSet !== settlementSet) {
    const missing = fundingSet ? 'SETTLEMENT_RPC_URL' : 'FUNDING_RPC_URL';
    read.problem(
      missing,
      'set both FUNDING_RPC_URL and SETTLEMENT_RPC_URL, or neither (neither starts the local devnet)',
    );
  }
  const devnet = !fundingSet && !settlementSet;
  for (const name of ['FUNDING_TOKEN_ADDRESS', 'SETTLEMENT_TOKEN_ADDRESS']) {
    if (devnet && read.raw(name) !== undefined) {
      read.problem(name, 'is set without the RPC URLs; the devnet deploys its own tokens');
    }
  }
  // Optional on real networks: without it policies work, only on-chain registration is refused.
  const policyRegistryAddress = read.address('POLICY_REGISTRY_ADDRESS');
  if (devnet && read.raw('POLICY_REGISTRY_ADDRESS') !== undefined) {
    read.problem(
      'POLICY_REGISTRY_ADDRESS',
      'is set without the RPC URLs; the devnet deploys its own registry',
    );
  }
  const devnetRelayerSlot = read.integer('DEVNET_RELAYER_SLOT', 0, 0, DEVNET_RELAYER_SLOTS);
  if (!devnet && read.raw('DEVNET_RELAYER_SLOT') !== undefined) {
    read.problem(
      'DEVNET_RELAYER_SLOT',
      'is set with the RPC URLs; on real networks each process sends from RELAYER_PRIVATE_KEY',
    );
  }
  return { devnet, devnetRelayerSlot, funding, settlement, policyRegistryAddress };
}

/** A ticker as the ledger registers assets: 1–16 characters, no whitespace. */
function readSymbol(read: EnvReader, name: string, fallback: string): string {
  const symbol = read.string(name, fallback, 16);
  if (/\s/.test(symbol)) read.problem(name, 'must not contain whitespace');
  return symbol;
}
