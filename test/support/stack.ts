// End-to-end tests start the real service in-process: a fresh database on the test server, every
// subgraph, and the gateway on a free loopback port — the same assembly `spend-control start` runs.
import { createHash, randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '../../platform/db/testDb';
import { type Logger, silentLogger } from '../../platform/log';
import { startAllInOne, type AllInOneOptions, type RunningStack } from '../../cli/stack';
import { openSubgraphDataSource } from '../../subgraphs/registry';
import type { RestServiceInfo } from '../../gateway/rest/types';
import type { BuilderServices, SubgraphChains } from '../../subgraphs/kit';
import type { RdapClient } from '../../platform/rdap';
import type { DevnetChainInfo, DevnetChains } from '../../devnet/chains';
import { createSettlementRail } from '../../gateway/x402/rail';
import { type RateLimits, uniformLimits } from '../../gateway/rateLimit/limiter';
import type { RateLimitStoreKind } from '../../gateway/rateLimit/store';
import type { TrustProxy } from '../../platform/config';
import { DEFAULT_SUBSCRIPTION_LIMITS, type SubscriptionLimits } from '../../platform/config';

export interface TestStack {
  readonly url: string;
  readonly wsUrl: string;
  readonly adminToken: string;
  readonly db: TestDatabase;
  readonly stack: RunningStack;
  stop(): Promise<void>;
}

export function testServiceInfo(publicUrl = 'http://127.0.0.1'): RestServiceInfo {
  return {
    publicUrl,
    docsBaseUrl: `${publicUrl}/docs`,
    serviceName: 'Agent Spend-Control Service (test)',
    serviceDescription: 'end-to-end test instance',
    serviceImageUrl: `${publicUrl}/logo.png`,
    version: '0.0.0-test',
    payment: {
      network: 'eip155:196',
      asset: null,
      assetSymbol: 'USDT0',
      assetDecimals: 6,
      assetName: 'USD\u20AE0',
      assetVersion: '1',
      payTo: null,
    },
    agentRegistrations: [],
  };
}

export interface TestStackOptions {
  /** The service's logger; default silent. */
  readonly log?: Logger;
  /** The superuser URL of the server the test database is made on; default DATABASE_URL's. */
  readonly databaseServer?: string;
  readonly transport?: 'in-process' | 'http';
  /** Preflights decided on the intent subgraph's decision thread, as `spend-control start` runs them; default: in-thread. */
  readonly decisionThread?: boolean;
  readonly bodyLimitBytes?: number;
  readonly maxDepth?: number;
  readonly maxCost?: number;
  /** GRAPHQL_INTROSPECTION; default true (production forces it off). */
  readonly introspection?: boolean;
  /** One clock for the gateway and every subgraph (session and nonce expiry); default: real time. */
  readonly now?: () => Date;
  /** The funding chain and its PolicyRegistry (e.g. from startDevnetChains); default: none. */
  readonly chains?: SubgraphChains;
  /** The consumer purchase path (rails and provider registry, e.g. devnetConsumerRails); default: none. */
  readonly consumer?: AllInOneOptions['consumer'];
  /** The RDAP client of domain checks (e.g. on a devnet registry); default: the execution worker's, or none. */
  readonly rdap?: RdapClient;
  /** The builder's name model and default TLDs; default: no model, com, io, ai. */
  readonly builder?: BuilderServices;
  /** CONSUMER_AUTH_REQUIRED; default true. */
  readonly consumerAuthRequired?: boolean;
  /** Receipt anchoring: a worker in the stack, or why it is off; default: neither (receipts PENDING). */
  readonly anchoring?: AllInOneOptions['anchoring'];
  /** The escalation worker in the stack (tests usually run its rounds with `stack.worker.runOnce()`). */
  readonly escalationWorker?: AllInOneOptions['escalationWorker'];
  /** Websocket limits (sockets per session, subscriptions per socket, send queue, state reads); default: the production defaults. */
  readonly subscriptions?: Partial<SubscriptionLimits>;
  /** Verification secrets of the inbound channel routes (Telegram, Slack); absent: those routes refuse. */
  readonly channelInbound?: AllInOneOptions['channelInbound'];
  /**
   * Rate limits; default: every bucket as large as the settings allow, so suites that fire many
   * requests from 127.0.0.1 are never limited (a rate-limit test passes the real defaults).
   */
  readonly rateLimits?: RateLimits;
  /** Where the buckets live; default postgres (gateway.rate_buckets in the test database). */
  readonly rateLimitStore?: RateLimitStoreKind;
  /** TRUST_PROXY; default false (the socket address is the client). */
  readonly trustProxy?: TrustProxy;
  /** Take x402 payment on priced routes, settling on this devnet's funding chain; default: none (served free). */
  readonly x402?: {
    readonly devnet: DevnetChains;
    /** How long settlement waits for a receipt before the payment counts as ambiguous; default 10 s. */
    readonly settleTimeoutMs?: number;
    readonly leaseMs?: number;
    /** The RPC the service settles through (e.g. a proxy in front of the funding chain); default: the chain's. */
    readonly rpcUrl?: string;
    /** X402_RECONCILE_INTERVAL_MS; default 0 (parked payments resolve when presented again). */
    readonly reconcileIntervalMs?: number;
  };
}

/**
 * x402 group settlement in tests: on (the devnet's GroupSettlement contract) unless
 * X402_GROUP_SETTLEMENT=false, so every x402 test runs on the path production takes.
 */
function testGroupSettlement(funding: DevnetChainInfo) {
  if (process.env.X402_GROUP_SETTLEMENT === 'false' || !funding.groupSettlement) return {};
  return { group: { contract: funding.groupSettlement, maxSize: 64, maxWaitMs: 2 } };
}

export async function startTestStack(options: TestStackOptions = {}): Promise<TestStack> {
  const db = await createTestDatabase({ server: options.databaseServer });
  const adminToken = randomBytes(32).toString('base64url');
  const paid = options.x402;
  const funding = paid?.devnet.info.chains.funding;
  const settleTimeoutMs = paid?.settleTimeoutMs ?? 10_000;
  let dataSource: DataSource | null = null;
  try {
    dataSource = await openSubgraphDataSource(db.url, 'spend-control-test');
    const stack = await startAllInOne({
      host: '127.0.0.1',
      port: 0,
      db: db.pool,
      dataSource,
      databaseUrl: db.url,
      decisionThread: options.decisionThread ?? false,
      transport: options.transport ?? 'in-process',
      subgraphPortBase: 0,
      actorSecret: randomBytes(32),
      adminTokenHashes: [createHash('sha256').update(adminToken).digest()],
      sessionSecret: randomBytes(32),
      consumerAuthRequired: options.consumerAuthRequired,
      chains: options.chains,
      consumer: options.consumer,
      rdap: options.rdap,
      builder: options.builder,
      anchoring: options.anchoring,
      now: options.now,
      listenDatabaseUrl: db.url,
      escalationWorker: options.escalationWorker,
      channelInbound: options.channelInbound,
      readinessCheck: async () => {
        await db.pool.query('SELECT 1');
      },
      graphql: {
        maxDepth: options.maxDepth ?? 10,
        maxCost: options.maxCost ?? 5000,
        introspection: options.introspection ?? true,
      },
      subscriptions: { ...DEFAULT_SUBSCRIPTION_LIMITS, ...options.subscriptions },
      bodyLimitBytes: options.bodyLimitBytes ?? 65_536,
      rateLimit: {
        limits: options.rateLimits ?? uniformLimits(),
        store: options.rateLimitStore ?? 'postgres',
        databaseUrl: db.url,
      },
      trustProxy: options.trustProxy,
      service: paid
        ? {
            ...testServiceInfo(),
            payment: {
              ...testServiceInfo().payment,
              asset: funding!.token.address,
              payTo: paid.devnet.info.addresses.feeReceiver,
            },
          }
        : testServiceInfo(),
      log: options.log ?? silentLogger,
      x402: paid
        ? {
            rail: createSettlementRail({
              chainId: funding!.chainId,
              rpcUrl: paid.rpcUrl ?? funding!.rpcUrl,
              token: funding!.token.address,
              relayerPrivateKey: paid.devnet.keys.relayer.exportPrivateKey(),
              confirmationTimeoutMs: settleTimeoutMs,
              pollingIntervalMs: 20,
              ...testGroupSettlement(funding!),
            }),
            db: db.pool,
            leaseMs: paid.leaseMs ?? settleTimeoutMs + 20_000,
            reconcileIntervalMs: paid.reconcileIntervalMs ?? 0,
            receiptSigner: paid.devnet.keys.feeReceiver.typedDataSigner(),
          }
        : null,
    });
    const url = stack.gateway.url;
    return {
      url,
      wsUrl: `${url.replace(/^http/, 'ws')}/graphql`,
      adminToken,
      db,
      stack,
      async stop() {
        await stack.stop();
        await dataSource?.destroy();
        await db.drop();
      },
    };
  } catch (error) {
    await dataSource?.destroy();
    await db.drop();
    throw error;
  }
}

export async function graphql(
  url: string,
  query: string,
  variables: Record<string, unknown> = {},
  token?: string,
): Promise<{
  status: number;
  body: { data?: any; errors?: Array<{ message: string; extensions?: Record<string, unknown> }> };
}> {
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify({ query, variables }),
  });
  return { status: response.status, body: (await response.json()) as never };
}

/** POST a JSON body to a REST path of the stack, as an agent or operator would; the status and parsed body. */
export async function postJson(
  url: string,
  path: string,
  body: unknown,
  token?: string,
): Promise<{ status: number; body: any }> {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}
