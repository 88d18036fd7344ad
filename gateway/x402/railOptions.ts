// The settlement rail's configuration (createSettlementRail in rail.ts): the funding chain, the
// relayer key that pays gas, how long and how far settlement and its chain reads may look. Its own
// module so the group path can take a part of it without importing the rail that builds it.
import type { Address, Hex } from 'viem';
import type { GroupSettlementOptions } from './groupSettlement/types';

export interface RailOptions {
  readonly chainId: number;
  readonly rpcUrl: string;
  readonly token: Address;
  /** Pays the gas of settlements; gains nothing from them. */
  readonly relayerPrivateKey: Hex;
  /** How long a settlement waits for its receipt before the outcome counts as ambiguous. */
  readonly confirmationTimeoutMs: number;
  readonly pollingIntervalMs?: number;
  /** How far back to search for an authorization's use; default 50,000 blocks. */
  readonly logLookbackBlocks?: bigint;
  /** CHAIN_LOG_PAGE_BLOCKS: blocks per eth_getLogs request (RPCs bound log ranges); default 2,000. */
  readonly logPageBlocks?: bigint;
  /** Group settlement through our contract (groupSettlement/); absent: one transaction per payment. */
  readonly group?: GroupSettlementOptions;
}
