// A JSON-RPC proxy on 127.0.0.1 in front of a devnet chain that can lose answers: every request is
// forwarded to the chain as it is, but while `loseSends` is armed, the answer to a request carrying
// `eth_sendRawTransaction` is replaced by a 502 after the chain has taken the transaction. This is
// the lost answer of a real RPC (a gateway timeout or 5xx in front of a node that accepted it).
// While `dropSends` is armed, such a request is answered 502 without reaching the chain: the lost
// request of a real RPC (a load balancer failing before the node), indistinguishable to the sender.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LossyRpc {
  readonly url: string;
  /** Lose the answers of the next `count` sends (each one still reaches the chain). */
  loseSends(count: number): void;
  /** Answer the next `count` sends 502 without forwarding them (none reaches the chain). */
  dropSends(count: number): void;
  /** How many sends were dropped so far. */
  readonly dropped: number;
  /** How many send answers were lost so far. */
  readonly lost: number;
  close(): Promise<void>;
}

/** The whole body of an HTTP request, as text. */
export function readBody(request: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

export async function startLossyRpc(target: string): Promise<LossyRpc> {
  let toLose = 0;
  let lost = 0;
  let toDrop = 0;
  let dropped = 0;
  const server: Server = createServer((request, response) => {
    void (async () => {
      const body = await readBody(request);
      if (toDrop > 0 && body.includes('"eth_sendRawTransaction"')) {
        toDrop -= 1;
        dropped += 1;
        response.writeHead(502, { 'content-type': 'text/plain' }).end('bad gateway');
        return;
      }
      const upstream = await fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      const answer = await upstream.text();
      if (toLose > 0 && body.includes('"eth_sendRawTransaction"')) {
        toLose -= 1;
        lost += 1;
        response.writeHead(502, { 'content-type': 'text/plain' }).end('bad gateway');
        return;
      }
      response.writeHead(upstream.status, { 'content-type': 'application/json' }).end(answer);
    })().catch((error: Error) => {
      response.writeHead(500, { 'content-type': 'text/plain' }).end(error.message);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    loseSends(count) {
      toLose = count;
    },
    get lost() {
      return lost;
    },
    dropSends(count) {
      toDrop = count;
    },
    get dropped() {
      return dropped;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
