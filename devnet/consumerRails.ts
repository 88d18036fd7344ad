// The consumer purchase path's rails on the devnet: USD₮0 on the funding chain (users fund the
// treasury there), USDC on the settlement chain (the treasury pays merchants there), and the
// provider registry naming where each merchant answers. `npm start` and tests build it from the
// running devnet; a configured deployment builds the same shape from its configuration through
// the same builder (subgraphs/kit buildConsumerRails).
import { buildConsumerRails, type ConsumerRails } from '../subgraphs/kit';
import type { DevnetInfo } from './devnetFile';

/** `providers`: catalog provider id → merchant base URL (e.g. `{'spendctl-domains': merchant.url}`). */
export function devnetConsumerRails(
  info: DevnetInfo,
  providers: Readonly<Record<string, string>>,
): ConsumerRails {
  return buildConsumerRails({
    funding: info.chains.funding,
    settlement: info.chains.settlement,
    treasury: info.addresses.treasury,
    providers,
  });
}
