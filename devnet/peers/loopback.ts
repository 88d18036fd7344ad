// Serves a stand-in on 127.0.0.1 only, and stops it completely: the listener closes and every
// open socket (idle keep-alive ones included) is cut, so tests leave no handles behind.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export const LOOPBACK_HOST = '127.0.0.1';

export interface LoopbackServer {
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

export async function serveOnLoopback(
  handler: http.RequestListener,
  port = 0,
): Promise<LoopbackServer> {
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new RangeError('port must be 0..65535');
  const server = http.createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, LOOPBACK_HOST, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  let stopped: Promise<void> | null = null;
  return {
    url: `http://${LOOPBACK_HOST}:${bound}`,
    port: bound,
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return stopped;
    },
  };
}
