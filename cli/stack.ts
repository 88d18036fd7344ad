// Assembles the running service from its parts — subgraph servers and the gateway — for the CLI's
// roles and for end-to-end tests alike, so tests exercise exactly what `spend-control start` runs.
// It knows nothing about where config comes from; callers pass resolved values.
import type { HttpMetrics } from '../platform/metrics';
import { inSpan, SpanKind } from '../platform/tracing';
import { serviceMetrics } from './observability';
import { isDevelopmentPublicUrl } from '../core/ownerEvents/endpointUrl';
import type { ApolloServer } from '@apollo/server';
import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import type { Logger } from '../platform/log';
import type { RdapClient } from '../platform/rdap';
import type { SubgraphName } from '../platform/db/migrate';
import { startGateway, type GatewayOptions, type RunningGateway } from '../gateway/server';
import {
  loadSupergraphSdl,
  type InProcessSubgraph,
  type SubgraphEndpoint,
} from '../gateway/graphql/supergraph';
import { buildRoutes } from '../gateway/rest/routes';
import type { RestServiceInfo } from '../gateway/rest/types';
import {
  createSubgraphServer,
  executeInProcess,
  type BuilderServices,
  startSubgraphHttp,
  type ConsumerRails,
  type SubgraphChains,
  type SubgraphContext,
  type SubgraphHttpHandle,
  type SubgraphHttpOptions,
  type SubgraphSettings,
} from '../subgraphs/kit';
import { SUBGRAPH_MODULES } from '../subgraphs/registry';
import { type EscalationWorkerOptions, type RunningWorker, startEscalationWorker } from './worker';
import {
  type AnchorWorkerOptions,
  type RunningAnchorWorker,
  startAnchorWorker,
} from './anchorWorker';
import {
  type ConsumerExecutionOptions,
  type RunningConsumerWorker,
  startConsumerExecutionWorker,
} from './consumerWorker';

export interface RunningSubgraph {
  readonly name: SubgraphName;
  readonly server: ApolloServer<SubgraphContext>;
  readonly http: SubgraphHttpHandle | null;
  stop(): Promise<void>;
}

export interface SubgraphRoleDeps {
  readonly db: Pool;
  /** The process's one TypeORM DataSource (subgraphs/registry.ts openSubgraphDataSource). */
  readonly dataSource?: DataSource;
  readonly actorSecret: Buffer;
  readonly now?: () => Date;
  readonly log: Logger;
  /** The funding chain and its PolicyRegistry; absent: no chain (registration is refused). */
  readonly chains?: SubgraphChains;
  /** The consumer purchase path's rails and provider registry; absent: purchases unavailable. */
  readonly consumer?: ConsumerRails;
  /** The RDAP client of delivery checks (POST /verify_delivery); absent: none configured. */
  readonly rdap?: RdapClient;
  /** The builder's name model and default TLDs; absent: no model, the builder's default TLDs. */
  readonly builder?: BuilderServices;
  readonly settings?: Partial<SubgraphSettings>;
  /** The database the pool is open on; parts that open their own connections (the decision thread) need it. */
  readonly databaseUrl?: string;
  /** The intent subgraph decides preflights on a thread of its own (see subgraphs/intent/preflight/decisionThread.ts). */
  readonly decisionThread?: boolean;
}

export async function startSubgraph(
  name: SubgraphName,
  deps: SubgraphRoleDeps,
  listen: (SubgraphHttpOptions & { readonly host: string }) | null,
): Promise<RunningSubgraph> {
  const module = SUBGRAPH_MODULES[name];
  const beside = module.startBeside?.({
    db: deps.db,
    databaseUrl: deps.databaseUrl ?? null,
    decisionThread: deps.decisionThread ?? false,
    onError: (error, what) => deps.log.error({ err: error, subgraph: name }, `${what} failed`),
  });
  let server: ApolloServer<SubgraphContext>;
  let http: SubgraphHttpHandle | null;
  try {
    server = await createSubgraphServer(module, {
      db: deps.db,
      dataSource: deps.dataSource,
      actorSecret: deps.actorSecret,
      now: deps.now,
      chains: deps.chains,
      consumer: deps.consumer,
      rdap: deps.rdap,
      builder: deps.builder,
      settings: deps.settings,
      onInternalError: (error, correlationId) =>
        deps.log.error({ err: error, correlationId, subgraph: name }, 'subgraph internal error'),
    });
  } catch (error) {
    await beside?.stop();
    throw error;
  }
  try {
    http = listen ? await startSubgraphHttp(server, { ...listen, name }) : null;
  } catch (error) {
    await server.stop();
    await beside?.stop();
    throw error;
  }
  return {
    name,
    server,
    http,
    async stop() {
      await http?.stop();
      await server.stop();
      await beside?.stop();
    },
  };
}

