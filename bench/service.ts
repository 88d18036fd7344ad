// What every request benchmark needs around the service: a scratch database on the server named by
// DATABASE_URL (migrated, dropped afterwards; the same helper the tests use), and the service
// description a benchmark stack runs with.
import type { Address } from 'viem';
import type { RestServiceInfo } from '../gateway/rest/types';

export { createTestDatabase as createScratchDatabase } from '../platform/db/testDb';

/** A bench instance's RestServiceInfo; asset and payTo only where the bench takes x402 payments. */
export function benchServiceInfo(
  asset: Address | null = null,
  payTo: Address | null = null,
): RestServiceInfo {
  return {
    publicUrl: 'http://127.0.0.1',
    docsBaseUrl: null,
    serviceName: 'bench',
    serviceDescription: 'bench',
    serviceImageUrl: 'http://127.0.0.1/logo.svg',
    version: 'bench',
    payment: {
      network: 'eip155:196',
      asset,
      assetSymbol: 'USDT0',
      assetDecimals: 6,
      assetName: 'USD\u20AE0',
      assetVersion: '1',
      payTo,
    },
    agentRegistrations: [],
  };
}
