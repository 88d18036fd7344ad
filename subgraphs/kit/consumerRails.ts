// The consumer purchase path's rails from their parts: two chains with their EIP-3009 tokens, the
// treasury (the same address on both), the provider registry and the spread. The embedded devnet
// (devnet/consumerRails.ts) and a configured deployment (cli/consumerSetup.ts) both build them
// here, so the two can only differ in where the parts come from.
import type { ConsumerRailAsset, ConsumerRails } from './types';

/** DECISIONS: the cross-rail spread is 50 bp of the provider cost, rounded up. */
export const CONSUMER_SPREAD_BPS = 50n;

/** One chain and its token, as the devnet records it (devnet.json) and the configuration names it. */
export interface RailChain {
  readonly chainId: number;
  readonly rpcUrl: string;
  readonly token: {
    readonly address: `0x${string}`;
    readonly decimals: number;
    readonly symbol: string;
    /** EIP-712 domain name and version. */
    readonly name: string;
    readonly version: string;
  };
}

export interface ConsumerRailParts {
  /** Users fund here (USD₮0 on eip155:196). */
  readonly funding: RailChain;
  /** Merchants are paid here (USDC on eip155:8453). */
  readonly settlement: RailChain;
  /** The fund route's payTo on the funding rail and the payer of merchants on the settlement rail. */
  readonly treasury: `0x${string}`;
  /** Catalog provider id → merchant base URL (e.g. `{'spendctl-domains': merchant.url}`). */
  readonly providers: Readonly<Record<string, string>>;
}

function railOf(chain: RailChain, treasury: `0x${string}`): ConsumerRailAsset {
  return {
    network: `eip155:${chain.chainId}`,
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

export function buildConsumerRails(parts: ConsumerRailParts): ConsumerRails {
  return {
    funding: railOf(parts.funding, parts.treasury),
    settlement: railOf(parts.settlement, parts.treasury),
    providers: parts.providers,
    spreadBps: CONSUMER_SPREAD_BPS,
  };
}
