// The gateway's options from the configuration and what start prepared: the service card, x402 on
// the paid routes (the settlement rail and the relayer key that pays its gas), limits, secrets and
// the escalation channels' inbound checks. Subgraph roles read their settings from the same object.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Pool } from 'pg';
import type { Config } from '../platform/config';
import { devnetRelayer, type KeyStore } from '../platform/chain/keys';
import type { Logger } from '../platform/log';
import { projectRoot } from '../platform/paths';
import { DEVNET_POLLING_INTERVAL_MS, type DevnetInfo } from '../devnet/chains';
import type { X402GatewayOptions } from '../gateway/server';
import type { RestServiceInfo } from '../gateway/rest/types';
import { createSettlementRail } from '../gateway/x402/rail';
import type { EscalationChannels } from './channels';
import type { GatewayStackOptions } from './stack';
import { StartupError, type Out, type Role } from './startup';

/** Everything the gateway needs except where the subgraphs are. */
export type GatewayRoleOptions = Omit<GatewayStackOptions, 'subgraphs'> & {
  readonly primaryChainId: number;
  readonly service: RestServiceInfo;
  readonly x402: X402GatewayOptions | null;
};

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(path.join(projectRoot(), 'package.json'), 'utf8')) as {
    version: string;
  };
  return pkg.version;
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
      // As the consumer rails register the same asset: one symbol and decimals per token.
      assetSymbol: devnet?.chains.funding.token.symbol ?? config.funding.tokenSymbol,
      assetDecimals: devnet?.chains.funding.token.decimals ?? config.funding.tokenDecimals,
      assetName: config.funding.tokenName,
      assetVersion: config.funding.tokenVersion,
      payTo: config.feeReceiverAddress ?? devnet?.addresses.feeReceiver ?? null,
    },
    agentRegistrations: [],
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
    config.secrets.relayerPrivateKey ??
    (devnetKeys && devnetRelayer(devnetKeys, config.devnetRelayerSlot).exportPrivateKey());
  if (!rpcUrl || !token || !relayerPrivateKey) return null;
  const rail = createSettlementRail({
    chainId: devnet?.chains.funding.chainId ?? config.funding.chainId,
    rpcUrl,
    token,
    relayerPrivateKey,
    confirmationTimeoutMs: config.x402.settleTimeoutMs,
    logPageBlocks: BigInt(config.chainReads.logPageBlocks),
    ...(devnet ? { pollingIntervalMs: DEVNET_POLLING_INTERVAL_MS } : {}),
    ...groupSettlementOf(config, devnet),
  });
  return {
    rail,
    db,
    leaseMs: config.x402.leaseMs,
    reconcileIntervalMs: config.x402.reconcileIntervalMs,
    // offer-receipt: signed by the fee receiver's key where the service holds it (the devnet's).
    receiptSigner: devnetKeys?.feeReceiver.typedDataSigner() ?? null,
  };
}

/**
 * Group settlement (docs/x402.md#group-settlement): on where a GroupSettlement contract is known
 * (X402_GROUP_SETTLEMENT_ADDRESS, else the devnet's) unless X402_GROUP_SETTLEMENT=false.
 */
function groupSettlementOf(config: Config, devnet: DevnetInfo | null) {
  const { group } = config.x402;
  const contract = group.contract ?? devnet?.chains.funding.groupSettlement ?? null;
  if (!group.enabled || contract === null) return {};
  return {
    group: {
      contract,
      maxSize: group.maxSize,
      maxWaitMs: group.maxWaitMs,
      overlapAfterMs: group.overlapAfterMs,
    },
  };
}

export interface GatewayInputs {
  readonly config: Config;
  readonly role: Role;
  readonly pool: Pool;
  readonly databaseUrl: string;
  /** INTERNAL_ACTOR_SECRET and SESSION_SECRET, known to be set by now. */
  readonly actorSecret: Buffer;
  readonly sessionSecret: Buffer;
  readonly devnet: DevnetInfo | null;
  readonly devnetKeys: KeyStore | null;
  readonly channels: EscalationChannels | null;
  readonly log: Logger;
  readonly out: Out;
}

/** Refuses a gateway without x402 in production; elsewhere says that paid routes are free. */
export function gatewayOptionsOf(inputs: GatewayInputs): GatewayRoleOptions {
  const { config, role, pool, databaseUrl, devnet } = inputs;
  const servesGateway = role === 'all' || role === 'gateway';
  const options: GatewayRoleOptions = {
    host: config.host,
    port: config.port,
    actorSecret: inputs.actorSecret,
    adminTokenHashes: config.secrets.adminTokenHashes,
    sessionSecret: inputs.sessionSecret,
    consumerAuthRequired: config.http.consumerAuthRequired,
    primaryChainId: config.funding.chainId,
    // LISTEN needs a session of its own: behind a pooler in transaction mode it goes direct.
    listenDatabaseUrl: config.databaseListenUrl ?? databaseUrl,
    readinessCheck: async () => {
      await pool.query('SELECT 1');
    },
    graphql: config.graphql,
    subscriptions: config.subscriptions,
    bodyLimitBytes: config.http.bodyLimitBytes,
    rateLimit: { limits: config.rateLimit, store: config.rateLimit.store, databaseUrl },
    trustProxy: config.http.trustProxy,
    drainDelayMs: config.http.drainDelayMs,
    service: serviceInfo(config, devnet),
    log: inputs.log,
    x402: servesGateway ? x402Options(config, devnet, inputs.devnetKeys, pool) : null,
    channelInbound: inputs.channels?.inbound,
  };
  if (options.x402 === null && servesGateway) {
    if (config.isProduction)
      throw new StartupError(
        'x402 needs FUNDING_RPC_URL, FUNDING_TOKEN_ADDRESS and RELAYER_PRIVATE_KEY in production',
      );
    inputs.out(
      'x402            OFF: no funding chain configured, paid routes are served without payment',
    );
  }
  return options;
}
