// Builds the per-request SubgraphContext from what the gateway sends: the HMAC-signed actor
// header (verified here, never trusted unsigned) and the correlation id. HTTP and in-process
// calls share one factory per server, so both transports admit exactly the same actors.
import { isCorrelationId, newCorrelationId } from '../../core/canon/ids';
import { GraphQLError } from 'graphql';
import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import { AppError } from '../../core/errors';
import { ActorSignatureError, verifyClaims } from '../../platform/actor';
import { systemClock } from '../../platform/clock';
import { deriveSealingKey } from '../../platform/sealing';
import { toGraphQLError } from './errors';
import type { RdapClient } from '../../platform/rdap';
import type {
  BuilderServices,
  ConsumerRails,
  SubgraphChains,
  SubgraphContext,
  SubgraphSettings,
} from './types';

export { CORRELATION_HEADER } from '../../platform/actor';
/** HMAC-SHA256 keys shorter than the hash output weaken it; refuse them at start-up. */
export const MIN_ACTOR_SECRET_BYTES = 32;

export interface SubgraphServerDeps {
  readonly db: Pool;
  /** The process's one TypeORM DataSource (initialised; its owner destroys it); needed by subgraphs with entities. */
  readonly dataSource?: DataSource;
  readonly actorSecret: Buffer;
  /** The one clock; tests inject a fixed one. */
  readonly now?: () => Date;
  /** Receives every error that is reported to the client as INTERNAL_ERROR (default: stderr). */
  readonly onInternalError?: (error: unknown, correlationId: string) => void;
  /** The chains this subgraph may read (the policy subgraph reads registrations on the funding chain). */
  readonly chains?: SubgraphChains;
  /** The consumer purchase path's rails and provider registry (the intent subgraph). */
  readonly consumer?: ConsumerRails;
  /** The RDAP client delivery checks (verify_delivery) and the builder's domain checks ask. */
  readonly rdap?: RdapClient;
  /** The builder's name model and default TLDs. */
  readonly builder?: BuilderServices;
  /** Deployment settings; absent fields take DEFAULT_SUBGRAPH_SETTINGS. */
  readonly settings?: Partial<SubgraphSettings>;
}

/** The primary chain of DECISIONS (X Layer, eip155:196); no public URL, so no sign-in; consumer auth on. */
export const DEFAULT_SUBGRAPH_SETTINGS: SubgraphSettings = Object.freeze({
  publicUrl: null,
  primaryChainId: 196,
  consumerAuthRequired: true,
  anchoringOff: null,
});

/** The context's settings, with the defaults where a (hand-built) context carries none. */
export function settingsOf(ctx: Pick<SubgraphContext, 'settings'>): SubgraphSettings {
  return ctx.settings ?? DEFAULT_SUBGRAPH_SETTINGS;
}

/** What a caller presents: the signed actor header value and, optionally, its correlation id. */
export interface RequestCredentials {
  readonly actorHeader?: string;
  readonly correlationId?: string;
}

export type ContextFactory = (credentials: RequestCredentials) => SubgraphContext;

function assertUsableDeps(deps: SubgraphServerDeps): void {
  if (!Buffer.isBuffer(deps.actorSecret) || deps.actorSecret.length < MIN_ACTOR_SECRET_BYTES) {
    throw new Error(`actorSecret must be a Buffer of at least ${MIN_ACTOR_SECRET_BYTES} bytes`);
  }
}

/** Throws a GraphQLError (AUTH_REQUIRED, HTTP 401) when the actor header does not verify. */
export function createContextFactory(deps: SubgraphServerDeps): ContextFactory {
  assertUsableDeps(deps);
  const now = deps.now ?? systemClock;
  // An explicitly undefined field means "not given", never "undefined".
  const given = Object.fromEntries(
    Object.entries(deps.settings ?? {}).filter(([, value]) => value !== undefined),
  );
  const settings: SubgraphSettings = Object.freeze({ ...DEFAULT_SUBGRAPH_SETTINGS, ...given });
  const sealingKey = deriveSealingKey(deps.actorSecret);
  return (credentials) => {
    let claims;
    try {
      claims = verifyClaims(credentials.actorHeader, deps.actorSecret, now().getTime());
    } catch (error) {
      if (!(error instanceof ActorSignatureError)) throw error;
      const refusal = new AppError('AUTH_REQUIRED', 'The signed actor header was refused.', {
        reason: error.message.replace(/^actor header rejected: /, ''),
      });
      throw toGraphQLError(refusal, { httpStatus: 401 });
    }
    const given = credentials.correlationId;
    const correlationId =
      given !== undefined && isCorrelationId(given) ? given : newCorrelationId();
    const { actor, paidRoute } = claims;
    return {
      actor,
      paidRoute,
      db: deps.db,
      dataSource: deps.dataSource,
      now,
      correlationId,
      chains: deps.chains,
      consumer: deps.consumer,
      rdap: deps.rdap,
      builder: deps.builder,
      settings,
      sealingKey,
    };
  };
}

const factories = new WeakMap<object, ContextFactory>();

export function registerContextFactory(server: object, factory: ContextFactory): void {
  factories.set(server, factory);
}

export function contextFactoryFor(server: object): ContextFactory {
  const factory = factories.get(server);
  if (factory === undefined)
    throw new Error('this ApolloServer was not made by createSubgraphServer');
  return factory;
}

export function isContextRefusal(error: unknown): error is GraphQLError {
  return error instanceof GraphQLError && error.originalError instanceof AppError;
}

/** The process's one TypeORM DataSource; a subgraph that reads through it cannot run without it. */
export function dataSourceOf(ctx: SubgraphContext): DataSource {
  if (ctx.dataSource === undefined)
    throw new Error('this subgraph needs a DataSource (SubgraphServerDeps.dataSource)');
  return ctx.dataSource;
}
