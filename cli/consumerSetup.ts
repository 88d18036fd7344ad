// The consumer purchase path of a started process (docs/consumer.md): its rails (the two chains and
// tokens, the treasury, the merchants by catalog provider) and, where this process runs the
// execution worker (roles all and worker) and holds the keys, the worker's options. On the devnet
// both come from the devnet; otherwise from the configuration (FUNDING_* and SETTLEMENT_*,
// TREASURY_ADDRESS or TREASURY_PRIVATE_KEY, RELAYER_PRIVATE_KEY, PROVIDER_DOMAINS_URL), through the
// one rail builder both use (subgraphs/kit buildConsumerRails). A piece missing is a StartupError
// whose code names it (docs/operations.md "Consumer purchases on a deployment").
import type { Config } from '../platform/config';
import { devnetRelayer, RoleKey, type KeyStore } from '../platform/chain/keys';
import type { RdapClient } from '../platform/rdap';
import type { DevnetInfo } from '../devnet/chains';
import { devnetConsumerRails } from '../devnet/consumerRails';
import { buildConsumerRails, type ConsumerRails, type RailChain } from '../subgraphs/kit';
import { DEFAULT_EXECUTION_INTERVAL_MS, type ConsumerExecutionOptions } from './consumerWorker';
import type { ProviderUrls } from './providers';
import { StartupError, type Out, type Role } from './startup';

export interface ConsumerSetup {
  /** undefined: purchases unavailable in this process (create answers PROVIDER_UNAVAILABLE). */
  readonly rails: ConsumerRails | undefined;
  /** undefined: no execution worker in this process. */
  readonly execution: ConsumerExecutionOptions | undefined;
}

export interface ConsumerInputs {
  readonly config: Config;
  readonly role: Role;
  readonly devnet: DevnetInfo | null;
  /**
   * The devnet's keys where this process holds them: role all, which runs the devnet, and the
   * gateway and worker roles, which read its key file.
   */
  readonly devnetKeys: KeyStore | null;
  /** The merchants in effect (the devnet merchant filled in). */
  readonly providerUrls: ProviderUrls;
  /** The process's RDAP client: the worker checks deliveries with it. */
  readonly rdap: RdapClient | undefined;
  readonly out: Out;
}

const NONE: ConsumerSetup = { rails: undefined, execution: undefined };

export function prepareConsumer(inputs: ConsumerInputs): ConsumerSetup {
  // The gateway role reaches the rails through the intent subgraph, never directly.
  if (inputs.role === 'gateway') return NONE;
  const { config, out } = inputs;
  const domains = inputs.providerUrls.domains;
  if (domains === null) {
    out('consumer        purchases unavailable: no merchant (PROVIDER_DOMAINS_URL unset)');
    return NONE;
  }
  const providers = { 'spendctl-domains': domains };
  const built =
    inputs.devnet !== null
      ? devnetConsumerRails(inputs.devnet, providers)
      : buildConsumerRails({
          funding: configuredChain(config.funding, 'FUNDING'),
          settlement: configuredChain(config.settlement, 'SETTLEMENT'),
          treasury: configuredTreasury(config),
          providers,
        });
  const rails = withReadBounds(built, config.chainReads);
  out(
    `consumer        rails ${rails.funding.network} ${rails.funding.symbol} → ${rails.settlement.network} ${rails.settlement.symbol}, treasury ${rails.funding.treasury}`,
  );
  if (inputs.role !== 'all' && inputs.role !== 'worker') return { rails, execution: undefined };
  const keys = executionKeys(inputs);
  if (keys === null) {
    out(
      `consumer        no execution worker here: ${inputs.devnet !== null ? "this process does not hold the devnet's keys" : 'TREASURY_PRIVATE_KEY unset (a --role worker with it executes purchases)'}`,
    );
    return { rails, execution: undefined };
  }
  out(
    `consumer        execution worker every ${DEFAULT_EXECUTION_INTERVAL_MS} ms and on NOTIFY; deliveries ${inputs.rdap === undefined ? 'NOT checked here (no RDAP registry)' : 'checked against RDAP'}`,
  );
  return {
    rails,
    execution: {
      ...keys,
      intervalMs: DEFAULT_EXECUTION_INTERVAL_MS,
      // Deliveries are checked against the registry cli/rdap.ts found.
      ...(inputs.rdap === undefined ? {} : { rdap: inputs.rdap }),
    },
  };
}

