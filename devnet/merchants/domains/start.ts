// Starts the domains merchant against the devnet's settlement chain, as `npm start` and tests do:
// its own keys (kept in <dataDir>/merchants/domains-keys.json, or in memory without a dataDir), gas
// for its relayer from anvil, then the seller itself. Devnet only: gas comes from an anvil cheat code.
import path from 'node:path';
import {
  type ChainEndpoint,
  createAnvilTestClient,
  createChainPublicClient,
} from '../../../platform/chain/clients';
import { DEVNET_POLLING_INTERVAL_MS, type DevnetChainInfo, GAS_FUND_WEI } from '../../chains';
import { loadOrCreateMerchantKeys } from '../keys';
import { DEVNET_REGISTERED_DOMAINS } from './names';
import { type DomainsMerchant, startDomainsMerchant } from './server';

export const DOMAINS_MERCHANT_KEYS_FILE = path.join('merchants', 'domains-keys.json');

export interface DevnetDomainsMerchantOptions {
  /** The devnet's eip155:8453 chain with its USDC. */
  readonly settlement: DevnetChainInfo;
  /** null: fresh keys every start (tests). */
  readonly dataDir: string | null;
  /** Default: DEVNET_REGISTERED_DOMAINS, the list the devnet RDAP registry serves. */
  readonly registeredDomains?: Iterable<string>;
  readonly port?: number;
  readonly now?: () => Date;
  /** The authorization lifetime the merchant's 402 asks for (tests shorten it); default 300 s. */
  readonly maxTimeoutSeconds?: number;
}

export async function startDevnetDomainsMerchant(
  options: DevnetDomainsMerchantOptions,
): Promise<DomainsMerchant> {
  const { settlement } = options;
  const keys = loadOrCreateMerchantKeys(
    options.dataDir === null ? null : path.join(options.dataDir, DOMAINS_MERCHANT_KEYS_FILE),
  );
  const endpoint: ChainEndpoint = { chainId: settlement.chainId, rpcUrl: settlement.rpcUrl };
  // Topped up only when low, so a persistent devnet's balances stay what the chain recorded.
  const gasWei = await createChainPublicClient(endpoint).getBalance({
    address: keys.relayer.address,
  });
  if (gasWei < GAS_FUND_WEI / 2n)
    await createAnvilTestClient(endpoint).setBalance({
      address: keys.relayer.address,
      value: GAS_FUND_WEI,
    });
  return startDomainsMerchant({
    chain: settlement,
    keys,
    registeredDomains: options.registeredDomains ?? DEVNET_REGISTERED_DOMAINS,
    pollingIntervalMs: DEVNET_POLLING_INTERVAL_MS,
    ...(options.port !== undefined ? { port: options.port } : {}),
    ...(options.now !== undefined ? { now: options.now } : {}),
    ...(options.maxTimeoutSeconds !== undefined
      ? { maxTimeoutSeconds: options.maxTimeoutSeconds }
      : {}),
  });
}
