// The edge: one HTTP port for REST (route table), POST /graphql (Apollo Gateway), WS /graphql
// (graphql-ws subscriptions fed by Postgres NOTIFY), /openapi.json, health, readiness, metrics and
// the docs. It authenticates, prices, translates and forwards; business rules live in subgraphs.
// startGateway assembles the steps of gateway/assembly/ in the order requests meet them.
import type { Server } from 'node:http';
import {
  DEFAULT_SUBSCRIPTION_LIMITS,
  type GraphQLSettings,
  type SubscriptionLimits,
  type TrustProxy,
} from '../platform/config';
import type { Logger } from '../platform/log';
import { createHttpMetrics, type HttpMetrics } from '../platform/metrics';
import { actorContexts, gatewayAuthenticator } from './assembly/actors';
import type { Authenticator } from './auth/credentials';
import { executorAs, mountGraphQL, startGraphQL } from './assembly/graphql';
import {
  createHttpSurface,
  observeRequests,
  servePublicDocuments,
  serveProbes,
} from './assembly/http';
import { serveDashboard } from './assembly/dashboard';
import { listen, stopInOrder } from './assembly/lifecycle';
import { drainer } from '../platform/probes';
import { mountRest, type RestMountDeps } from './assembly/rest';
import { IdempotencyKeys } from './rest/idempotency';
import { serveSubscriptions, startNotifyBridge } from './assembly/subscriptions';
import { startX402, type X402GatewayOptions } from './assembly/x402';
import type { BearerVerifier } from './auth/credentials';
import { sessionIssuer } from './auth/sessions';
import { type ChannelInboundOptions, createChannelInboundRouter } from './channels/inbound';
import type { SubgraphEndpoint } from './graphql/supergraph';
import { loadPersistedDocuments } from './rest/documents';
import { requireHostHeader } from './rest/requestGuards';
import type { RestServiceInfo, RouteDefinition } from './rest/types';
import {
  outboundTokenTaker,
  bearerPrincipal,
  type RateLimits,
  rateLimiter,
} from './rateLimit/limiter';
import {
  openRateLimitStore,
  type RateLimitStore,
  type RateLimitStoreKind,
} from './rateLimit/store';
import { Fanout } from './subscriptions/fanout';
import { SubscriptionFeeds } from './subscriptions/schema';
import type { Reconciler } from './x402/parkedPayments';

export type { X402GatewayOptions } from './assembly/x402';

export interface GatewayOptions {
  readonly host: string;
  readonly port: number;
  readonly supergraphSdl: string;
  readonly subgraphs: Readonly<Record<string, SubgraphEndpoint>>;
  readonly actorSecret: Buffer;
  readonly adminTokenHashes: readonly Buffer[];
  /** HMAC key of owner and consumer session bearers (SESSION_SECRET, ≥ 32 bytes). */
  readonly sessionSecret: Buffer;
  /** CONSUMER_AUTH_REQUIRED; default true. */
  readonly consumerAuthRequired?: boolean;
  readonly extraVerifiers?: readonly BearerVerifier[];
  /** Direct (non-pooled) connection string for the LISTEN bridge; null disables subscriptions' feed. */
  readonly listenDatabaseUrl: string | null;
  readonly readinessCheck?: () => Promise<void>;
  /** Limits not given take GRAPHQL_LIMIT_DEFAULTS. */
  readonly graphql: Pick<GraphQLSettings, 'maxDepth' | 'maxCost' | 'introspection'> &
    Partial<GraphQLSettings>;
  readonly bodyLimitBytes: number;
  /** Token buckets at the edge; see docs/operations.md#rate-limits. */
  readonly rateLimit: GatewayRateLimitOptions;
  /** TRUST_PROXY: which proxies' X-Forwarded-For names the client; absent or false: the socket address. */
  readonly trustProxy?: TrustProxy;
  readonly service: RestServiceInfo;
  readonly routes: readonly RouteDefinition[];
  readonly log: Logger;
  readonly now?: () => Date;
  /** Verification secrets of the inbound channel routes; absent: /channels/telegram and /channels/slack answer CHANNEL_NOT_CONFIGURED. */
  readonly channelInbound?: ChannelInboundOptions;
  /** The process's metrics registry (business series registered by the composition root); default: HTTP and Node figures only. */
  readonly metrics?: HttpMetrics;
  /** On stop: how long /readyz answers 503 while requests are still served before closing; default 0. */
  readonly drainDelayMs?: number;
  /** x402 on priced routes; absent or null: priced routes are served without payment (never in production). */
  readonly x402?: X402GatewayOptions | null;
  /** The database of gateway.idempotency_keys (Idempotency-Key on POSTs); default the rate-limit store's; null: keys not honoured. */
  readonly idempotencyDatabaseUrl?: string | null;
  /** Websocket subscriptions per session and socket, slow-consumer bound, state reads; default DEFAULT_SUBSCRIPTION_LIMITS. */
  readonly subscriptions?: SubscriptionLimits;
}

export interface GatewayRateLimitOptions {
  readonly limits: RateLimits;
  /** postgres: gateway.rate_buckets, shared by every replica (needs databaseUrl); memory: this process only. */
  readonly store: RateLimitStoreKind;
  /** The database of the PostgreSQL store, opened on a small pool of its own. */
  readonly databaseUrl: string | null;
}