export function inProcessEndpoint(subgraph: RunningSubgraph): InProcessSubgraph {
  const spanName = `subgraph ${subgraph.name}`;
  const attributes = { 'spend.subgraph': subgraph.name, 'spend.transport': 'in-process' };
  return {
    async execute(request, credentials) {
      const result = await inSpan(spanName, { kind: SpanKind.SERVER, attributes }, () =>
        executeInProcess(subgraph.server, request, {
          actorHeader: credentials.signedActor,
          correlationId: credentials.correlationId,
        }),
      );
      return {
        data: result.data ?? undefined,
        errors: result.errors as never,
        extensions: result.extensions,
      };
    },
  };
}

/** The gateway's options less what this assembly supplies itself (the committed supergraph, the route table). */
export type GatewayStackOptions = Omit<GatewayOptions, 'supergraphSdl' | 'routes' | 'subgraphs'> & {
  readonly subgraphs: Readonly<Record<SubgraphName, SubgraphEndpoint>>;
};

export function startGatewayRole(options: GatewayStackOptions): Promise<RunningGateway> {
  return startGateway({
    ...options,
    supergraphSdl: loadSupergraphSdl(),
    routes: buildRoutes(),
  });
}

export interface AllInOneOptions extends Omit<GatewayStackOptions, 'subgraphs'> {
  readonly db: Pool;
  readonly dataSource?: DataSource;
  /** 'in-process': the gateway calls subgraphs without HTTP; 'http': each subgraph listens on its own port. */
  readonly transport: 'in-process' | 'http';
  /** First subgraph port for the 'http' transport; 0 picks free ports. */
  readonly subgraphPortBase: number;
  readonly chains?: SubgraphChains;
  /** The process's RDAP client (delivery checks, the builder's domain checks); default: the execution worker's. */
  readonly rdap?: RdapClient;
  /** The builder's name model and default TLDs. */
  readonly builder?: BuilderServices;
  /**
   * The consumer purchase path: `rails` reach every subgraph; each part of issue #17 adds its own
   * sub-key here (workers, signers) rather than a top-level option.
   */
  readonly consumer?: {
    readonly rails: ConsumerRails;
    /** The consumer execution worker (execution, refunds, reconciler) in this process; absent: none. */
    readonly execution?: ConsumerExecutionOptions;
  };
  /** The primary chain id sign-in messages must name; default 196. */
  readonly primaryChainId?: number;
  /** The escalation worker (sweep and notice delivery) in this process; absent: no worker. */
  readonly escalationWorker?: Pick<
    EscalationWorkerOptions,
    | 'adapters'
    | 'dashboardBaseUrl'
    | 'intervalMs'
    | 'webhookRetryScheduleMs'
    | 'webhookInternalHosts'
  >;
  /** The database `db` is open on (needed by the decision thread). */
  readonly databaseUrl?: string;
  /** Preflights decided on a thread of their own; needs databaseUrl. */
  readonly decisionThread?: boolean;
  /**
   * Receipt anchoring (issue #19): `worker`, an anchoring worker in this process with the writer
   * key (absent: none here); `off`, why this deployment anchors nothing (receipts then read
   * NOT_RECORDED). Top-level rather than under `consumer`: it anchors preflights' receipts too.
   */
  readonly anchoring?: { readonly worker?: AnchorWorkerOptions; readonly off?: string };
}

/** What every subgraph learns about the deployment, from the gateway-facing options. */
export function subgraphSettingsOf(options: {
  service: RestServiceInfo;
  consumerAuthRequired?: boolean;
  primaryChainId?: number;
  anchoring?: AllInOneOptions['anchoring'];
}): Partial<SubgraphSettings> {
  return {
    publicUrl: options.service.publicUrl,
    consumerAuthRequired: options.consumerAuthRequired,
    primaryChainId: options.primaryChainId,
    anchoringOff: options.anchoring?.off ?? null,
  };
}

