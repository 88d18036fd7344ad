// Starts what one role runs once its database, chains and channels are ready: every role in this
// process (`all`), the gateway alone (SUBGRAPH_URL_* name the subgraphs), the worker (escalations,
// anchoring, and consumer purchases where start prepared them), or one subgraph on its own port.
// Each part joins the stoppers as soon as it runs. Every role serves /healthz, /readyz (503 while
// draining) and /metrics: the worker on a probe server of its own.
import { isDevelopmentPublicUrl } from '../core/ownerEvents/endpointUrl';
import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import type { Config } from '../platform/config';
import { SUBGRAPH_NAMES, type SubgraphName } from '../platform/db/migrate';
import type { Logger } from '../platform/log';
import type { SubgraphEndpoint } from '../gateway/graphql/supergraph';
import type { RdapClient } from '../platform/rdap';
import type { BuilderServices, ConsumerRails, SubgraphChains } from '../subgraphs/kit';
import type { EscalationChannels } from './channels';
import type { GatewayRoleOptions } from './gatewayOptions';
import { startAllInOne, startGatewayRole, startSubgraph, subgraphSettingsOf } from './stack';
import { StartupError, type Out, type StartArgs, type Stoppers } from './startup';
import { startEscalationWorker } from './worker';
import { type ConsumerExecutionOptions, startConsumerExecutionWorker } from './consumerWorker';
import type { AnchoringSetup } from './anchoring';
import { startAnchorWorker } from './anchorWorker';
import { roleMetrics } from './observability';
import { databaseCheck, drainer, startProbeServer, type RoleProbes } from '../platform/probes';

export interface RoleInputs {
  readonly args: StartArgs;
  readonly config: Config;
  readonly pool: Pool;
  /** The process's one TypeORM DataSource; set for the roles that serve subgraphs. */
  readonly dataSource: DataSource | undefined;
  readonly databaseUrl: string;
  readonly chains: SubgraphChains | undefined;
  /** The consumer purchase path's rails; undefined: purchases unavailable. */
  readonly consumer: ConsumerRails | undefined;
  /** The process's RDAP client (delivery checks, the builder's domain checks); undefined: none. */
  readonly rdap?: RdapClient;
  /** The builder's name model and default TLDs. */
  readonly builder?: BuilderServices;
  /** The consumer execution worker's keys and interval (roles all and worker); undefined: no worker. */
  readonly consumerExecution?: ConsumerExecutionOptions;
  /** Receipt anchoring: the worker (where this process holds the writer key) or why it is off. */
  readonly anchoring: AnchoringSetup;
  readonly channels: EscalationChannels | null;
  readonly gatewayOptions: GatewayRoleOptions;
  readonly log: Logger;
  readonly stoppers: Stoppers;
  readonly out: Out;
}

/** Starts the role; resolves to the gateway's URL when this process serves one. */
export async function startRole(inputs: RoleInputs): Promise<string | null> {
  switch (inputs.args.role) {
    case 'all':
      return startEverything(inputs);
    case 'gateway':
      return startGatewayAlone(inputs);
    case 'worker':
      await startWorker(inputs);
      return null;
    default:
      await startOneSubgraph(inputs, inputs.args.role);
      return null;
  }
}

function escalationWorkerOf({ config, channels }: RoleInputs) {
  return {
    adapters: channels?.adapters ?? {},
    dashboardBaseUrl: config.escalations.dashboardUrl,
    intervalMs: config.escalations.sweepIntervalMs,
    webhookInternalHosts: isDevelopmentPublicUrl(config.publicUrl),
    publicUrl: config.publicUrl,
  };
}

async function startEverything(inputs: RoleInputs): Promise<string> {
  const { config, out } = inputs;
  const stack = await startAllInOne({
    ...inputs.gatewayOptions,
    db: inputs.pool,
    dataSource: inputs.dataSource,
    databaseUrl: inputs.databaseUrl,
    decisionThread: config.decisionThread,
    transport: inputs.args.transport,
    subgraphPortBase: config.subgraphPortBase,
    chains: inputs.chains,
    rdap: inputs.rdap,
    builder: inputs.builder,
    ...(inputs.consumer
      ? { consumer: { rails: inputs.consumer, execution: inputs.consumerExecution } }
      : {}),
    escalationWorker: escalationWorkerOf(inputs),
    anchoring: inputs.anchoring,
  });
  inputs.stoppers.push('service', () => stack.stop());
  for (const subgraph of stack.subgraphs) {
    out(
      `subgraph        ${subgraph.name.padEnd(8)} ${subgraph.http ? subgraph.http.url : 'in-process'}`,
    );
  }
  return stack.gateway.url;
}

