// The typed configuration: the Config every process reads, its sections, their defaults and the
// ConfigError that lists every problem by variable name. Types and constants only; reading the
// environment is load.ts's job, redaction redaction.ts's.
import { SUBGRAPH_NAMES, type SubgraphName } from '../db/migrate';

export type NodeEnv = 'development' | 'test' | 'production';
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export type Hex = `0x${string}`;

/** Minimum length of SESSION_SECRET and INTERNAL_ACTOR_SECRET. */
export const MIN_SECRET_BYTES = 32;
export const MAX_BODY_LIMIT_BYTES = 16 * 1024 * 1024;
/** Subgraphs listen on SUBGRAPH_PORT_BASE + index, in SUBGRAPH_NAMES order. */
export const SUBGRAPH_COUNT = SUBGRAPH_NAMES.length;

export const DEFAULT_SERVICE_NAME = 'Agent Spend-Control Service';
export const DEFAULT_SERVICE_DESCRIPTION =
  'Control plane between autonomous AI agents and real money: a deterministic policy engine, ' +
  'x402-paid REST tools and a federated GraphQL API.';

/** The GraphQL endpoint's limits (docs/graphql.md "Limits") and whether it answers introspection. */
export interface GraphQLSettings {
  readonly maxDepth: number;
  readonly maxCost: number;
  /** Lexical tokens per document, enforced while parsing, before graphql-js validation. */
  readonly maxTokens: number;
  /** Fields per operation, every fragment spread expanded. */
  readonly maxFields: number;
  readonly maxAliases: number;
  readonly maxRootFields: number;
  readonly introspection: boolean;
}

export const GRAPHQL_LIMIT_DEFAULTS = Object.freeze({
  maxDepth: 10,
  maxCost: 5000,
  maxTokens: 1000,
  maxFields: 1000,
  maxAliases: 30,
  maxRootFields: 10,
});

export interface ChainConfig {
  readonly chainId: number;
  /** null: the local devnet provides this chain. */
  readonly rpcUrl: string | null;
  /** null: the devnet deploys the token. */
  readonly tokenAddress: Hex | null;
  /** EIP-712 domain of the token. */
  readonly tokenName: string;
  readonly tokenVersion: string;
  /** The token's ticker as the ledger registers the asset (`USDT0`, `USDC`). */
  readonly tokenSymbol: string;
  /** The token's decimals (6 for both stablecoins). */
  readonly tokenDecimals: number;
}

/** Key material and shared secrets. Never log these; Config's toJSON and inspect redact them. */
export interface Secrets {
  readonly treasuryPrivateKey: Hex | null;
  readonly relayerPrivateKey: Hex | null;
  /** ANCHOR_WRITER_PRIVATE_KEY: sends the ReceiptAnchor batches (a writer of RECEIPT_ANCHOR_ADDRESS). */
  readonly anchorWriterPrivateKey: Hex | null;
  /** sha256 of each admin token, 32 bytes each. */
  readonly adminTokenHashes: readonly Buffer[];
  readonly sessionSecret: Buffer | null;
  readonly internalActorSecret: Buffer | null;
  /** DEV_KEY_DENYLIST entries, lowercase 0x-hex keys or addresses. */
  readonly devKeyDenylist: readonly string[];
}

