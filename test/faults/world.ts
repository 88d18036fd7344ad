// The world every fault test runs in: real anvil chains reached by the service through TCP proxies
// a test can cut, the devnet domains merchant, the devnet RDAP registry, an owner's webhook
// receiver (the channel escalation notices go to), and the whole service with x402 on the funding
// chain, the consumer execution worker on its interval (and NOTIFY wake-up), the escalation worker
// on its interval, and the x402 reconciler on its timer — every background loop running as
// `npm start` runs it, only faster. Optionally on a PostgreSQL server of the test's own (which it
// may stop and start again). The buyers' clients and the merchant reach the chains directly: only
// the service's own path to a chain is ever cut.
import { createChannelAdapters } from '../../channels';
import { startWebhookReceiver, type WebhookReceiver } from '../../devnet/peers/webhookReceiver';
import { createLogger } from '../../platform/log';
import { createRdapClient } from '../../platform/rdap';
import { startConsumerWorld, type ConsumerWorld } from '../support/consumerWorld';
import { hostPortOf, startTcpProxy, type TcpProxy } from '../support/tcpProxy';

export interface FaultWorld extends ConsumerWorld {
  /** The service's path to each chain (x402 settlement, purchases, refunds, chain truth). */
  readonly rpc: { readonly funding: TcpProxy; readonly settlement: TcpProxy };
  /** The owners' webhook channel: escalation notices are POSTed here. */
  readonly receiver: WebhookReceiver;
}

export interface FaultWorldOptions {
  /** Superuser URL of the PostgreSQL server the test database lives on; default DATABASE_URL's. */
  readonly databaseServer?: string;
}

/** Worker pauses: short, so a test sees recovery in seconds; the loops are the production ones. */
export const WORKER_INTERVAL_MS = 200;

export async function startFaultWorld(options: FaultWorldOptions = {}): Promise<FaultWorld> {
  const receiver = await startWebhookReceiver();
  const proxies: TcpProxy[] = [];
  let rpc: FaultWorld['rpc'] | null = null;
  try {
    const world = await startConsumerWorld({
      rdap: true,
      rails: async (rails) => {
        const funding = await startTcpProxy(hostPortOf(rails.funding.rpcUrl));
        proxies.push(funding);
        const settlement = await startTcpProxy(hostPortOf(rails.settlement.rpcUrl));
        proxies.push(settlement);
        rpc = { funding, settlement };
        return {
          ...rails,
          funding: { ...rails.funding, rpcUrl: funding.url },
          settlement: { ...rails.settlement, rpcUrl: settlement.url },
        };
      },
      execution: {
        intervalMs: WORKER_INTERVAL_MS,
        requestTimeoutMs: 5_000,
        deliveryRetry: { maxAttempts: 20, backoffMs: [500, 1_000, 2_000] },
      },
      stack: {
        databaseServer: options.databaseServer,
        // FAULT_LOG=warn (or info…) shows the service's own log lines while a case runs.
        ...(process.env.FAULT_LOG ? { log: createLogger({ level: process.env.FAULT_LOG }) } : {}),
        escalationWorker: {
          adapters: createChannelAdapters({}),
          dashboardBaseUrl: 'http://127.0.0.1/dashboard',
          intervalMs: WORKER_INTERVAL_MS,
          webhookRetryScheduleMs: [200, 500, 1_000, 2_000],
        },
      },
      x402Rpc: () => rpc!.funding.url,
      // A settlement waits longer than the faults last (the production default is 30 s), so a group
      // whose send lost its answer in an outage is handed to the node again when it answers.
      x402Timing: { settleTimeoutMs: 12_000, leaseMs: 15_000, reconcileIntervalMs: 500 },
      rdapClient: (bootstrapUrl) =>
        createRdapClient({
          addressPolicy: 'development',
          bootstrapSource: bootstrapUrl,
          lookupTimeoutMs: 1_000,
          transportRetries: 0,
        }),
    });
    return {
      ...world,
      rpc: rpc!,
      receiver,
      async stop() {
        await world.stop();
        for (const proxy of proxies) await proxy.stop();
        await receiver.stop();
      },
    };
  } catch (error) {
    for (const proxy of proxies) await proxy.stop();
    await receiver.stop();
    throw error;
  }
}
