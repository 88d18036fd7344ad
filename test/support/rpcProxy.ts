// A JSON-RPC proxy on 127.0.0.1 in front of an anvil node, as tests need to see what the service
// asks a chain: it counts every request by method, and refuses an eth_getLogs whose block range
// is longer than `maxLogBlocks` the way hosted RPCs do (a JSON-RPC error naming the limit), with
// `latest` and other tags resolved against the node first.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

interface RpcRequest {
  readonly id: unknown;
  readonly method: string;
  readonly params?: unknown[];
}

export interface RpcProxy {
  readonly url: string;
  /** Requests seen so far, by method (a batch counts each of its requests). */
  readonly calls: Map<string, number>;
  /** All requests seen so far. */
  total(): number;
  /** eth_getLogs requests refused for their range. */
  readonly refused: number;
  stop(): Promise<void>;
}

async function forward(upstream: string, body: unknown): Promise<any> {
  const answer = await fetch(upstream, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return answer.json();
}

async function blockNumberOf(upstream: string, tag: unknown): Promise<bigint> {
  if (typeof tag === 'string' && /^0x[0-9a-f]+$/i.test(tag)) return BigInt(tag);
  const head = await forward(upstream, { jsonrpc: '2.0', id: 0, method: 'eth_blockNumber' });
  return tag === 'earliest' ? 0n : BigInt(head.result as string);
}

export async function startRpcProxy(
  upstream: string,
  options: { readonly maxLogBlocks?: bigint } = {},
): Promise<RpcProxy> {
  const calls = new Map<string, number>();
  const state = { refused: 0 };

  async function answer(request: RpcRequest): Promise<unknown> {
    calls.set(request.method, (calls.get(request.method) ?? 0) + 1);
    if (request.method === 'eth_getLogs' && options.maxLogBlocks !== undefined) {
      const filter = (request.params?.[0] ?? {}) as {
        fromBlock?: unknown;
        toBlock?: unknown;
        blockHash?: unknown;
      };
      if (filter.blockHash === undefined) {
        const from = await blockNumberOf(upstream, filter.fromBlock ?? 'latest');
        const to = await blockNumberOf(upstream, filter.toBlock ?? 'latest');
        if (to - from + 1n > options.maxLogBlocks) {
          state.refused += 1;
          return {
            jsonrpc: '2.0',
            id: request.id,
            error: {
              code: -32005,
              message: `block range too large: at most ${options.maxLogBlocks} blocks per eth_getLogs`,
            },
          };
        }
      }
    }
    return forward(upstream, request);
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as
            RpcRequest | RpcRequest[];
          const result = Array.isArray(body)
            ? await Promise.all(body.map(answer))
            : await answer(body);
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(result));
        } catch (error) {
          res.writeHead(502, { 'content-type': 'text/plain' });
          res.end(String(error));
        }
      })();
    });
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    total: () => [...calls.values()].reduce((a, b) => a + b, 0),
    get refused() {
      return state.refused;
    },
    stop: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
