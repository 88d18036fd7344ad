// `spend-control start [--role R] [--transport in-process|http]`: brings the service up on the
// embedded defaults when nothing is configured (embedded PostgreSQL, local anvil chains), prints
// what runs where, and on SIGINT/SIGTERM stops everything it started, in reverse order.
import path from 'node:path';
import { readFileSync } from 'node:fs';
import type { Pool } from 'pg';
import { loadConfig, prepareLocalSecrets, type Config } from '../platform/config';
import { createLogger, type Logger } from '../platform/log';
import { createPool } from '../platform/db/pool';
import {
  migrate,
  MIGRATION_SETS,
  type MigrationSet,
  SUBGRAPH_NAMES,
  type SubgraphName,
} from '../platform/db/migrate';
import { startEmbeddedPostgres } from '../platform/db/embedded';
import { serviceRoleProblems } from '../platform/db/roles';
import { projectRoot } from '../platform/paths';
import { keysFilePath, readDevnetFile, startDevnetChains, type DevnetInfo } from '../devnet/chains';
import { loadKeyFile, type KeyStore } from '../platform/chain/keys';
import type { X402GatewayOptions } from '../gateway/server';
import { createSettlementRail } from '../gateway/x402/rail';
import { DEVNET_POLLING_INTERVAL_MS } from '../devnet/chains';
import type { RestServiceInfo } from '../gateway/rest/types';
import type { SubgraphEndpoint } from '../gateway/graphql/supergraph';
import type { SubgraphChains } from '../subgraphs/kit';
import { prepareEscalationChannels } from './channels';
import { prepareProviders, type ProviderUrls } from './providers';
import { prepareRdap } from './rdap';
import type { RdapClientOptions } from '../platform/rdap';
import { startAllInOne, startGatewayRole, startSubgraph, subgraphSettingsOf } from './stack';
import { startEscalationWorker } from './worker';
import { openSubgraphDataSource } from '../subgraphs/registry';

export const ROLES = ['all', 'gateway', 'worker', ...SUBGRAPH_NAMES] as const;
export type Role = (typeof ROLES)[number];

export interface StartArgs {
  role: Role;
  transport: 'in-process' | 'http';
}

type Stopper = { name: string; stop: () => Promise<unknown> };

export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(path.join(projectRoot(), 'package.json'), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '[unparseable url]';
  }
}

function serviceInfo(config: Config, devnet: DevnetInfo | null): RestServiceInfo {
  return {
    publicUrl: config.publicUrl,
    docsBaseUrl: config.identity.docsBaseUrl,
    serviceName: config.identity.serviceName,
    serviceDescription: config.identity.serviceDescription,
    serviceImageUrl: config.identity.serviceImageUrl,
    version: packageVersion(),
    payment: {
      network: `eip155:${config.funding.chainId}`,
      asset: config.funding.tokenAddress ?? devnet?.chains.funding.token.address ?? null,
      assetSymbol: 'USDT0',
      assetDecimals: 6,
      assetName: config.funding.tokenName,
      assetVersion: config.funding.tokenVersion,
      payTo: config.feeReceiverAddress ?? devnet?.addresses.feeReceiver ?? null,
    },
    agentRegistrations: [],
  };
}

/** The funding chain as the subgraphs reach it: the devnet's, or the configured RPC and registry. */
function subgraphChains(config: Config, devnet: DevnetInfo | null): SubgraphChains | undefined {
  if (devnet !== null) {
    const funding = devnet.chains.funding;
    return {
      funding: {
        chainId: funding.chainId,
        rpcUrl: funding.rpcUrl,
        policyRegistry: devnet.contracts.policyRegistry,
      },
    };
  }
  if (config.funding.rpcUrl === null) return undefined;
  return {
    funding: {
      chainId: config.funding.chainId,
      rpcUrl: config.funding.rpcUrl,
      policyRegistry: config.policyRegistryAddress,
    },
  };
}

/**
 * x402 on the paid routes: the funding chain's RPC, token and the relayer key that pays settlement
 * gas (the devnet's keys.json, or RELAYER_PRIVATE_KEY). null: no chain, so no payment can be taken.
 */
