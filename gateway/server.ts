// The edge: one HTTP port for REST (route table), POST /graphql (Apollo Gateway), WS /graphql
// (graphql-ws subscriptions fed by Postgres NOTIFY), /openapi.json, health, readiness, metrics and
// the docs. It authenticates, prices, translates and forwards; business rules live in subgraphs.
import { createServer, type Server } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type Response } from 'express';
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { expressMiddleware } from '@as-integrations/express5';
import { GraphQLError } from 'graphql';
import { newCorrelationId } from '../core/canon/ids';
import { AppError } from '../core/errors';
import { signActor } from '../platform/actor';
import {
  DEFAULT_SUBSCRIPTION_LIMITS,
  GRAPHQL_LIMIT_DEFAULTS,
  type GraphQLSettings,
  type SubscriptionLimits,
  type TrustProxy,
} from '../platform/config';
import type { Logger } from '../platform/log';
import { createHttpMetrics } from '../platform/metrics';
import { projectRoot } from '../platform/paths';
import { Authenticator, adminTokenVerifier, type BearerVerifier } from './auth/credentials';
import { sessionExpiresAt, sessionIssuer, sessionVerifier } from './auth/sessions';
import type { GatewayContext } from './graphql/context';
import { formatGatewayError } from './graphql/errors';
import { operationGuardPlugin } from './graphql/operationGuard';
import { paidFieldsOf } from './graphql/paidFields';
import { createFederatedGateway, type SubgraphEndpoint } from './graphql/supergraph';
import { loadPersistedDocuments } from './rest/documents';
import { LOGO_SVG } from './rest/identity';
import { openApiDocument } from './rest/openapi';
import { answerClientErrors, MAX_HEADER_BYTES } from './rest/clientErrors';
import { restErrorHandler, unmatchedRequest } from './rest/errorHandler';
import { checkWireBody, requireHostHeader, requireJsonMediaType } from './rest/requestGuards';
import { createRestRouter } from './rest/router';
import { type RateLimits, rateLimiter } from './rateLimit/limiter';
import { openRateLimitStore, type RateLimitStoreKind } from './rateLimit/store';
import type { RestServiceInfo, RouteDefinition } from './rest/types';
import { type ChannelInboundOptions, createChannelInboundRouter } from './channels/inbound';
import { Fanout } from './subscriptions/fanout';
import { PgNotifyBridge } from './subscriptions/pgBridge';
import type { GatewayExecutor } from './subscriptions/escalations';
import {
  buildSubscriptionSchema,
  eventFromNotification,
  NOTIFY_CHANNELS,
  resyncEvents,
} from './subscriptions/schema';
import { attachSubscriptionServer } from './subscriptions/server';
import { Paywall } from './x402/paywall';
import type { PaymentTerms } from './x402/protocol';
import type { SettlementRail } from './x402/rail';
import { Reconciler } from './x402/reconciler';
import { registerAsset } from '../subgraphs/ledger';
import type { Pool } from 'pg';

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
  /** x402 on priced routes; absent or null: priced routes are served without payment (never in production). */
  readonly x402?: X402GatewayOptions | null;
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

export interface X402GatewayOptions {
  /** The funding chain: the official facilitator settling from the relayer key, plus chain reads. */
  readonly rail: SettlementRail;
  /** The ledger's database: payment records and fee postings. */
  readonly db: Pool;
  /** How long one replica may hold a payment (settling, then running the call) before another may resume it. */
  readonly leaseMs: number;
  /** How often parked payments are checked against the chain; 0 disables the timer. */
  readonly reconcileIntervalMs: number;
}

export interface RunningGateway {
  readonly url: string;
  readonly port: number;
  readonly httpServer: Server;
  readonly fanout: Fanout<unknown>;
  /** The x402 reconciler (null without x402): tests and operators may run a sweep on demand. */
  readonly reconciler: Reconciler | null;
  stop(): Promise<void>;
}

function paymentTermsOf(service: RestServiceInfo): PaymentTerms {
  const { payment } = service;
  if (!payment.asset || !payment.payTo)
    throw new Error('x402 needs the payment asset and the fee receiver (payTo) address');
  if (!/^eip155:[0-9]+$/.test(payment.network))
    throw new Error(`x402 network ${payment.network} is not eip155:<chainId>`);
  return {
    network: payment.network as PaymentTerms['network'],
    asset: payment.asset as PaymentTerms['asset'],
    assetName: payment.assetName,
    assetVersion: payment.assetVersion,
    payTo: payment.payTo as PaymentTerms['payTo'],
  };
}

function graphQLAuthError(error: AppError): GraphQLError {
  return new GraphQLError(error.message, {
    extensions: {
      code: error.code,
      status: error.status,
      retryable: error.retryable,
      http: { status: error.status },
    },
  });
}

const DOC_FILE = /^[a-z0-9-]+\.md$/;

