// What every request benchmark needs around the service: a scratch database on the server named by
// DATABASE_URL (migrated, dropped afterwards; the same helper the tests use), and the service
// description a benchmark stack runs with.
import { createHash, randomBytes } from 'node:crypto';
import type { Address } from 'viem';
import { startAllInOne, type RunningStack } from '../cli/stack';
import { uniformLimits } from '../gateway/rateLimit/limiter';
import type { RestServiceInfo } from '../gateway/rest/types';
import { DEFAULT_SUBSCRIPTION_LIMITS } from '../platform/config';
import type { createTestDatabase } from '../platform/db/testDb';
import { silentLogger } from '../platform/log';

export { createTestDatabase as createScratchDatabase } from '../platform/db/testDb';

/**
 * The stack as deployed, all in one process: subgraphs in-process, one LISTEN connection,
 * introspection off, the production websocket limits and the shared rate-limit store with limits
 * no bench reaches (what is measured is the service, not the limiter).
 */
export async function startDeployedStack(
  database: Awaited<ReturnType<typeof createTestDatabase>>,
  adminToken: string,
): Promise<RunningStack> {
  return startAllInOne({
    host: '127.0.0.1',
    port: 0,
    db: database.pool,
    databaseUrl: database.url,
    transport: 'in-process',
    subgraphPortBase: 0,
    actorSecret: randomBytes(32),
    adminTokenHashes: [createHash('sha256').update(adminToken).digest()],
    sessionSecret: randomBytes(32),
    listenDatabaseUrl: database.url,
    readinessCheck: async () => {
      await database.pool.query('SELECT 1');
    },
    graphql: { maxDepth: 10, maxCost: 5000, introspection: false },
    subscriptions: DEFAULT_SUBSCRIPTION_LIMITS,
    bodyLimitBytes: 65_536,
    rateLimit: { limits: uniformLimits(), store: 'postgres', databaseUrl: database.url },
    service: benchServiceInfo(),
    log: silentLogger,
    x402: null,
  });
}

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