export interface RunningStack {
  readonly gateway: RunningGateway;
  readonly subgraphs: readonly RunningSubgraph[];
  readonly worker: RunningWorker | null;
  /** The consumer execution worker, when `consumer.execution` asked for one. */
  readonly consumerExecution: RunningConsumerWorker | null;
  /** The anchoring worker, when `anchoring.worker` asked for one. */
  readonly anchoring: RunningAnchorWorker | null;
  stop(): Promise<void>;
}

/** The anchoring worker `options.anchoring.worker` asks for, or null. */
function anchoringWorkerOf(options: AllInOneOptions): RunningAnchorWorker | null {
  const worker = options.anchoring?.worker;
  if (worker === undefined) return null;
  return startAnchorWorker({ ...worker, db: options.db, log: options.log, now: options.now });
}

/** The escalation worker (timeouts, notices, owner webhooks) when the options ask for one. */
function escalationWorkerOf(options: AllInOneOptions, metrics: HttpMetrics) {
  if (!options.escalationWorker) return null;
  return startEscalationWorker({
    metrics,
    webhookInternalHosts: isDevelopmentPublicUrl(options.service.publicUrl),
    ...options.escalationWorker,
    db: options.db,
    actorSecret: options.actorSecret,
    now: options.now,
    log: options.log,
  });
}

/** What each subgraph of the all-in-one process is given. */
function subgraphDepsOf(options: AllInOneOptions): SubgraphRoleDeps {
  return {
    db: options.db,
    dataSource: options.dataSource,
    actorSecret: options.actorSecret,
    now: options.now,
    log: options.log,
    chains: options.chains,
    consumer: options.consumer?.rails,
    // Without a client of its own the process uses the execution worker's.
    rdap: options.rdap ?? options.consumer?.execution?.rdap,
    builder: options.builder,
    settings: subgraphSettingsOf(options),
    databaseUrl: options.databaseUrl,
    decisionThread: options.decisionThread,
  };
}

/** Every subgraph plus the gateway in this process; stops in reverse order. */
export async function startAllInOne(options: AllInOneOptions): Promise<RunningStack> {
  const started: RunningSubgraph[] = [];
  try {
    const names = Object.keys(SUBGRAPH_MODULES) as SubgraphName[];
    for (const [index, name] of names.entries()) {
      const listen =
        options.transport === 'http'
          ? {
              host: '127.0.0.1',
              port: options.subgraphPortBase === 0 ? 0 : options.subgraphPortBase + index,
            }
          : null;
      started.push(await startSubgraph(name, subgraphDepsOf(options), listen));
    }
    const endpoints = Object.fromEntries(
      started.map((subgraph) => [
        subgraph.name,
        subgraph.http ? { url: subgraph.http.url } : { inProcess: inProcessEndpoint(subgraph) },
      ]),
    ) as Record<SubgraphName, SubgraphEndpoint>;
    const metrics = options.metrics ?? serviceMetrics(options.db);
    const gateway = await startGatewayRole({ ...options, metrics, subgraphs: endpoints });
    const worker = escalationWorkerOf(options, metrics);
    const consumerExecution =
      options.consumer?.execution !== undefined
        ? await startConsumerExecutionWorker({
            ...options.consumer.execution,
            actorSecret: options.actorSecret,
            listenDatabaseUrl: options.listenDatabaseUrl,
            db: options.db,
            rails: options.consumer.rails,
            log: options.log,
            now: options.now,
          }).catch(async (error: unknown) => {
            await worker?.stop();
            await gateway.stop();
            throw error;
          })
        : null;
    const anchoring = anchoringWorkerOf(options);
    return {
      gateway,
      subgraphs: started,
      worker,
      consumerExecution,
      anchoring,
      async stop() {
        await gateway.drain();
        await anchoring?.stop();
        await consumerExecution?.stop();
        await worker?.stop();
        await gateway.stop();
        for (const subgraph of [...started].reverse()) await subgraph.stop();
      },
    };
  } catch (error) {
    for (const subgraph of started.reverse()) await subgraph.stop().catch(() => undefined);
    throw error;
  }
}
