// The two shapes every subgraph shares: the module the registry, the composer and the servers
// load, and the per-request context its resolvers receive. Building a schema needs neither a
// database nor config, so composition runs offline.
import type { GraphQLSchema } from 'graphql';
import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import type { NameModel } from '../../core/builder';
import type { Actor } from '../../platform/actor';
import type { RdapClient } from '../../platform/rdap';
import type { SubgraphName } from '../../platform/db/migrate';

export type { SubgraphName };

export interface SubgraphModule {
  readonly name: SubgraphName;
  /** Builds the federated schema (no I/O); each call returns a fresh schema. */
  buildSchema(): Promise<GraphQLSchema>;
  /** What the subgraph runs beside its server while it serves (started before it, stopped after it). */
  startBeside?(deps: SubgraphBesideDeps): SubgraphBeside;
  /** Its TypeORM entity classes, for the process's one DataSource; absent: it reads only through SQL. */
  readonly entities?: readonly EntityClass[];
}

/** A TypeORM entity class (decorated with `@Entity`). */
export type EntityClass = new () => object;

/** What a subgraph's background parts are given. */
export interface SubgraphBesideDeps {
  readonly db: Pool;
  /** The database the pool is open on, for parts that open connections of their own; null: none may. */
  readonly databaseUrl: string | null;
  /** Run the intent subgraph's preflight batches on a thread of their own (needs databaseUrl). */
  readonly decisionThread: boolean;
  /** Told of a background part's unexpected failure. */
  onError(error: unknown, what: string): void;
}

export interface SubgraphBeside {
  stop(): Promise<void>;
}

/** The funding chain as a subgraph reaches it: where to read receipts and which registry to trust. */
export interface FundingChainAccess {
  readonly chainId: number;
  readonly rpcUrl: string;
  /** PolicyRegistry address; null: none configured (on-chain registration is refused). */
  readonly policyRegistry: `0x${string}` | null;
}

export interface SubgraphChains {
  readonly funding: FundingChainAccess;
}

/** One EIP-3009 token on one rail, as the consumer purchase path needs it. */
export interface ConsumerRailAsset {
  /** CAIP-2, e.g. `eip155:196`. */
  readonly network: string;
  readonly chainId: number;
  readonly rpcUrl: string;
  /** The token contract (checksummed or lowercase; compare lowercased). */
  readonly token: `0x${string}`;
  readonly decimals: number;
  /** The token's ticker as the ledger registers the asset (e.g. `USDT0`, `USDC`). */
  readonly symbol: string;
  /** EIP-712 domain name and version of the token (e.g. `USD₮0` / `1`, `USD Coin` / `2`). */
  readonly name: string;
  readonly version: string;
  /** The service's treasury on this rail: the fund route's payTo (funding), the payer of merchants (settlement). */
  readonly treasury: `0x${string}`;
  /** CHAIN_LOG_PAGE_BLOCKS: blocks per eth_getLogs request on this rail's RPC; default 2,000. */
  readonly logPageBlocks?: bigint;
}

/**
 * What the consumer purchase path reads from the deployment: the two rails and where each
 * merchant answers (the provider registry: catalog provider id → base URL; never in code paths).
 * Absent: consumer purchases are unavailable (create answers PROVIDER_UNAVAILABLE).
 */
export interface ConsumerRails {
  /** Users fund here (USD₮0 on eip155:196). */
  readonly funding: ConsumerRailAsset;
  /** Merchants are paid here (USDC on eip155:8453). */
  readonly settlement: ConsumerRailAsset;
  /** Catalog provider id → the merchant's base URL, e.g. `spendctl-domains` → `http://127.0.0.1:4100`. */
  readonly providers: Readonly<Record<string, string>>;
  /** The cross-rail spread in basis points (DECISIONS: 50). */
  readonly spreadBps: bigint;
  /** RECONCILE_MAX_RPC_CALLS: RPC calls one paid reconciliation report may make; default 1,000. */
  readonly reportRpcCalls?: number;
}

/**
 * What the builder's launch pack reaches beyond RDAP (which is `rdap`). The model is typed by its
 * port in core, so no subgraph that imports this kit reaches the model client.
 */
export interface BuilderServices {
  /** The name model (platform/llm's client); null: none configured, suggestions come from the fallback. */
  readonly nameModel: NameModel | null;
  /** TLDs checked when a request names none (check_domains `{names}` without `tlds`, brand_pack). */
  readonly defaultTlds: readonly string[];
}

/** The service as its clients see it, for the rules that depend on the deployment. */
export interface SubgraphSettings {
  /** PUBLIC_URL; sign-in messages must name its host. null: sign-in is unavailable. */
  readonly publicUrl: string | null;
  /** The primary chain's id (funding, eip155:196): sign-in messages must name it. */
  readonly primaryChainId: number;
  /** CONSUMER_AUTH_REQUIRED: false lets consumer reads name a policyId without a session. */
  readonly consumerAuthRequired: boolean;
  /**
   * Why receipts are not anchored on this deployment (no ReceiptAnchor address or writer key
   * configured): receipts waiting for a batch then report NOT_RECORDED with this reason. null:
   * anchoring is configured and they report PENDING.
   */
  readonly anchoringOff: string | null;
}

/** What a resolver may rely on: the verified actor, the pool (and DataSource), the injected clock, the correlation id. */
export interface SubgraphContext {
  readonly actor: Actor;
  /** The priced REST route this call was paid on (a gateway-signed claim); null or absent: not a paid call. */
  readonly paidRoute?: string | null;
  readonly db: Pool;
  /** The process's one TypeORM DataSource, for tables read and written without locks or money. */
  readonly dataSource?: DataSource;
  now(): Date;
  readonly correlationId: string;
  /** The chains this process may read; absent: no chain configured. */
  readonly chains?: SubgraphChains;
  /** The consumer purchase path's rails and provider registry; absent: purchases unavailable. */
  readonly consumer?: ConsumerRails;
  /** The RDAP client delivery checks and the builder's domain checks ask; absent: RDAP answers are UNKNOWN / verified: false. */
  readonly rdap?: RdapClient;
  /** The builder's name model and default TLDs; absent: no model, DEFAULT_BUILDER_SERVICES' TLDs. */
  readonly builder?: BuilderServices;
  /** Absent in hand-built contexts; read it through `settingsOf`. */
  readonly settings?: SubgraphSettings;
  /** AES key for secrets kept sealed at rest (platform/sealing.ts); derived from the actor secret. */
  readonly sealingKey?: Buffer;
}
