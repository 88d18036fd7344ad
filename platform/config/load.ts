// loadConfig: reads the environment once, validates all of it, and fails fast with a ConfigError
// listing every problem by variable name (never by secret value). Defaults serve the embedded
// development mode; production demands explicit values (production.ts). docs/operations.md lists them.
import path from 'node:path';
import { SUBGRAPH_NAMES, type SubgraphName } from '../db/migrate';
import { projectRoot } from '../paths';
import { readBuilder } from './builder';
import { readChains } from './chains';
import { readRateLimits, readSubscriptionLimits, readTrustProxy } from './edge';
import { EnvReader, HTTP, POSTGRES, type Env } from './envReader';
import { readEscalations } from './escalations';
import { checkProduction } from './production';
import { readRdap } from './rdap';
import { sealConfig } from './redaction';
import { readAddresses, readSecrets } from './secrets';
import {
  ConfigError,
  DEFAULT_SERVICE_DESCRIPTION,
  DEFAULT_SERVICE_NAME,
  GRAPHQL_LIMIT_DEFAULTS,
  LOG_LEVELS,
  MAX_BODY_LIMIT_BYTES,
  SUBGRAPH_COUNT,
  type Config,
  type ConfigFields,
  type GraphQLSettings,
  type LogLevel,
  type NodeEnv,
} from './sections';

/** Parses and validates `env`. Pure apart from locating the project root for DATA_DIR's default. */
export function loadConfig(env: Env = process.env): Config {
  const read = new EnvReader(env);
  const base = readProcess(read);
  const { isProduction, port, publicUrl } = base;
  const chains = readChains(read);
  const secrets = readSecrets(read);
  const { feeReceiverAddress, treasuryAddress } = readAddresses(read, secrets, chains.devnet);
  const subgraphs = readSubgraphs(read, port);
  const graphql = readGraphql(read, isProduction);
  const http = {
    bodyLimitBytes: read.integer('BODY_LIMIT_BYTES', 65536, 1, MAX_BODY_LIMIT_BYTES),
    consumerAuthRequired: read.boolean('CONSUMER_AUTH_REQUIRED', true),
    trustProxy: readTrustProxy(read),
    drainDelayMs: read.integer('DRAIN_DELAY_MS', isProduction ? 5000 : 0, 0, 120_000),
  };
  const rateLimit = readRateLimits(read);
  const subscriptions = readSubscriptionLimits(read);
  const x402 = readX402(read);
  const escalations = readEscalations(read, publicUrl);
  const providerUrls = { domains: read.url('PROVIDER_DOMAINS_URL', HTTP) };
  const rdap = readRdap(read, chains.devnet, isProduction);
  const builder = readBuilder(read);
  const identity = readIdentity(read, publicUrl);
  const anchoring = {
    address: read.address('RECEIPT_ANCHOR_ADDRESS'),
    batchSize: read.integer('ANCHOR_BATCH_SIZE', 100, 1, 100_000),
    batchSeconds: read.integer('ANCHOR_BATCH_SECONDS', 2, 0, 86_400),
    confirmations: read.integer('ANCHOR_CONFIRMATIONS', 1, 1, 64),
    recheckDepth: read.integer('ANCHOR_RECHECK_DEPTH', 64, 1, 10_000),
  };
  if (anchoring.recheckDepth < anchoring.confirmations)
    read.problem('ANCHOR_RECHECK_DEPTH', 'must be at least ANCHOR_CONFIRMATIONS');
  const chainReads = {
    logPageBlocks: read.integer('CHAIN_LOG_PAGE_BLOCKS', 2_000, 1, 1_000_000),
    reportRpcCalls: read.integer('RECONCILE_MAX_RPC_CALLS', 1_000, 10, 1_000_000),
  };

  if (isProduction) {
    checkProduction(read, {
      databaseUrl: base.databaseUrl,
      migrationDatabaseUrl: base.migrationDatabaseUrl,
      ...chains,
      feeReceiverAddress,
      secrets,
      consumerAuthRequired: http.consumerAuthRequired,
    });
  }
  if (read.problems.length > 0) throw new ConfigError(read.problems);

  return sealConfig({
    ...base,
    ...chains,
    feeReceiverAddress,
    treasuryAddress,
    anchoring,
    chainReads,
    secrets,
    ...subgraphs,
    graphql,
    http,
    rateLimit,
    subscriptions,
    x402,
    escalations,
    providerUrls,
    rdap,
    builder,
    identity,
  });
}

type ProcessFields = Pick<
  ConfigFields,
  | 'nodeEnv'
  | 'isProduction'
  | 'port'
  | 'host'
  | 'publicUrl'
  | 'dataDir'
  | 'logLevel'
  | 'databaseUrl'
  | 'migrationDatabaseUrl'
  | 'databaseListenUrl'
  | 'decisionThread'
>;