function x402Options(
  config: Config,
  devnet: DevnetInfo | null,
  devnetKeys: KeyStore | null,
  db: Pool,
): X402GatewayOptions | null {
  const rpcUrl = devnet?.chains.funding.rpcUrl ?? config.funding.rpcUrl;
  const token = config.funding.tokenAddress ?? devnet?.chains.funding.token.address ?? null;
  const relayerPrivateKey =
    config.secrets.relayerPrivateKey ?? devnetKeys?.relayer.exportPrivateKey() ?? null;
  if (!rpcUrl || !token || !relayerPrivateKey) return null;
  const rail = createSettlementRail({
    chainId: devnet?.chains.funding.chainId ?? config.funding.chainId,
    rpcUrl,
    token,
    relayerPrivateKey,
    confirmationTimeoutMs: config.x402.settleTimeoutMs,
    ...(devnet ? { pollingIntervalMs: DEVNET_POLLING_INTERVAL_MS } : {}),
  });
  return {
    rail,
    db,
    leaseMs: config.x402.leaseMs,
    reconcileIntervalMs: config.x402.reconcileIntervalMs,
  };
}

/** Outside production a single DATABASE_URL may also migrate; production names the owner's login apart. */
function migrationUrlOutsideProduction(config: Config, databaseUrl: string): string {
  if (config.isProduction) {
    throw new StartupError(
      'MIGRATION_DATABASE_URL is required in production for the roles that migrate (all and the subgraph roles): ' +
        'a login of spend_control_owner, apart from the service role of DATABASE_URL (docs/operations.md, "Database roles")',
    );
  }
  return databaseUrl;
}

/** Migrations on a connection of their own, closed before the service starts. */
async function migrateWith(url: string, subgraphs: readonly MigrationSet[]): Promise<number> {
  const migrator = createPool(url, { max: 1, applicationName: 'spend-control-migrate' });
  try {
    return (await migrate(migrator, { subgraphs })).applied.length;
  } finally {
    await migrator.end();
  }
}

/**
 * The service's login must not be able to switch off the database's guards (a superuser, or an
 * owner of the tables, can disable triggers): production refuses to start, elsewhere a warning.
 */
async function checkServiceRole(
  pool: Pool,
  production: boolean,
  out: (line: string) => void,
): Promise<void> {
  const problems = await serviceRoleProblems(pool);
  if (problems.length === 0) return;
  const message =
    `DATABASE_URL must log in as a member of spend_control_service that owns nothing: ${problems.join('; ')} ` +
    '(docs/operations.md, "Database roles")';
  if (production) throw new StartupError(message);
  out(`database        WARNING ${message}`);
}