async function startGatewayAlone(inputs: RoleInputs): Promise<string> {
  const endpoints: Partial<Record<SubgraphName, SubgraphEndpoint>> = {};
  const missing: string[] = [];
  for (const name of SUBGRAPH_NAMES) {
    const url = inputs.config.subgraphUrls[name];
    if (url) endpoints[name] = { url };
    else missing.push(`SUBGRAPH_URL_${name.toUpperCase()}`);
  }
  if (missing.length > 0) throw new StartupError(`the gateway role needs ${missing.join(', ')}`);
  const gateway = await startGatewayRole({
    ...inputs.gatewayOptions,
    metrics: roleMetrics('gateway', inputs.pool),
    subgraphs: endpoints as Record<SubgraphName, SubgraphEndpoint>,
  });
  inputs.stoppers.push('gateway', () => gateway.stop());
  return gateway.url;
}

/**
 * The probes of a role without the gateway: its metrics, the database check, and draining from the
 * first stop on (the stopper pushed last runs first: /readyz answers 503 for DRAIN_DELAY_MS while
 * the role still works, then the rest stops).
 */
function roleProbes(inputs: RoleInputs): { probes: RoleProbes; drainFirst(): void } {
  const { drain, draining } = drainer(inputs.config.http.drainDelayMs);
  const probes: RoleProbes = {
    metrics: roleMetrics(inputs.args.role, inputs.pool),
    checks: { database: databaseCheck(inputs.pool) },
    draining,
  };
  return { probes, drainFirst: () => inputs.stoppers.push('draining', drain) };
}

async function startWorker(inputs: RoleInputs): Promise<void> {
  const { config } = inputs;
  const { probes, drainFirst } = roleProbes(inputs);
  const probeServer = await startProbeServer(probes, {
    host: config.host,
    port: config.metricsPort,
  });
  inputs.stoppers.push('probe server', () => probeServer.stop());
  inputs.out(
    `worker          probes and metrics at ${probeServer.url} (/healthz, /readyz, /metrics)`,
  );
  const escalationWorker = escalationWorkerOf(inputs);
  const worker = startEscalationWorker({
    ...escalationWorker,
    db: inputs.pool,
    actorSecret: inputs.gatewayOptions.actorSecret,
    log: inputs.log,
    metrics: probes.metrics,
  });
  inputs.stoppers.push('escalation worker', () => worker.stop());
  inputs.out(
    `worker          escalation sweep and notices every ${escalationWorker.intervalMs} ms`,
  );
  await startConsumerWorkerRole(inputs);
  const anchorWorker = inputs.anchoring.worker;
  if (anchorWorker !== undefined) {
    const anchoring = startAnchorWorker({ ...anchorWorker, db: inputs.pool, log: inputs.log });
    inputs.stoppers.push('anchoring worker', () => anchoring.stop());
    inputs.out(`worker          receipt anchoring into ${anchorWorker.contract}`);
  }
  drainFirst();
}

/** The consumer execution worker of the worker role, when start prepared its rails and keys. */
async function startConsumerWorkerRole(inputs: RoleInputs): Promise<void> {
  const execution = inputs.consumerExecution;
  if (execution === undefined || inputs.consumer === undefined) return;
  const worker = await startConsumerExecutionWorker({
    ...execution,
    actorSecret: inputs.gatewayOptions.actorSecret,
    // LISTEN consumer_intent goes direct when DATABASE_URL is a pooler in transaction mode.
    listenDatabaseUrl: inputs.gatewayOptions.listenDatabaseUrl,
    db: inputs.pool,
    rails: inputs.consumer,
    log: inputs.log,
  });
  inputs.stoppers.push('consumer execution worker', () => worker.stop());
  inputs.out(
    `worker          consumer purchases: execution, deliveries, refunds (every ${execution.intervalMs} ms and on NOTIFY)`,
  );
}

/**
 * The port of a subgraph role: SUBGRAPH_PORT_BASE + its index. A gateway finds the role by the URL
 * it is given, so the port must be known in advance: base 0 (free ports) is for the all-in-one only.
 */
export function subgraphRolePort(base: number, role: SubgraphName): number {
  if (base === 0) {
    throw new StartupError(
      `the ${role} role needs a fixed port: SUBGRAPH_PORT_BASE=0 picks free ports for the all-in-one only`,
    );
  }
  return base + SUBGRAPH_NAMES.indexOf(role);
}

async function startOneSubgraph(inputs: RoleInputs, role: SubgraphName): Promise<void> {
  const { config } = inputs;
  const port = subgraphRolePort(config.subgraphPortBase, role);
  const { probes, drainFirst } = roleProbes(inputs);
  const subgraph = await startSubgraph(
    role,
    {
      db: inputs.pool,
      dataSource: inputs.dataSource,
      databaseUrl: inputs.databaseUrl,
      decisionThread: config.decisionThread,
      actorSecret: inputs.gatewayOptions.actorSecret,
      log: inputs.log,
      chains: inputs.chains,
      consumer: inputs.consumer,
      rdap: inputs.rdap,
      builder: inputs.builder,
      settings: subgraphSettingsOf({ ...inputs.gatewayOptions, anchoring: inputs.anchoring }),
    },
    { host: config.host, port, probes },
  );
  inputs.stoppers.push(`subgraph ${role}`, () => subgraph.stop());
  inputs.out(
    `subgraph        ${role.padEnd(8)} ${subgraph.http?.url} (probes and metrics beside it)`,
  );
  drainFirst();
}
