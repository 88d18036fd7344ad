// The two shapes every subgraph shares: the module the registry, the composer and the servers
// load, and the per-request context its resolvers receive. Building a schema needs neither a
// database nor config, so composition runs offline.
import type { GraphQLSchema } from 'graphql';
import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import type { Actor } from '../../platform/actor';
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

/** The service as its clients see it, for the rules that depend on the deployment. */
export interface SubgraphSettings {
  /** PUBLIC_URL; sign-in messages must name its host. null: sign-in is unavailable. */
  readonly publicUrl: string | null;
  /** The primary chain's id (funding, eip155:196): sign-in messages must name it. */
  readonly primaryChainId: number;
  /** CONSUMER_AUTH_REQUIRED: false lets consumer reads name a policyId without a session. */
  readonly consumerAuthRequired: boolean;
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
  /** Absent in hand-built contexts; read it through `settingsOf`. */
  readonly settings?: SubgraphSettings;
  /** AES key for secrets kept sealed at rest (platform/sealing.ts); derived from the actor secret. */
  readonly sealingKey?: Buffer;
}
