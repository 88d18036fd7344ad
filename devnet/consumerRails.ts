// The consumer purchase path's rails on the devnet: USD₮0 on the funding chain (users fund the
// treasury there), USDC on the settlement chain (the treasury pays merchants there), and the
// provider registry naming where each merchant answers. `npm start` and tests build it from the
// running devnet; a real deployment builds the same shape from config.
import type { ConsumerRailAsset, ConsumerRails } from '../subgraphs/kit';
import type { DevnetChainInfo, DevnetInfo } from './devnetFile';

/** DECISIONS: the cross-rail spread is 50 bp of the provider cost, rounded up. */
export const DEVNET_SPREAD_BPS = 50n;

function railOf(chain: DevnetChainInfo, treasury: `0x${string}`): ConsumerRailAsset {
  return {
    network: chain.caip2,
    chainId: chain.chainId,
    rpcUrl: chain.rpcUrl,
    token: chain.token.address,
    decimals: chain.token.decimals,
    symbol: chain.token.symbol,
    name: chain.token.name,
    version: chain.token.version,
    treasury,
  };
}

/** `providers`: catalog provider id → merchant base URL (e.g. `{'spendctl-domains': merchant.url}`). */
export function devnetConsumerRails(
  info: DevnetInfo,
  providers: Readonly<Record<string, string>>,
): ConsumerRails {
  return {
    funding: railOf(info.chains.funding, info.addresses.treasury),
    settlement: railOf(info.chains.settlement, info.addresses.treasury),
    providers,
    spreadBps: DEVNET_SPREAD_BPS,
  };
}
