// Starting to listen and stopping in order: a gateway stops taking payments' reconciliation first,
// then closes subscriptions, the LISTEN connection, GraphQL (draining HTTP) and the server, and
// the rate-limit store and the idempotency keys' pool last. Stopping twice is stopping once. Before
// all that the server drains (platform/probes.ts drainer): /readyz answers 503 for the drain delay
// while requests are still served.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export async function listen(
  httpServer: Server,
  host: string,
  port: number,
): Promise<{ url: string; port: number }> {
  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(port, host, () => {
      httpServer.off('error', reject);
      resolve();
    });
  });
  const bound = (httpServer.address() as AddressInfo).port;
  return { url: `http://${host}:${bound}`, port: bound };
}

/** The parts a running gateway holds, each stopped in this order. */
export interface GatewayParts {
  readonly reconciler: { stop(): Promise<void> } | null;
  readonly subscriptions: { close(): Promise<void> };
  readonly bridge: { stop(): Promise<void> } | null;
  readonly graphql: { stop(): Promise<void> };
  readonly httpServer: Server;
  readonly rateLimitStore: { close(): Promise<void> };
  readonly idempotency: { close(): Promise<void> } | null;
}

export function stopInOrder(parts: GatewayParts): () => Promise<void> {
  let stopped = false;
  return async () => {
    if (stopped) return;
    stopped = true;
    await parts.reconciler?.stop();
    await parts.subscriptions.close();
    await parts.bridge?.stop();
    await parts.graphql.stop();
    if (parts.httpServer.listening)
      await new Promise<void>((resolve) => parts.httpServer.close(() => resolve()));
    await parts.rateLimitStore.close();
    await parts.idempotency?.close();
  };
}