export interface RunningGateway {
  readonly url: string;
  readonly port: number;
  readonly httpServer: Server;
  readonly fanout: Fanout<unknown>;
  /** The x402 reconciler (null without x402): tests and operators may run a sweep on demand. */
  readonly reconciler: Reconciler | null;
  /** /readyz answers 503 from now on; resolves after the drain delay, still serving. */
  drain(): Promise<void>;
  /** Drains (once), then stops every part in order. */
  stop(): Promise<void>;
}

/** The rate-limit step: a paid call's payer, a bearer's principal, a 402's challenge bucket, or the IP. */
function edgeLimiter(
  options: GatewayOptions,
  store: RateLimitStore,
  payments: boolean,
  authenticator: Authenticator,
  routes: readonly RouteDefinition[],
) {
  const principalOf = bearerPrincipal(authenticator);
  const { limits } = options.rateLimit;
  return rateLimiter({ store, limits, routes, payments, log: options.log, principalOf });
}

/** The edge's database-backed stores: rate-limit buckets and Idempotency-Keys (null: none kept). */
function openEdgeStores(options: GatewayOptions, now: () => Date, log: GatewayOptions['log']) {
  const rateLimitStore = openRateLimitStore(
    options.rateLimit.store,
    options.rateLimit.databaseUrl,
    (error) => log.error({ err: error }, 'rate-limit store error'),
  );
  const idempotencyUrl = options.idempotencyDatabaseUrl ?? options.rateLimit.databaseUrl;
  const idempotency =
    idempotencyUrl === null ? null : IdempotencyKeys.open(idempotencyUrl, log, now);
  return { rateLimitStore, idempotency };
}

/** What the REST routes take from the gateway's options alone. */
function restOptionsOf(
  options: GatewayOptions,
  now: () => Date,
): Pick<
  RestMountDeps,
  'routes' | 'service' | 'now' | 'log' | 'consumerAuthRequired' | 'issueSession' | 'bodyLimitBytes'
> {
  return {
    routes: options.routes,
    service: options.service,
    now,
    log: options.log,
    consumerAuthRequired: options.consumerAuthRequired ?? true,
    issueSession: sessionIssuer(options.sessionSecret, now),
    bodyLimitBytes: options.bodyLimitBytes,
  };
}

export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const { log, service, routes } = options;
  const now = options.now ?? (() => new Date());
  const authenticator = gatewayAuthenticator(options, now);
  const metrics = options.metrics ?? createHttpMetrics();
  const documents = loadPersistedDocuments();
  const contexts = actorContexts(authenticator, options.actorSecret, now);
  const { app, httpServer } = createHttpSurface({
    trustProxy: options.trustProxy,
    docsBaseUrl: service.docsBaseUrl,
    log,
  });
  const graphql = await startGraphQL(options, httpServer, documents);
  const executeAs = executorAs(graphql, contexts);
  const fanout = new Fanout<unknown>();
  const limits = options.subscriptions ?? DEFAULT_SUBSCRIPTION_LIMITS;
  const feeds = new SubscriptionFeeds(fanout, executeAs, limits);
  const bridge = await startNotifyBridge(options.listenDatabaseUrl, feeds, now, log);
  const x402 = await startX402(options.x402 ?? null, service, routes, log, metrics.business);
  const { rateLimitStore, idempotency } = openEdgeStores(options, now, log);
  const subscriptions = serveSubscriptions({ httpServer, feeds, authenticator, limits, now, log });

  observeRequests(app, metrics, log);
  app.use(requireHostHeader);
  const { drain, draining } = drainer(options.drainDelayMs ?? 0);
  const { readinessCheck } = options;
  serveProbes(app, { metrics, readinessCheck, notifications: bridge, draining });
  // Channel callbacks verify the platform's secret or signature over the raw bytes (before any
  // parser) and come from the platforms' few addresses: they are not charged to per-IP buckets.
  const channelOptions = options.channelInbound ?? {};
  const channelDeps = { options: channelOptions, documents, execute: executeAs, now, log };
  app.use(createChannelInboundRouter(channelDeps));
  // Everything below (and above: health, readiness and metrics are not limited) pays its bucket first.
  app.use(edgeLimiter(options, rateLimitStore, x402.paywall !== null, authenticator, routes));
  servePublicDocuments(app, service, routes);
  serveDashboard(app);
  mountGraphQL(
    app,
    graphql,
    contexts,
    options.bodyLimitBytes,
    outboundTokenTaker(rateLimitStore, options.rateLimit.limits),
  );
  mountRest(app, {
    ...restOptionsOf(options, now),
    documents,
    graphql,
    contexts,
    idempotency,
    paywall: x402.paywall,
    extensions: x402.extensions,
  });

  const { url, port } = await listen(httpServer, options.host, options.port);
  const stopParts = stopInOrder({
    reconciler: x402.reconciler,
    subscriptions,
    bridge,
    graphql,
    httpServer,
    rateLimitStore,
    idempotency,
  });
  const stop = () => drain().then(stopParts);
  return { url, port, httpServer, fanout, reconciler: x402.reconciler, drain, stop };
}
