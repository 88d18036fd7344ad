// The merchants a process buys from, by catalog provider: the configured URLs (PROVIDER_<NAME>_URL),
// or on `npm start`'s embedded default (the devnet, nothing configured) the local devnet merchant
// on the devnet's settlement chain. The URLs come from here, never from code paths.
import type { DevnetChainInfo } from '../devnet/chains';
import { startDevnetDomainsMerchant } from '../devnet/merchants/domains/start';
import type { Config } from '../platform/config';

export type ProviderUrls = Config['providerUrls'];

export interface Providers {
  /** The URLs in effect (devnet merchants filled in). */
  readonly urls: ProviderUrls;
  stop(): Promise<void>;
}

/** platform/config accepted the URL, so it parses; only its password is hidden. */
function withoutPassword(url: string): string {
  const parsed = new URL(url);
  if (parsed.password === '') return url;
  parsed.password = '***';
  return parsed.toString().replace(/\/+$/, '');
}

export async function prepareProviders(options: {
  urls: ProviderUrls;
  /** The devnet's settlement chain when this process runs the embedded devnet; null otherwise. */
  devnetSettlement: DevnetChainInfo | null;
  /** Where a devnet merchant keeps its keys. */
  dataDir: string;
  out: (line: string) => void;
}): Promise<Providers> {
  if (options.urls.domains !== null) {
    options.out(`providers       domains.check ${withoutPassword(options.urls.domains)}`);
    return { urls: options.urls, stop: async () => undefined };
  }
  if (options.devnetSettlement === null) {
    options.out('providers       domains.check none (PROVIDER_DOMAINS_URL unset)');
    return { urls: options.urls, stop: async () => undefined };
  }
  const merchant = await startDevnetDomainsMerchant({
    settlement: options.devnetSettlement,
    dataDir: options.dataDir,
  });
  options.out(
    `providers       domains.check ${merchant.url} (devnet merchant: ${merchant.priceAtomic} atomic USDC on ${merchant.network} to ${merchant.payTo})`,
  );
  return { urls: { ...options.urls, domains: merchant.url }, stop: () => merchant.stop() };
}
