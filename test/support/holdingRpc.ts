// A JSON-RPC proxy on 127.0.0.1 in front of a devnet chain that can hold transactions on their way
// to the node: while `holdSends` is on, a request carrying `eth_sendRawTransaction` is kept (not
// forwarded, not answered) and shown to the test with its signed transaction. The test then lets
// it go on (`release`: forwarded, answered as the node answers) or `drop`s it: the node never sees
// it, exactly a sender that died before its transaction left. Every other request passes through.
import { createServer, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Hex, keccak256 } from 'viem';
import { readBody } from './lossyRpc';

export interface HeldSend {
  /** The signed transaction the request carries, and its hash. */
  readonly serialized: Hex;
  readonly txHash: Hex;
}

export interface HoldingRpc {
  readonly url: string;
  /** From now on keep every send (true) or forward it (false; sends already held stay held). */
  holdSends(on: boolean): void;
  /** The transactions held now, oldest first, once each (a sender's retry is held beside the first). */
  held(): readonly HeldSend[];
  /** Forwards every held send of `txHash` to the node and answers each with the node's answer. */
  release(txHash: Hex): Promise<void>;
  /** Forgets every held send: never forwarded, its sender's connection closed. */
  drop(): void;
  close(): Promise<void>;
}

interface Pending extends HeldSend {
  readonly body: string;
  readonly response: ServerResponse;
}

/** The signed transaction of a single `eth_sendRawTransaction` request; null for anything else. */
function sentTransaction(body: string): Hex | null {
  const parsed = JSON.parse(body) as { method?: string; params?: unknown[] } | unknown[];
  if (Array.isArray(parsed) || parsed.method !== 'eth_sendRawTransaction') return null;
  const serialized = parsed.params?.[0];
  return typeof serialized === 'string' ? (serialized as Hex) : null;
}

async function forward(target: string, body: string, response: ServerResponse): Promise<void> {
  const upstream = await fetch(target, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  const answer = await upstream.text();
  response.writeHead(upstream.status, { 'content-type': 'application/json' }).end(answer);
}

export async function startHoldingRpc(target: string): Promise<HoldingRpc> {
  let holding = false;
  let pending: Pending[] = [];
  const server: Server = createServer((request, response) => {
    void (async () => {
      const body = await readBody(request);
      const serialized = holding ? sentTransaction(body) : null;
      if (serialized) {
        pending.push({ serialized, txHash: keccak256(serialized), body, response });
        return;
      }
      await forward(target, body, response);
    })().catch((error: Error) => {
      if (!response.headersSent)
        response.writeHead(500, { 'content-type': 'text/plain' }).end(error.message);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    holdSends(on) {
      holding = on;
    },
    held: () => {
      const once = new Map(
        pending.map(({ serialized, txHash }) => [txHash, { serialized, txHash }]),
      );
      return [...once.values()];
    },
    async release(txHash) {
      const sends = pending.filter((held) => held.txHash === txHash);
      if (sends.length === 0) throw new Error(`no send ${txHash} is held`);
      pending = pending.filter((held) => held.txHash !== txHash);
      for (const send of sends) await forward(target, send.body, send.response);
    },
    drop() {
      for (const send of pending) send.response.destroy();
      pending = [];
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
