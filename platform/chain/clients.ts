// viem clients for one network, built from `{chainId, rpcUrl}` only, so the same code talks to a
// local anvil and to the real X Layer or Base. Known chain ids reuse viem's chain objects (Base's
// OP-stack formatters) with the RPC URL replaced; any other id gets a plain EVM definition.
import {
  type Account,
  type Chain,
  type HttpTransport,
  type PublicClient,
  type TestClient,
  type WalletClient,
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
  http,
} from 'viem';
import { base, xLayer } from 'viem/chains';
import { rpcFetch } from './rpcFetch';

/** Every RPC call gives up after this long; a chain that slow is treated as down, not waited on. */
export const DEFAULT_RPC_TIMEOUT_MS = 10_000;
/** Retries cover dropped connections; re-sending the same signed transaction is idempotent. */
export const DEFAULT_RPC_RETRY_COUNT = 2;
const RPC_RETRY_DELAY_MS = 150;

export interface ChainEndpoint {
  readonly chainId: number;
  readonly rpcUrl: string;
}

export interface ClientOptions {
  readonly timeoutMs?: number;
  readonly retryCount?: number;
  /** How often to poll for receipts and blocks; absent: viem's default for the chain. */
  readonly pollingIntervalMs?: number;
  /**
   * Requests made in the same turn go to the node as one JSON-RPC batch (one HTTP request). For
   * reads only: a batch fails or succeeds as one HTTP request, which a send must never share.
   */
  readonly batch?: boolean;
}

export type ChainPublicClient = PublicClient<HttpTransport, Chain>;
export type ChainWalletClient = WalletClient<HttpTransport, Chain, Account>;
export type AnvilTestClient = TestClient<'anvil', HttpTransport, Chain>;

const KNOWN_CHAINS: ReadonlyMap<number, Chain> = new Map<number, Chain>([
  [xLayer.id, xLayer],
  [base.id, base],
]);

/** The CAIP-2 id used on the wire (x402 `network`, receipts): `eip155:<chainId>`. */
export function caip2Of(chainId: number): `eip155:${number}` {
  return `eip155:${chainId}`;
}

export function chainFor(endpoint: ChainEndpoint): Chain {
  const rpcUrls = { default: { http: [endpoint.rpcUrl] } } as const;
  const known = KNOWN_CHAINS.get(endpoint.chainId);
  if (known) return { ...known, rpcUrls };
  return defineChain({
    id: endpoint.chainId,
    name: caip2Of(endpoint.chainId),
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls,
  });
}

// Every client's requests go through the process's one keep-alive dispatcher (rpcFetch.ts), which
// pools connections per origin as WHATWG fetch does, without its per-request objects.
function transportFor(endpoint: ChainEndpoint, options: ClientOptions): HttpTransport {
  return http(endpoint.rpcUrl, {
    fetchFn: rpcFetch,
    timeout: options.timeoutMs ?? DEFAULT_RPC_TIMEOUT_MS,
    retryCount: options.retryCount ?? DEFAULT_RPC_RETRY_COUNT,
    retryDelay: RPC_RETRY_DELAY_MS,
    ...(options.batch ? { batch: { wait: 0 } } : {}),
  });
}

export function createChainPublicClient(
  endpoint: ChainEndpoint,
  options: ClientOptions = {},
): ChainPublicClient {
  return createPublicClient({
    chain: chainFor(endpoint),
    transport: transportFor(endpoint, options),
    ...(options.pollingIntervalMs !== undefined
      ? { pollingInterval: options.pollingIntervalMs }
      : {}),
  });
}

/** A wallet client that signs locally with `account` and sends raw transactions. */
export function createChainWalletClient(
  endpoint: ChainEndpoint,
  account: Account,
  options: ClientOptions = {},
): ChainWalletClient {
  return createWalletClient({
    account,
    chain: chainFor(endpoint),
    transport: transportFor(endpoint, options),
    ...(options.pollingIntervalMs !== undefined
      ? { pollingInterval: options.pollingIntervalMs }
      : {}),
  });
}

/** anvil_* cheat codes (setBalance, time travel); only meaningful against a local anvil. */
export function createAnvilTestClient(
  endpoint: ChainEndpoint,
  options: ClientOptions = {},
): AnvilTestClient {
  return createTestClient({
    mode: 'anvil',
    chain: chainFor(endpoint),
    transport: transportFor(endpoint, options),
  });
}
