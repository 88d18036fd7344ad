// `spend-control start [--role R] [--transport in-process|http]`: brings the service up on the
// embedded defaults when nothing is configured (embedded PostgreSQL, local anvil chains), prints
// what runs where, and on SIGINT/SIGTERM stops everything it started, in reverse order. The parts
// (database.ts, chains.ts, channels.ts, providers.ts, rdap.ts, consumerSetup.ts, gatewayOptions.ts,
// roles.ts) are each started here in turn.
import { loadConfig, prepareLocalSecrets, type Config } from '../platform/config';
import { createLogger, type Logger } from '../platform/log';
import { createRdapClient, type RdapClientOptions } from '../platform/rdap';
import { prepareChains, type PreparedChains } from './chains';
import { anchoringOf } from './anchoring';
import { prepareEscalationChannels, type EscalationChannels } from './channels';
import { prepareDatabase } from './database';
import { gatewayOptionsOf, type GatewayRoleOptions } from './gatewayOptions';
import { prepareProviders, type ProviderUrls } from './providers';
import { prepareBuilder } from './builder';
import { prepareRdap } from './rdap';
import { startRole } from './roles';
import { prepareConsumer } from './consumerSetup';
import { StartupError, Stoppers, type Out, type Role, type StartArgs } from './startup';

export { ROLES, StartupError, type Role, type StartArgs } from './startup';

export interface RunningService {
  stop(): Promise<void>;
  gatewayUrl: string | null;
  providerUrls: ProviderUrls;
  rdap: RdapClientOptions | null;
}

/** The configuration with development's generated admin token and secrets filled in. */
async function configWithSecrets(env: NodeJS.ProcessEnv, out: Out): Promise<Config> {
  const config = loadConfig(env);
  if (config.isProduction) return config;
  const local = await prepareLocalSecrets(config);
  if (local.adminTokenFile) {
    out(
      `admin token     ${local.adminTokenFile}${local.generatedAdminToken ? ' (generated now; mode 0600)' : ''}`,
    );
  }
  return local.config;
}

/**
 * The outside peers a process talks to: the RDAP registry, the escalation channels, the merchants;
 * and the consumer purchase path that buys from them.
 */
async function preparePeers(
  config: Config,
  role: Role,
  chains: PreparedChains,
  stoppers: Stoppers,
  out: Out,
) {
  const { devnet } = chains;
  // Where domain lookups go: RDAP_BOOTSTRAP_URL, or on the embedded devnet its local registry.
  const rdap = await prepareRdap({
    config: config.rdap,
    standIn: config.devnet && role === 'all',
    out,
  });
  stoppers.push('RDAP registry', () => rdap.stop());
  const builder = prepareBuilder({
    config: config.builder,
    devnetRegistry: config.rdap.bootstrapSource === null && rdap.client !== null,
    out,
  });
  // Escalation channels: the worker sends through them, the gateway verifies what comes back.
  const channels =
    role === 'all' || role === 'gateway' || role === 'worker'
      ? await prepareEscalationChannels({
          config: config.escalations,
          publicUrl: config.publicUrl,
          standIns: config.devnet && role === 'all',
          out,
        })
      : null;
  if (channels !== null) stoppers.push('escalation channels', () => channels.stop());
  // The devnet merchant runs where the devnet chains run: in the all-in-one process.
  const providers = await prepareProviders({
    urls: config.providerUrls,
    devnetSettlement:
      config.devnet && role === 'all' && devnet !== null ? devnet.chains.settlement : null,
    dataDir: config.dataDir,
    out,
  });
  stoppers.push('providers', () => providers.stop());
  // One RDAP client per process: delivery checks and the builder's domain checks share its limits.
  const rdapClient = rdap.client === null ? undefined : createRdapClient(rdap.client);
  const consumer = prepareConsumer({
    config,
    role,
    devnet,
    devnetKeys: chains.devnetKeys,
    providerUrls: providers.urls,
    rdap: rdapClient,
    out,
  });
  return { rdap, rdapClient, builder, channels, providers, consumer };
}

/** The two secrets every role signs with; a startup error when either is missing. */
function requiredSecrets(config: Config): { actorSecret: Buffer; sessionSecret: Buffer } {
  const { internalActorSecret: actorSecret, sessionSecret } = config.secrets;
  if (!actorSecret) throw new StartupError('INTERNAL_ACTOR_SECRET is not set');
  if (!sessionSecret) throw new StartupError('SESSION_SECRET is not set');
  return { actorSecret, sessionSecret };
}

/** Starts what the role needs; resolves once everything listens. Returns a function that stops it all. */
export async function start(
  args: StartArgs,
  env: NodeJS.ProcessEnv = process.env,
  out: Out = (line) => process.stdout.write(`${line}\n`),
): Promise<RunningService> {
  const config = await configWithSecrets(env, out);
  const log: Logger = createLogger({ level: config.logLevel });
  const { actorSecret, sessionSecret } = requiredSecrets(config);

  const stoppers = new Stoppers(log);
  try {
    const { role } = args;
    const { databaseUrl, pool, dataSource } = await prepareDatabase(config, role, stoppers, out);
    const chains = await prepareChains(config, role, stoppers, out);
    const { devnet, devnetKeys, subgraphChains } = chains;
    const peers = await preparePeers(config, role, chains, stoppers, out);
    const { rdap, rdapClient, builder, channels, providers, consumer } = peers;
    const gatewayOptions = gatewayOptionsOf({
      config,
      role,
      pool,
      databaseUrl,
      actorSecret,
      sessionSecret,
      devnet,
      devnetKeys,
      channels,
      log,
      out,
    });
    const gatewayUrl = await startRole({
      args,
      config,
      pool,
      dataSource,
      databaseUrl,
      chains: subgraphChains,
      consumer: consumer.rails,
      rdap: rdapClient,
      builder,
      ...(consumer.execution !== undefined ? { consumerExecution: consumer.execution } : {}),
      anchoring: anchoringOf(config, devnet, devnetKeys),
      channels,
      gatewayOptions,
      log,
      stoppers,
      out,
    });
    if (gatewayUrl) await announceGateway(gatewayUrl, config, channels, gatewayOptions, log, out);
    out(`ready           role ${role}; Ctrl-C stops everything`);
    return {
      stop: () => stoppers.stopAll(),
      gatewayUrl,
      providerUrls: providers.urls,
      rdap: rdap.client,
    };
  } catch (error) {
    await stoppers.stopAll();
    throw error;
  }
}

/** Points the channels at the gateway and prints where it answers. */
async function announceGateway(
  gatewayUrl: string,
  config: Config,
  channels: EscalationChannels | null,
  gatewayOptions: GatewayRoleOptions,
  log: Logger,
  out: Out,
): Promise<void> {
  if (channels !== null) {
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
  out(`gateway         ${gatewayUrl}`);
  out(`GraphQL         ${gatewayUrl}/graphql (POST; websocket subscriptions on the same path)`);
  out(`REST            ${gatewayUrl}/catalog  ${gatewayUrl}/openapi.json`);
  if (gatewayOptions.x402) {
    const { payment } = gatewayOptions.service;
    out(
      `x402            ${payment.network} ${payment.asset} → ${payment.payTo} (${gatewayUrl}/.well-known/x402)`,
    );
  }
}