/** CHAIN_LOG_PAGE_BLOCKS on both rails and RECONCILE_MAX_RPC_CALLS. */
function withReadBounds(rails: ConsumerRails, bounds: Config['chainReads']): ConsumerRails {
  const logPageBlocks = BigInt(bounds.logPageBlocks);
  return {
    ...rails,
    funding: { ...rails.funding, logPageBlocks },
    settlement: { ...rails.settlement, logPageBlocks },
    reportRpcCalls: bounds.reportRpcCalls,
  };
}

/** A configured chain with its token; loadConfig already refuses half of one, this says so again. */
function configuredChain(chain: Config['funding'], prefix: 'FUNDING' | 'SETTLEMENT'): RailChain {
  if (chain.rpcUrl === null || chain.tokenAddress === null)
    throw new StartupError(
      `consumer purchases (PROVIDER_DOMAINS_URL is set) need ${prefix}_RPC_URL and ${prefix}_TOKEN_ADDRESS`,
      'CONSUMER_RAIL_MISSING',
    );
  return {
    chainId: chain.chainId,
    rpcUrl: chain.rpcUrl,
    token: {
      address: chain.tokenAddress,
      decimals: chain.tokenDecimals,
      symbol: chain.tokenSymbol,
      name: chain.tokenName,
      version: chain.tokenVersion,
    },
  };
}

function configuredTreasury(config: Config): `0x${string}` {
  if (config.treasuryAddress === null)
    throw new StartupError(
      'consumer purchases (PROVIDER_DOMAINS_URL is set) are funded to and paid from the treasury: set TREASURY_ADDRESS (or TREASURY_PRIVATE_KEY where this process executes purchases)',
      'CONSUMER_TREASURY_MISSING',
    );
  return config.treasuryAddress;
}

type ExecutionKeys = Pick<ConsumerExecutionOptions, 'treasuryKey' | 'relayerKey'>;

/**
 * The worker's keys: the devnet's where this process holds them; else TREASURY_PRIVATE_KEY (pays
 * merchants, signs refunds) and RELAYER_PRIVATE_KEY (refund gas). null: no worker here, which only
 * role all without TREASURY_PRIVATE_KEY may be; the worker role needs both.
 */
function executionKeys(inputs: ConsumerInputs): ExecutionKeys | null {
  if (inputs.devnet !== null) {
    const keys = inputs.devnetKeys;
    if (keys === null) return null;
    return {
      treasuryKey: keys.treasury,
      relayerKey: devnetRelayer(keys, inputs.config.devnetRelayerSlot),
    };
  }
  const { treasuryPrivateKey, relayerPrivateKey, devKeyDenylist } = inputs.config.secrets;
  if (treasuryPrivateKey === null && inputs.role === 'all') return null;
  const missing = [
    treasuryPrivateKey === null ? 'TREASURY_PRIVATE_KEY' : null,
    relayerPrivateKey === null ? 'RELAYER_PRIVATE_KEY' : null,
  ].filter((name) => name !== null);
  if (treasuryPrivateKey === null || relayerPrivateKey === null)
    throw new StartupError(
      `the consumer execution worker (role ${inputs.role}, PROVIDER_DOMAINS_URL set) needs ${missing.join(' and ')}: the treasury key pays merchants and signs refunds, the relayer pays refund gas`,
      'CONSUMER_WORKER_KEYS_MISSING',
    );
  const policy = { extraDenied: devKeyDenylist };
  return {
    treasuryKey: RoleKey.fromPrivateKey('treasury', treasuryPrivateKey, policy),
    relayerKey: RoleKey.fromPrivateKey('relayer', relayerPrivateKey, policy),
  };
}