export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const { log } = options;
  const now = options.now ?? (() => new Date());
  const authenticator = new Authenticator([
    adminTokenVerifier(options.adminTokenHashes),
    sessionVerifier(options.sessionSecret, now),
    ...(options.extraVerifiers ?? []),
  ]);
  const issueSession = sessionIssuer(options.sessionSecret, now);
  const metrics = createHttpMetrics();
  const documents = loadPersistedDocuments();
  const docsBaseUrl = options.service.docsBaseUrl;

  const contextFor = (authorization: string | undefined, correlationId: string): GatewayContext => {
    const actor = authenticator.authenticate(authorization);
    return {
      actor,
      signedActor: signActor(actor, options.actorSecret, now().getTime()),
      correlationId,
    };
  };

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', options.trustProxy ?? false);
  const httpServer = createServer(
    { maxHeaderSize: MAX_HEADER_BYTES, requireHostHeader: false },
    app,
  );
  answerClientErrors(httpServer, { docsBaseUrl, log });
  httpServer.keepAliveTimeout = 65_000;
  httpServer.headersTimeout = 66_000;
  httpServer.requestTimeout = 120_000;

  const federated = createFederatedGateway({
    supergraphSdl: options.supergraphSdl,
    subgraphs: options.subgraphs,
    log,
  });
  const graphql = { ...GRAPHQL_LIMIT_DEFAULTS, ...options.graphql };
  const plugins: ApolloServerPlugin<GatewayContext>[] = [
    ApolloServerPluginDrainHttpServer({ httpServer }),
    operationGuardPlugin({ limits: graphql, paidFields: paidFieldsOf(options.routes, documents) }),
  ];
  const apollo = new ApolloServer<GatewayContext>({
    gateway: federated.gateway,
    introspection: graphql.introspection,
    includeStacktraceInErrorResponses: false,
    // The CLI owns the process's signals and stops the gateway in order; Apollo must not re-raise them.
    stopOnTerminationSignals: false,
    // Bounds parsing and graphql-js validation before any of our checks can run.
    parseOptions: { maxTokens: graphql.maxTokens },
    formatError: (formatted, error) =>
      formatGatewayError(formatted, error, { hideSchemaDetails: !graphql.introspection }),
    plugins,
    logger: log,
  });
  await apollo.start();

  // Runs an operation on this gateway as `actor` (freshly signed): subscriptions read current state with it.
  const executeAs: GatewayExecutor = async (actor, query, variables) => {
    const contextValue: GatewayContext = {
      actor,
      signedActor: signActor(actor, options.actorSecret, now().getTime()),
      correlationId: newCorrelationId(),
    };
    const response = await apollo.executeOperation({ query, variables }, { contextValue });
    if (response.body.kind !== 'single')
      throw new AppError('INTERNAL_ERROR', 'Incremental delivery is not used here.');
    return {
      data: response.body.singleResult.data as Record<string, unknown> | null | undefined,
      errors: response.body.singleResult.errors,
    };
  };

  // Subscriptions: LISTEN → fan-out → graphql-ws.
  const fanout = new Fanout<unknown>();
  let bridge: PgNotifyBridge | null = null;
  if (options.listenDatabaseUrl) {
    bridge = new PgNotifyBridge({
      connectionString: options.listenDatabaseUrl,
      channels: NOTIFY_CHANNELS,
      onNotification: (channel, payload) => {
        const event = eventFromNotification(channel, payload);
        if (event) fanout.publish(event.topic, event.event);
      },
      onResync: () => {
        for (const event of resyncEvents(now())) fanout.publish(event.topic, event.event);
      },
      log,
    });
    await bridge.start();
  }
  let reconciler: Reconciler | null = null;
  let paywall: Paywall | null = null;
  if (options.x402) {
    const { rail, db, leaseMs, reconcileIntervalMs } = options.x402;
    const terms = paymentTermsOf(options.service);
    // Fees are booked in the funding asset; the ledger must know it before the first payment.
    await registerAsset(db, {
      chain: terms.network,
      token: terms.asset.toLowerCase(),
      symbol: options.service.payment.assetSymbol,
      decimals: options.service.payment.assetDecimals,
    });
    reconciler = new Reconciler({ rail, db, log });
    paywall = new Paywall({ terms, rail, db, reconciler, log, leaseMs });
    if (reconcileIntervalMs > 0) reconciler.start(reconcileIntervalMs);
  }

  const rateLimitStore = openRateLimitStore(
    options.rateLimit.store,
    options.rateLimit.databaseUrl,
    (error) => log.error({ err: error }, 'rate-limit store error'),
  );

  const subscriptionLimits = options.subscriptions ?? DEFAULT_SUBSCRIPTION_LIMITS;
  const subscriptions = attachSubscriptionServer({
    httpServer,
    path: '/graphql',
    schema: buildSubscriptionSchema(fanout, executeAs, subscriptionLimits),
    authenticator,
    sessionExpiresAt,
    limits: subscriptionLimits,
    now,
    log,
  });

  // Every request: a correlation id, one access-log line, metrics.
  app.use((req: Request, res: Response, next: NextFunction) => {
    const correlationId = newCorrelationId();
    res.locals.correlationId = correlationId;
    res.setHeader('x-correlation-id', correlationId);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route =
        (req.route as { path?: string } | undefined)?.path ??
        (req.path === '/graphql' ? '/graphql' : 'unmatched');
      metrics.requests.inc({ method: req.method, route, status: String(res.statusCode) });
      metrics.durationSeconds.observe({ method: req.method, route }, seconds);
      log.info(
        {
          correlationId,
          method: req.method,
          path: req.path,
          status: res.statusCode,
          ms: Math.round(seconds * 1000),
        },
        'request',
      );
    });
    next();
  });
  app.use(requireHostHeader);

  app.get('/healthz', (_req, res) => {
    res.json({ ok: true });
  });
  app.get('/readyz', async (_req, res) => {
    const checks: Record<string, string> = {};
    let ready = true;
    try {
      await options.readinessCheck?.();
      checks.database = 'ok';
    } catch (error) {
      ready = false;
      checks.database = `failing: ${(error as Error).message}`;
    }
    if (bridge) {
      checks.notifications = bridge.connected ? 'ok' : 'reconnecting';
      ready &&= bridge.connected;
    }
    res.status(ready ? 200 : 503).json({ ready, checks });
  });
  app.get('/metrics', async (_req, res) => {
    res.setHeader('content-type', metrics.registry.contentType);
    res.send(await metrics.registry.metrics());
  });

  // Channel callbacks verify the platform's secret or signature over the raw bytes (before any
  // parser) and come from the platforms' few addresses: they are not charged to per-IP buckets.
  app.use(
    createChannelInboundRouter({
      options: options.channelInbound ?? {},
      documents,
      execute: executeAs,
      now,
      log,
    }),
  );
  // Everything below (and above: health, readiness and metrics are not limited) pays its bucket first.
  app.use(
    rateLimiter({
      store: rateLimitStore,
      limits: options.rateLimit.limits,
      routes: options.routes,
      payments: paywall !== null,
      log,
    }),
  );
  app.get('/openapi.json', (_req, res) => {
    res.json(openApiDocument(options.service, options.routes));
  });
  app.get('/logo.svg', (_req, res) => {
    res.type('image/svg+xml').send(LOGO_SVG);
  });
  app.get('/docs/:file', (req, res, next) => {
    const file = String(req.params.file);
    const full = path.join(projectRoot(), 'docs', file);
    if (!DOC_FILE.test(file) || !existsSync(full)) {
      next(new AppError('ROUTE_NOT_FOUND', `No document ${file}.`));
      return;
    }
    res.type('text/markdown; charset=utf-8').send(readFileSync(full, 'utf8'));
  });

  app.use(
    '/graphql',
    express.json({ limit: options.bodyLimitBytes }),
    expressMiddleware(apollo, {
      context: async ({ req, res }) => {
        try {
          return contextFor(req.headers.authorization, String(res.locals.correlationId));
        } catch (error) {
          if (error instanceof AppError) throw graphQLAuthError(error);
          throw error;
        }
      },
    }),
  );

  app.use(
    requireJsonMediaType,
    express.json({ limit: options.bodyLimitBytes, type: () => true }),
    checkWireBody,
  );
  app.use(
    createRestRouter({
      routes: options.routes,
      service: options.service,
      documents,
      contextFor: (req) =>
        contextFor(
          req.headers.authorization,
          String(req.res?.locals.correlationId ?? newCorrelationId()),
        ),
      paidContext: (context, paidRoute) => ({
        ...context,
        paidRoute,
        signedActor: signActor(context.actor, options.actorSecret, now().getTime(), paidRoute),
      }),
      consumerAuthRequired: options.consumerAuthRequired ?? true,
      edge: { issueSession },
      paywall,
      now,
      async execute(query, operationName, variables, contextValue) {
        const response = await apollo.executeOperation(
          { query, operationName, variables },
          { contextValue },
        );
        if (response.body.kind !== 'single')
          throw new AppError('INTERNAL_ERROR', 'Incremental delivery is not used by REST routes.');
        return {
          data: response.body.singleResult.data as Record<string, unknown> | null | undefined,
          errors: response.body.singleResult.errors,
        };
      },
    }),
  );

  app.use(unmatchedRequest(options.routes));
  app.use(restErrorHandler({ log, bodyLimitBytes: options.bodyLimitBytes, docsBaseUrl }));

  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(options.port, options.host, () => {
      httpServer.off('error', reject);
      resolve();
    });
  });
  const port = (httpServer.address() as AddressInfo).port;
  const url = `http://${options.host}:${port}`;

  let stopped = false;
  return {
    url,
    port,
    httpServer,
    fanout,
    reconciler,
    async stop() {
      if (stopped) return;
      stopped = true;
      await reconciler?.stop();
      await subscriptions.close();
      await bridge?.stop();
      await apollo.stop();
      federated.close();
      if (httpServer.listening)
        await new Promise<void>((resolve) => httpServer.close(() => resolve()));
      await rateLimitStore.close();
    },
  };
}