/** Where this process listens, where its data and database are, and how it logs. */
function readProcess(read: EnvReader): ProcessFields {
  const nodeEnv = read.oneOf<NodeEnv>(
    'NODE_ENV',
    ['development', 'test', 'production'],
    'development',
  );
  const port = read.integer('PORT', 4000, 1, 65535);
  const host = read.string('HOST', '127.0.0.1', 255);
  const publicUrl = read.url('PUBLIC_URL', HTTP) ?? `http://127.0.0.1:${port}`;
  const dataDirRaw = read.raw('DATA_DIR');
  const dataDir =
    dataDirRaw === undefined ? path.join(projectRoot(), '.data') : path.resolve(dataDirRaw);
  return {
    nodeEnv,
    isProduction: nodeEnv === 'production',
    port,
    host,
    publicUrl,
    dataDir,
    logLevel: read.oneOf<LogLevel>('LOG_LEVEL', LOG_LEVELS, 'info'),
    databaseUrl: read.url('DATABASE_URL', POSTGRES),
    migrationDatabaseUrl: read.url('MIGRATION_DATABASE_URL', POSTGRES),
    databaseListenUrl: read.url('DATABASE_LISTEN_URL', POSTGRES),
    decisionThread: read.boolean('DECISION_THREAD', false),
  };
}

/** Subgraph URLs (distributed mode), the loopback ports of `--transport http` clear of PORT, and the worker's probe port. */
function readSubgraphs(
  read: EnvReader,
  port: number,
): Pick<ConfigFields, 'subgraphUrls' | 'subgraphPortBase' | 'metricsPort'> {
  const subgraphUrls = Object.fromEntries(
    SUBGRAPH_NAMES.map((name) => [name, read.url(`SUBGRAPH_URL_${name.toUpperCase()}`, HTTP)]),
  ) as Record<SubgraphName, string | null>;
  // 0: the all-in-one's subgraphs each take a free port the system picks (a subgraph role refuses it).
  const subgraphPortBase = read.integer(
    'SUBGRAPH_PORT_BASE',
    4101,
    0,
    65535 - (SUBGRAPH_COUNT - 1),
  );
  const collides = (candidate: number) =>
    subgraphPortBase !== 0 &&
    candidate >= subgraphPortBase &&
    candidate < subgraphPortBase + SUBGRAPH_COUNT;
  if (collides(port)) {
    read.problem(
      'PORT',
      `${port} collides with the subgraph ports ${subgraphPortBase}..${subgraphPortBase + SUBGRAPH_COUNT - 1} (SUBGRAPH_PORT_BASE)`,
    );
  }
  const metricsPort = read.integer('METRICS_PORT', 4100, 0, 65535);
  if (collides(metricsPort)) {
    read.problem(
      'METRICS_PORT',
      `${metricsPort} collides with the subgraph ports ${subgraphPortBase}..${subgraphPortBase + SUBGRAPH_COUNT - 1} (SUBGRAPH_PORT_BASE)`,
    );
  }
  return { subgraphUrls, subgraphPortBase, metricsPort };
}

function readGraphql(read: EnvReader, isProduction: boolean): GraphQLSettings {
  const limits = GRAPHQL_LIMIT_DEFAULTS;
  return {
    maxDepth: read.integer('GRAPHQL_MAX_DEPTH', limits.maxDepth, 1, 100),
    maxCost: read.integer('GRAPHQL_MAX_COST', limits.maxCost, 1, 1_000_000),
    maxTokens: read.integer('GRAPHQL_MAX_TOKENS', limits.maxTokens, 100, 100_000),
    maxFields: read.integer('GRAPHQL_MAX_FIELDS', limits.maxFields, 1, 100_000),
    maxAliases: read.integer('GRAPHQL_MAX_ALIASES', limits.maxAliases, 0, 10_000),
    maxRootFields: read.integer('GRAPHQL_MAX_ROOT_FIELDS', limits.maxRootFields, 1, 1_000),
    // Production never exposes the schema by introspection, whatever the variable says.
    introspection: read.boolean('GRAPHQL_INTROSPECTION', true) && !isProduction,
  };
}

function readX402(read: EnvReader): ConfigFields['x402'] {
  const settleTimeoutMs = read.integer('X402_SETTLE_TIMEOUT_MS', 30_000, 500, 600_000);
  return {
    settleTimeoutMs,
    // Settling, then running the call, must fit in the lease, or a duplicate may resume it early.
    leaseMs: read.integer(
      'X402_LEASE_MS',
      settleTimeoutMs + 30_000,
      settleTimeoutMs + 1_000,
      3_600_000,
    ),
    reconcileIntervalMs: read.integer('X402_RECONCILE_INTERVAL_MS', 15_000, 0, 3_600_000),
    group: {
      contract: read.address('X402_GROUP_SETTLEMENT_ADDRESS'),
      enabled: read.boolean('X402_GROUP_SETTLEMENT', true),
      maxSize: read.integer('X402_GROUP_MAX_SIZE', 64, 1, 512),
      maxWaitMs: read.integer('X402_GROUP_MAX_WAIT_MS', 2, 0, 1_000),
      overlapAfterMs: read.integer('X402_GROUP_OVERLAP_MS', 50, 0, 60_000),
    },
  };
}

function readIdentity(read: EnvReader, publicUrl: string): ConfigFields['identity'] {
  return {
    serviceName: read.string('SERVICE_NAME', DEFAULT_SERVICE_NAME, 100),
    serviceDescription: read.string('SERVICE_DESCRIPTION', DEFAULT_SERVICE_DESCRIPTION, 1000),
    serviceImageUrl: read.url('SERVICE_IMAGE_URL', HTTP) ?? `${publicUrl}/logo.svg`,
    docsBaseUrl: read.url('DOCS_BASE_URL', HTTP) ?? `${publicUrl}/docs`,
  };
}