/** Starts what the role needs; resolves once everything listens. Returns a function that stops it all. */
export async function start(
  args: StartArgs,
  env: NodeJS.ProcessEnv = process.env,
  out: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): Promise<{
  stop(): Promise<void>;
  gatewayUrl: string | null;
  providerUrls: ProviderUrls;
  rdap: RdapClientOptions | null;
}> {
  let config = loadConfig(env);
  const log: Logger = createLogger({ level: config.logLevel });
  if (!config.isProduction) {
    const local = await prepareLocalSecrets(config);
    config = local.config;
    if (local.adminTokenFile) {
      out(
        `admin token     ${local.adminTokenFile}${local.generatedAdminToken ? ' (generated now; mode 0600)' : ''}`,
      );
    }
  }
  const { secrets } = config;
  if (!secrets.internalActorSecret) throw new StartupError('INTERNAL_ACTOR_SECRET is not set');
  if (!secrets.sessionSecret) throw new StartupError('SESSION_SECRET is not set');
  const { internalActorSecret, sessionSecret } = secrets;

  const stoppers: Stopper[] = [];
  const stopAll = async () => {
    for (const stopper of stoppers.reverse()) {
      try {
        await stopper.stop();
      } catch (error) {
        log.error({ err: error, component: stopper.name }, 'error while stopping');
      }
    }
    stoppers.length = 0;
  };

  try {
    let databaseUrl = config.databaseUrl;
    let migrationUrl = config.migrationDatabaseUrl;
    if (!databaseUrl) {
      const dataDir = path.join(config.dataDir, 'pg');
      out(`database        starting embedded PostgreSQL in ${dataDir} …`);
      const embedded = await startEmbeddedPostgres({ dataDir });
      stoppers.push({ name: 'embedded PostgreSQL', stop: () => embedded.stop() });
      // The superuser prepares the roles and migrates; the service runs as its own login.
      databaseUrl = embedded.serviceUrl;
      migrationUrl = embedded.url;
    }
    out(`database        ${redactUrl(databaseUrl)}`);

    // The gateway migrates its own schema (rate-limit buckets); each subgraph role its own.
    const migrating: readonly MigrationSet[] =
      args.role === 'all' ? MIGRATION_SETS : args.role === 'worker' ? [] : [args.role];
    if (migrating.length > 0) {
      const applied = await migrateWith(
        migrationUrl ?? migrationUrlOutsideProduction(config, databaseUrl),
        migrating,
      );
      out(`migrations      ${applied} applied (${migrating.join(', ')})`);
    }
    const pool: Pool = createPool(databaseUrl, { applicationName: `spend-control-${args.role}` });
    stoppers.push({ name: 'database pool', stop: () => pool.end() });
    const dataSource = await openSubgraphDataSource(databaseUrl, `spend-control-${args.role}`);
    stoppers.push({ name: 'TypeORM data source', stop: () => dataSource.destroy() });
    await checkServiceRole(pool, config.isProduction, out);

    let devnet: DevnetInfo | null = null;
    let devnetKeys: KeyStore | null = null;
    if (config.devnet) {
      if (args.role === 'all') {
        out('chains          starting local anvil chains (eip155:196, eip155:8453) …');
        const chains = await startDevnetChains({ dataDir: config.dataDir });
        stoppers.push({ name: 'devnet chains', stop: () => chains.stop() });
        devnet = chains.info;
        devnetKeys = chains.keys;
      } else {
        devnet = readDevnetFile(config.dataDir);
        if (args.role === 'gateway') devnetKeys = loadKeyFile(keysFilePath(config.dataDir));
      }
      out(
        `chains          funding  eip155:${devnet.chains.funding.chainId} ${devnet.chains.funding.rpcUrl} USDT0 ${devnet.chains.funding.token.address}`,
      );
      out(
        `                settle   eip155:${devnet.chains.settlement.chainId} ${devnet.chains.settlement.rpcUrl} USDC ${devnet.chains.settlement.token.address}`,
      );
      out(
        `                registry eip155:${devnet.chains.funding.chainId} PolicyRegistry ${devnet.contracts.policyRegistry ?? 'none (restart the devnet)'}`,
      );
    } else {
      out(
        `chains          funding  eip155:${config.funding.chainId} ${config.funding.rpcUrl ? redactUrl(config.funding.rpcUrl) : ''}`,
      );
      out(
        `                settle   eip155:${config.settlement.chainId} ${config.settlement.rpcUrl ? redactUrl(config.settlement.rpcUrl) : ''}`,
      );
      out(
        `                registry eip155:${config.funding.chainId} PolicyRegistry ${config.policyRegistryAddress ?? 'none (POLICY_REGISTRY_ADDRESS unset)'}`,
      );
    }
    const chains = subgraphChains(config, devnet);
    // Where domain lookups go: RDAP_BOOTSTRAP_URL, or on the embedded devnet its local registry.
    const rdap = await prepareRdap({
      config: config.rdap,
      standIn: config.devnet && args.role === 'all',
      out,
    });
    stoppers.push({ name: 'RDAP registry', stop: () => rdap.stop() });

    const readinessCheck = async () => {
      await pool.query('SELECT 1');
    };
    // Escalation channels: the worker sends through them, the gateway verifies what comes back.
    const channels =
      args.role === 'all' || args.role === 'gateway' || args.role === 'worker'
        ? await prepareEscalationChannels({
            config: config.escalations,
            publicUrl: config.publicUrl,
            standIns: config.devnet && args.role === 'all',
            out,
          })
        : null;
    if (channels !== null)
      stoppers.push({ name: 'escalation channels', stop: () => channels.stop() });
    // The devnet merchant runs where the devnet chains run: in the all-in-one process.
    const providers = await prepareProviders({
      urls: config.providerUrls,
      devnetSettlement:
        config.devnet && args.role === 'all' && devnet !== null ? devnet.chains.settlement : null,
      dataDir: config.dataDir,
      out,
    });
    stoppers.push({ name: 'providers', stop: () => providers.stop() });
    const escalationWorker = {
      adapters: channels?.adapters ?? {},
      dashboardBaseUrl: config.escalations.dashboardUrl,
      intervalMs: config.escalations.sweepIntervalMs,
    };
    const gatewayOptions = {
      host: config.host,
      port: config.port,
      actorSecret: internalActorSecret,
      adminTokenHashes: secrets.adminTokenHashes,
      sessionSecret,
      consumerAuthRequired: config.http.consumerAuthRequired,
      primaryChainId: config.funding.chainId,
      listenDatabaseUrl: databaseUrl,
      readinessCheck,
      graphql: config.graphql,
      subscriptions: config.subscriptions,
      bodyLimitBytes: config.http.bodyLimitBytes,
      rateLimit: { limits: config.rateLimit, store: config.rateLimit.store, databaseUrl },
      trustProxy: config.http.trustProxy,
      service: serviceInfo(config, devnet),
      log,
      x402:
        args.role === 'all' || args.role === 'gateway'
          ? x402Options(config, devnet, devnetKeys, pool)
          : null,
      channelInbound: channels?.inbound,
    };
    if (gatewayOptions.x402 === null && (args.role === 'all' || args.role === 'gateway')) {
      if (config.isProduction)
        throw new StartupError(
          'x402 needs FUNDING_RPC_URL, FUNDING_TOKEN_ADDRESS and RELAYER_PRIVATE_KEY in production',
        );
      out(
        'x402            OFF: no funding chain configured, paid routes are served without payment',
      );
    }

    let gatewayUrl: string | null = null;
    if (args.role === 'all') {
      const stack = await startAllInOne({
        ...gatewayOptions,
        db: pool,
        dataSource,
        databaseUrl,
        decisionThread: config.decisionThread,
        transport: args.transport,
        subgraphPortBase: config.subgraphPortBase,
        chains,
        escalationWorker,
      });
      stoppers.push({ name: 'service', stop: () => stack.stop() });
      for (const subgraph of stack.subgraphs) {
        out(
          `subgraph        ${subgraph.name.padEnd(8)} ${subgraph.http ? subgraph.http.url : 'in-process'}`,
        );
      }
      gatewayUrl = stack.gateway.url;
    } else if (args.role === 'gateway') {
      const endpoints: Partial<Record<SubgraphName, SubgraphEndpoint>> = {};
      const missing: string[] = [];
      for (const name of SUBGRAPH_NAMES) {
        const url = config.subgraphUrls[name];
        if (url) endpoints[name] = { url };
        else missing.push(`SUBGRAPH_URL_${name.toUpperCase()}`);
      }
      if (missing.length > 0)
        throw new StartupError(`the gateway role needs ${missing.join(', ')}`);
      const gateway = await startGatewayRole({
        ...gatewayOptions,
        subgraphs: endpoints as Record<SubgraphName, SubgraphEndpoint>,
      });
      stoppers.push({ name: 'gateway', stop: () => gateway.stop() });
      gatewayUrl = gateway.url;
    } else if (args.role === 'worker') {
      const worker = startEscalationWorker({
        ...escalationWorker,
        db: pool,
        actorSecret: internalActorSecret,
        log,
      });
      stoppers.push({ name: 'escalation worker', stop: () => worker.stop() });
      out(`worker          escalation sweep and notices every ${escalationWorker.intervalMs} ms`);
    } else {
      const port = config.subgraphPortBase + SUBGRAPH_NAMES.indexOf(args.role);
      const subgraph = await startSubgraph(
        args.role,
        {
          db: pool,
          dataSource,
          databaseUrl,
          decisionThread: config.decisionThread,
          actorSecret: internalActorSecret,
          log,
          chains,
          settings: subgraphSettingsOf(gatewayOptions),
        },
        { host: config.host, port },
      );
      stoppers.push({ name: `subgraph ${args.role}`, stop: () => subgraph.stop() });
      out(`subgraph        ${args.role.padEnd(8)} ${subgraph.http?.url}`);
    }

    if (gatewayUrl && channels !== null) {
      // Telegram must know where to send updates; a failure here leaves the other channels working.
      const webhookBase = config.devnet ? gatewayUrl : config.publicUrl;
      await channels
        .registerGateway(webhookBase)
        .catch((error: unknown) =>
          log.warn({ err: (error as Error).message }, 'could not register the Telegram webhook'),
        );
      const kinds = (['telegram', 'slack', 'email'] as const).filter(
        (kind) => channels.adapters[kind] !== undefined,
      );
      out(
        `escalations     channels webhook, dashboard${kinds.map((kind) => `, ${kind}`).join('')}; replies at ${gatewayUrl}/channels/…`,
      );
    }
    if (gatewayUrl) {
      out(`gateway         ${gatewayUrl}`);
      out(`GraphQL         ${gatewayUrl}/graphql (POST; websocket subscriptions on the same path)`);
      out(`REST            ${gatewayUrl}/catalog  ${gatewayUrl}/openapi.json`);
      if (gatewayOptions.x402) {
        out(
          `x402            ${gatewayOptions.service.payment.network} ${gatewayOptions.service.payment.asset} → ${gatewayOptions.service.payment.payTo} (${gatewayUrl}/.well-known/x402)`,
        );
      }
    }
    out(`ready           role ${args.role}; Ctrl-C stops everything`);
    return { stop: stopAll, gatewayUrl, providerUrls: providers.urls, rdap: rdap.client };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
