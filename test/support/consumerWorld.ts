// The world the purchase-path end-to-end tests run in: real anvil chains (eip155:196 and
// eip155:8453 with their EIP-3009 tokens), the real devnet domains merchant, optionally the devnet
// RDAP registry, and the service with x402 on the funding chain, the consumer rails and the
// execution worker (awake on NOTIFY unless a test steps its rounds by hand). One place builds it,
// so every suite buys through the same assembly.
import { type DevnetChains, startDevnetChains } from '../../devnet/chains';
import { devnetConsumerRails } from '../../devnet/consumerRails';
import type { DomainsMerchant } from '../../devnet/merchants/domains/server';
import { startDevnetDomainsMerchant } from '../../devnet/merchants/domains/start';
import { type DevnetRdapRegistry, startDevnetRdapRegistry } from '../../devnet/rdap/registry';
import type { ConsumerExecutionOptions } from '../../cli/consumerWorker';
import { type ChainPublicClient, createChainPublicClient } from '../../platform/chain/clients';
import { createRdapClient, type RdapClient } from '../../platform/rdap';
import type { ConsumerRails } from '../../subgraphs/kit';
import { startTestStack, type TestStack, type TestStackOptions } from './stack';

export interface ConsumerWorld {
  readonly devnet: DevnetChains;
  readonly merchant: DomainsMerchant;
  /** The devnet RDAP registry; null when the world runs without delivery checks. */
  readonly registry: DevnetRdapRegistry | null;
  readonly rails: ConsumerRails;
  readonly stack: TestStack;
  readonly fundingChain: ChainPublicClient;
  readonly settlementChain: ChainPublicClient;
  stop(): Promise<void>;
}

export interface ConsumerWorldOptions {
  /** Run the devnet RDAP registry and give the worker a client on it; default false. */
  readonly rdap?: boolean;
  /** Worker settings beyond the keys (interval 0 by default: awake on NOTIFY only). */
  readonly execution?: Partial<Omit<ConsumerExecutionOptions, 'treasuryKey' | 'relayerKey'>>;
  /** Further test-stack options (clock, escalation worker, channels…). */
  readonly stack?: Partial<TestStackOptions>;
  /**
   * An anchoring worker on the devnet's ReceiptAnchor with the anchorWriter key, rounds stepped by
   * hand (`stack.stack.anchoring.runOnce()`); absent: none.
   */
  readonly anchoring?: { readonly batchSize?: number; readonly batchSeconds?: number };
  /** The rails as the service and the buyers' clients see them (e.g. behind an RPC proxy); default: as built. */
  readonly rails?: (rails: ConsumerRails) => ConsumerRails | Promise<ConsumerRails>;
  /** The RPC x402 settles through, asked once the rails are built; default: the funding chain's. */
  readonly x402Rpc?: () => string;
  /** x402 settle timeout, lease and reconciler timer; default the test stack's. */
  readonly x402Timing?: {
    readonly settleTimeoutMs?: number;
    readonly leaseMs?: number;
    readonly reconcileIntervalMs?: number;
  };
  /** The worker's RDAP client on the registry's bootstrap URL; default 2 s lookups. */
  readonly rdapClient?: (bootstrapUrl: string) => RdapClient;
}

export async function startConsumerWorld(
  options: ConsumerWorldOptions = {},
): Promise<ConsumerWorld> {
  const devnet = await startDevnetChains({ dataDir: null });
  const started: Array<{ stop(): Promise<void> }> = [devnet];
  const stopAll = async () => {
    for (const part of started.reverse()) await part.stop();
  };
  try {
    const merchant = await startDevnetDomainsMerchant({
      settlement: devnet.info.chains.settlement,
      dataDir: null,
    });
    started.push(merchant);
    const registry = options.rdap ? await startDevnetRdapRegistry() : null;
    if (registry !== null) started.push(registry);
    const built = devnetConsumerRails(devnet.info, { 'spendctl-domains': merchant.url });
    const rails = options.rails ? await options.rails(built) : built;
    const funding = devnet.info.chains.funding;
    const stack = await startTestStack({
      x402: { devnet, rpcUrl: options.x402Rpc?.(), ...options.x402Timing },
      ...(options.anchoring !== undefined
        ? {
            anchoring: {
              worker: {
                chain: { chainId: funding.chainId, rpcUrl: funding.rpcUrl },
                contract: devnet.info.contracts.receiptAnchor!,
                writer: devnet.keys.anchorWriter.account,
                intervalMs: 0,
                ...options.anchoring,
              },
            },
          }
        : {}),
      ...options.stack,
      consumer: {
        rails,
        execution: {
          treasuryKey: devnet.keys.treasury,
          relayerKey: devnet.keys.relayer,
          intervalMs: 0,
          ...(registry !== null
            ? {
                rdap:
                  options.rdapClient?.(registry.bootstrapUrl) ??
                  createRdapClient({
                    addressPolicy: 'development',
                    bootstrapSource: registry.bootstrapUrl,
                    lookupTimeoutMs: 2_000,
                  }),
              }
            : {}),
          ...options.execution,
        },
      },
    });
    started.push(stack);
    return {
      devnet,
      merchant,
      registry,
      rails,
      stack,
      fundingChain: createChainPublicClient(devnet.info.chains.funding, { pollingIntervalMs: 20 }),
      settlementChain: createChainPublicClient(devnet.info.chains.settlement, {
        pollingIntervalMs: 20,
      }),
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