export interface Config {
  readonly nodeEnv: NodeEnv;
  readonly isProduction: boolean;
  readonly port: number;
  readonly host: string;
  /** No trailing slash. */
  readonly publicUrl: string;
  readonly dataDir: string;
  readonly logLevel: LogLevel;
  /** The service role's login (owns nothing); null: start the embedded PostgreSQL in `<dataDir>/pg`. */
  readonly databaseUrl: string | null;
  /** MIGRATION_DATABASE_URL: a login of spend_control_owner, for migrations only; null: DATABASE_URL migrates (not in production). */
  readonly migrationDatabaseUrl: string | null;
  /**
   * DATABASE_LISTEN_URL: a direct (unpooled) login of the service role for LISTEN, which a pooler in
   * transaction mode cannot carry; null: DATABASE_URL listens.
   */
  readonly databaseListenUrl: string | null;
  /** DECISION_THREAD: the intent subgraph decides preflights on a thread of its own (default false). */
  readonly decisionThread: boolean;
  /** True when no RPC URLs are set and the local devnet chains are started. */
  readonly devnet: boolean;
  /**
   * DEVNET_RELAYER_SLOT: which of the devnet's relayer keys this process sends from (0, the
   * default: `relayer`; 1–4: `fleetRelayer1`–`4`), so the processes of a fleet never share one.
   */
  readonly devnetRelayerSlot: number;
  readonly funding: ChainConfig;
  readonly settlement: ChainConfig;
  /** PolicyRegistry on the funding chain; null: none (the devnet deploys its own). */
  readonly policyRegistryAddress: Hex | null;
  readonly feeReceiverAddress: Hex | null;
  /**
   * The treasury (funds consumer purchases on both rails): TREASURY_ADDRESS, or the address of
   * TREASURY_PRIVATE_KEY; null: neither is set (the devnet has its own).
   */
  readonly treasuryAddress: Hex | null;
  /** Receipt anchoring (docs/receipts.md "Anchoring"): where batches go and when they close. */
  readonly anchoring: AnchoringConfig;
  /** Bounds of the service's chain reads (docs/operations.md). */
  readonly chainReads: ChainReadsConfig;
  readonly secrets: Secrets;
  /** null: the subgraph runs in-process (all-in-one mode). */
  readonly subgraphUrls: Readonly<Record<SubgraphName, string | null>>;
  readonly subgraphPortBase: number;
  /** METRICS_PORT: where the worker role (no HTTP server of its own) serves /healthz, /readyz, /metrics. */
  readonly metricsPort: number;
  readonly graphql: GraphQLSettings;
  readonly http: {
    readonly bodyLimitBytes: number;
    readonly consumerAuthRequired: boolean;
    readonly trustProxy: TrustProxy;
    /** SIGTERM: /readyz answers 503 this long while requests are still served, then the server closes. */
    readonly drainDelayMs: number;
  };
  /** Token buckets at the edge (docs/operations.md#rate-limits). */
  readonly rateLimit: RateLimitConfig;
  /** Websocket subscriptions: what one session or socket may hold, and how their reads queue. */
  readonly subscriptions: SubscriptionLimits;
  /** x402 on the paid routes: how long settlement waits for a receipt, leases, reconciliation. */
  readonly x402: {
    readonly settleTimeoutMs: number;
    readonly leaseMs: number;
    readonly reconcileIntervalMs: number;
    /**
     * Group settlement (docs/x402.md#group-settlement): the GroupSettlement contract on the funding
     * chain (null: off, one transaction per payment, unless the devnet deployed one), the most
     * authorizations in one transaction, how long a first arrival waits for company, how long after
     * a group was handed to the node the next may go before the first's receipt.
     */
    readonly group: {
      readonly contract: `0x${string}` | null;
      readonly enabled: boolean;
      readonly maxSize: number;
      readonly maxWaitMs: number;
      readonly overlapAfterMs: number;
    };
  };
  /** Escalation channels and the worker; a channel is null when it is not configured. */
  readonly escalations: EscalationConfig;
  /** Where each merchant the service buys from answers (PROVIDER_<NAME>_URL); null: none configured (the embedded devnet starts its own). */
  readonly providerUrls: { readonly domains: string | null };
  /** RDAP lookups: delivery verification of domains.check, the builder's domain checks. */
  readonly rdap: RdapConfig;
  /** The launch pack: its optional name model and the TLDs checked by default. */
  readonly builder: BuilderConfig;
  readonly identity: {
    readonly serviceName: string;
    readonly serviceDescription: string;
    readonly serviceImageUrl: string;
    /** No trailing slash. */
    readonly docsBaseUrl: string;
  };
  /** The same configuration with secrets, keys and URL credentials replaced by markers. */
  toJSON(): Record<string, unknown>;
}

export interface AnchoringConfig {
  /** RECEIPT_ANCHOR_ADDRESS on the funding chain; null: the devnet's own, or no anchoring. */
  readonly address: Hex | null;
  /** ANCHOR_BATCH_SIZE: a batch closes at this many receipts (default 100). */
  readonly batchSize: number;
  /** ANCHOR_BATCH_SECONDS: …or this long after its oldest receipt was queued (default 2). */
  readonly batchSeconds: number;
  /** ANCHOR_CONFIRMATIONS: blocks, the landing one included, before a batch is ANCHORED (default 1). */
  readonly confirmations: number;
  /** ANCHOR_RECHECK_DEPTH: blocks at which an ANCHORED batch is read again, re-sent if a re-org dropped it (default 64). */
  readonly recheckDepth: number;
}

