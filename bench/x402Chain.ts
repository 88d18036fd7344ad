// What the x402 bench reads around each phase besides time: the JSON-RPC requests this process
// sent to the funding chain (counted by method as undici announces them), the relayer's
// transactions and their gas (from the chain: its nonce before and after, the receipts of the
// blocks in between), and the CPU of anvil and of the phase's PostgreSQL backends.
import diagnostics from 'node:diagnostics_channel';
import type { Pool } from 'pg';
import type { Address, Hex, TransactionReceipt } from 'viem';
import type { ChainPublicClient } from '../platform/chain/clients';
import { processCpuMs } from './cpuTime';

/** The key under which countRpcRequests counts HTTP requests, beside the JSON-RPC methods. */
export const HTTP_REQUESTS = '(http)';

interface CreatedRequest {
  readonly origin?: string | URL;
  readonly path?: string;
  readonly body?: unknown;
}

/**
 * JSON-RPC requests to `rpcUrl` sent by this process from now on, by method: every HTTP request
 * of undici (the chain clients' dispatcher, platform/chain/rpcFetch.ts, and WHATWG fetch) is
 * announced on its `undici:request:create` diagnostics channel, body included.
 */
export function countRpcRequests(rpcUrl: string): () => Map<string, number> {
  const counts = new Map<string, number>();
  const target = new URL(rpcUrl);
  diagnostics.subscribe('undici:request:create', (message) => {
    const { request } = message as { request: CreatedRequest };
    if (String(request.origin ?? '').replace(/\/$/, '') !== target.origin) return;
    if (!String(request.path ?? '').startsWith(target.pathname)) return;
    const body =
      typeof request.body === 'string'
        ? request.body
        : Buffer.isBuffer(request.body)
          ? request.body.toString('utf8')
          : null;
    if (body === null) return;
    // HTTP requests apart from the JSON-RPC requests they carry (a batch carries several).
    counts.set(HTTP_REQUESTS, (counts.get(HTTP_REQUESTS) ?? 0) + 1);
    for (const match of body.matchAll(/"method":"([^"]+)"/g))
      counts.set(match[1], (counts.get(match[1]) ?? 0) + 1);
  });
  return () => new Map(counts);
}

/** `after` less `before`, per method. */
export function rpcBetween(
  before: Map<string, number>,
  after: Map<string, number>,
): Map<string, number> {
  const delta = new Map<string, number>();
  for (const [method, count] of after) {
    const grown = count - (before.get(method) ?? 0);
    if (grown > 0) delta.set(method, grown);
  }
  return delta;
}

export interface ChainMark {
  readonly nonce: number;
  readonly block: bigint;
}

export async function chainMark(client: ChainPublicClient, relayer: Address): Promise<ChainMark> {
  const [nonce, block] = await Promise.all([
    client.getTransactionCount({ address: relayer, blockTag: 'latest' }),
    client.getBlockNumber({ cacheTime: 0 }),
  ]);
  return { nonce, block };
}

/** The relayer's transactions mined after `before` up to `after` and the gas they used. */
export async function relayerSpend(
  client: ChainPublicClient,
  relayer: Address,
  before: ChainMark,
  after: ChainMark,
): Promise<{ transactions: number; gasUsed: bigint }> {
  let gasUsed = 0n;
  let transactions = 0;
  const blocks: bigint[] = [];
  for (let block = before.block + 1n; block <= after.block; block += 1n) blocks.push(block);
  for (let start = 0; start < blocks.length; start += 50) {
    const receipts = await Promise.all(
      blocks.slice(start, start + 50).map(
        (block) =>
          client.request({
            method: 'eth_getBlockReceipts' as never,
            params: [`0x${block.toString(16)}`] as never,
          }) as Promise<Array<Pick<TransactionReceipt, 'from'> & { gasUsed: Hex }>>,
      ),
    );
    for (const receipt of receipts.flat())
      if (receipt.from.toLowerCase() === relayer.toLowerCase()) {
        transactions += 1;
        gasUsed += BigInt(receipt.gasUsed);
      }
  }
  if (transactions !== after.nonce - before.nonce)
    throw new Error(
      `relayer nonce moved ${after.nonce - before.nonce} but ${transactions} of its receipts were found`,
    );
  return { transactions, gasUsed };
}

/** CPU ms of each PostgreSQL backend serving database `name` now, by pid (empty off Linux); compare with postgresCpuBetween. */
export async function databaseBackendsCpuMs(
  pool: Pool,
  name: string,
): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE datname = $1',
    [name],
  );
  const byPid = new Map<string, number>();
  for (const { pid } of rows) {
    const ms = processCpuMs(pid);
    if (ms !== null) byPid.set(String(pid), ms);
  }
  return byPid;
}
