// The JSON-RPC fetch against a real HTTP server on 127.0.0.1: what viem reads of a response, its
// batching and errors through it, and a timeout that aborts the request.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPublicClient, http as httpTransport, HttpRequestError, TimeoutError } from 'viem';
import { rpcFetch } from './rpcFetch';

interface Seen {
  method: string;
  contentType: string | undefined;
  body: unknown;
}

let server: http.Server;
let url: string;
const seen: Seen[] = [];
/** How the server answers the next request; default: JSON-RPC results. */
let answer: (body: unknown, response: http.ServerResponse) => void;

function jsonRpcResults(body: unknown, response: http.ServerResponse): void {
  const one = (call: { id: number; method: string }) => ({
    jsonrpc: '2.0',
    id: call.id,
    result: call.method === 'eth_chainId' ? '0xc4' : '0x10',
  });
  const reply = Array.isArray(body) ? body.map(one) : one(body as { id: number; method: string });
  response.writeHead(200, { 'Content-Type': 'application/json' });
  response.end(JSON.stringify(reply));
}

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      seen.push({ method: request.method!, contentType: request.headers['content-type'], body });
      answer(body, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/rpc`;
});

beforeEach(() => {
  seen.length = 0;
  answer = jsonRpcResults;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

test('answers what viem reads of a Response: ok, status, headers by any case, the text', async () => {
  const response = await rpcFetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'eth_blockNumber' }),
  });
  expect(response.ok).toBe(true);
  expect(response.status).toBe(200);
  expect(response.statusText).toBe('OK');
  expect(response.headers.get('Content-Type')).toBe('application/json');
  expect(response.headers.get('content-type')).toBe('application/json');
  expect(response.headers.get('X-Absent')).toBeNull();
  expect(response.body).toBeNull();
  expect(JSON.parse(await response.text())).toEqual({ jsonrpc: '2.0', id: 7, result: '0x10' });
  expect(seen).toEqual([
    {
      method: 'POST',
      contentType: 'application/json',
      body: { jsonrpc: '2.0', id: 7, method: 'eth_blockNumber' },
    },
  ]);
});

test("viem's batching goes through it: two reads in one turn are one HTTP request", async () => {
  const client = createPublicClient({
    transport: httpTransport(url, { fetchFn: rpcFetch, batch: { wait: 0 }, retryCount: 0 }),
  });
  const [chainId, block] = await Promise.all([client.getChainId(), client.getBlockNumber()]);
  expect(chainId).toBe(196);
  expect(block).toBe(16n);
  expect(seen).toHaveLength(1);
  expect(seen[0]!.body).toEqual([
    expect.objectContaining({ method: 'eth_chainId' }),
    expect.objectContaining({ method: 'eth_blockNumber' }),
  ]);
});

test('a node that answers 502 with text: viem raises its HttpRequestError with the status', async () => {
  answer = (_body, response) => {
    response.writeHead(502, { 'Content-Type': 'text/plain' });
    response.end('upstream down');
  };
  const client = createPublicClient({
    transport: httpTransport(url, { fetchFn: rpcFetch, retryCount: 0 }),
  });
  const error = await client.getBlockNumber().catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(HttpRequestError);
  expect((error as HttpRequestError).status).toBe(502);
  expect((error as HttpRequestError).details).toContain('upstream down');
});

test("viem's timeout aborts the request through the signal; the next request is answered", async () => {
  let held: http.ServerResponse | null = null;
  answer = (_body, response) => (held = response);
  const client = createPublicClient({
    transport: httpTransport(url, { fetchFn: rpcFetch, timeout: 200, retryCount: 0 }),
  });
  await expect(client.getBlockNumber()).rejects.toBeInstanceOf(TimeoutError);
  expect(held).not.toBeNull();
  answer = jsonRpcResults;
  await expect(client.getBlockNumber()).resolves.toBe(16n);
});

test('an already aborted signal sends nothing', async () => {
  const controller = new AbortController();
  controller.abort(new Error('gave up'));
  await expect(
    rpcFetch(url, { method: 'POST', body: '{}', signal: controller.signal }),
  ).rejects.toThrow('gave up');
  expect(seen).toHaveLength(0);
});