export interface ChainReadsConfig {
  /** CHAIN_LOG_PAGE_BLOCKS: blocks per eth_getLogs request on every chain (default 2,000). */
  readonly logPageBlocks: number;
  /** RECONCILE_MAX_RPC_CALLS: RPC calls one paid reconciliation report may make (default 1,000). */
  readonly reportRpcCalls: number;
}

/** A token bucket: `perMinute` tokens added a minute, at most `burst` held. */
export interface BucketSetting {
  readonly perMinute: number;
  readonly burst: number;
}

export interface RateLimitConfig {
  /** postgres: buckets shared by every replica (gateway.rate_buckets); memory: per process. */
  readonly store: 'postgres' | 'memory';
  readonly ip: BucketSetting;
  readonly challenge: BucketSetting;
  readonly principal: BucketSetting;
  readonly payer: BucketSetting;
  readonly paidIp: BucketSetting;
  readonly signIn: BucketSetting;
  readonly outbound: BucketSetting;
}

/**
 * TRUST_PROXY as Express's `trust proxy` setting: false (the socket address is the client), a
 * number of proxy hops, or the proxies' addresses, subnets and range names.
 */
export type TrustProxy = false | number | readonly string[];
export interface SubscriptionLimits {
  /** SUBSCRIPTION_MAX_SOCKETS_PER_SESSION: open sockets per signed-in principal (owner, consumer, admin). */
  readonly maxSocketsPerSession: number;
  /** SUBSCRIPTION_MAX_PER_SOCKET: operations running on one socket at once. */
  readonly maxSubscriptionsPerSocket: number;
  /** SUBSCRIPTION_MAX_BUFFERED_BYTES: unsent bytes a socket may queue before it is closed as a slow consumer. */
  readonly maxBufferedBytes: number;
  /** SUBSCRIPTION_READ_CONCURRENCY: state reads (snapshots, changed rows) running at once, per gateway. */
  readonly readConcurrency: number;
  /** SUBSCRIPTION_READ_QUEUE: state reads waiting for a slot; beyond it a read fails at once. */
  readonly readQueueLength: number;
}

export const DEFAULT_SUBSCRIPTION_LIMITS: SubscriptionLimits = {
  maxSocketsPerSession: 5,
  maxSubscriptionsPerSocket: 20,
  maxBufferedBytes: 1024 * 1024,
  readConcurrency: 2,
  readQueueLength: 500,
};

export class ConfigError extends Error {
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** Upper bound of every RATE_LIMIT_* number (the bucket maths stays exact below it). */
export const MAX_RATE_LIMIT_SETTING = 1_000_000;

export interface RdapConfig {
  /** RFC 9224 dns.json (URL or absolute path); null: the devnet registry's, which `npm start` runs. */
  readonly bootstrapSource: string | null;
  /** `public` in production (https only, public addresses on every hop); `development` otherwise. */
  readonly addressPolicy: 'development' | 'public';
  readonly lookupTimeoutMs: number;
  readonly maxConcurrentLookups: number;
  readonly transportRetries: number;
}

export interface BuilderConfig {
  /** LLM_API_KEY, LLM_BASE_URL, LLM_MODEL, LLM_TIMEOUT_MS, checked; null: no model (the fallback answers). */
  readonly llm: {
    readonly apiKey: string;
    readonly baseUrl: string;
    readonly model: string;
    readonly timeoutMs: number;
  } | null;
  /** BUILDER_DEFAULT_TLDS; null: not set (the devnet's TLDs on the embedded devnet, else com, io, ai). */
  readonly defaultTlds: readonly string[] | null;
}

export interface EscalationConfig {
  /** ESCALATION_SWEEP_INTERVAL_MS: pause between worker rounds (expiry sweep and notice delivery). */
  readonly sweepIntervalMs: number;
  /** DASHBOARD_URL: notices link to `<dashboardUrl>/escalations/<pollRef>`. */
  readonly dashboardUrl: string;
  /** Bot API base URL, bot token and the setWebhook secret token. */
  readonly telegram: {
    readonly apiBaseUrl: string;
    readonly botToken: string;
    readonly webhookSecret: string;
  } | null;
  /** Web API base URL, bot token and the app's signing secret. */
  readonly slack: {
    readonly apiBaseUrl: string;
    readonly botToken: string;
    readonly signingSecret: string;
  } | null;
  readonly smtp: { readonly url: string; readonly from: string } | null;
}

/** Config without its redacting toJSON: what the readers assemble before sealing. */
export type ConfigFields = Omit<Config, 'toJSON'>;
