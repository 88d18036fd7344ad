// The `fetch` viem's JSON-RPC transport calls, on undici's keep-alive dispatcher with a bare
// handler that buffers the body. WHATWG fetch builds a Request, Headers and a web stream per call
// and reads the body through a stream reader: on the paid path (a few JSON-RPC requests per group
// of payments) that was 7–9 % of the service thread, more than the requests' own JSON. viem keeps
// everything else: its batching, retries, timeouts (through the signal it passes) and errors.
// viem reads only `ok`, `status`, `statusText`, `headers.get`, `body` and `text()` of what this
// returns (utils/rpc/http.ts); `body` is null, so it reads `text()` and measures it.
import { STATUS_CODES } from 'node:http';
import { Agent, type Dispatcher } from 'undici';

/** Connections kept per node; viem batches reads, so a handful serve a busy process. */
const RPC_MAX_CONNECTIONS = 32;
/** Below the usual node keep-alive timeouts, so the client closes an idle socket first. */
const KEEP_ALIVE_MS = 4_000;
/** viem's own cap on a JSON-RPC response body (10 MiB); undici enforces it while reading. */
const RPC_MAX_RESPONSE_BYTES = 10_485_760;

/** The part of a WHATWG Response that viem's HTTP JSON-RPC client reads. */
export interface RpcResponse {
  readonly ok: boolean;
  readonly status: number;
  readonly statusText: string;
  readonly headers: { get(name: string): string | null };
  readonly body: null;
  text(): Promise<string>;
}

interface RpcInit {
  readonly method?: string;
  readonly body?: unknown;
  readonly headers?: unknown;
  readonly signal?: AbortSignal | null;
}

type RawHeaders = Record<string, string | string[] | undefined>;

class ReplyHeaders {
  constructor(private readonly raw: RawHeaders) {}

  get(name: string): string | null {
    const value = this.raw[name.toLowerCase()];
    if (value === undefined) return null;
    return Array.isArray(value) ? value.join(', ') : value;
  }
}

function headersOf(init: unknown): Record<string, string> {
  const headers: Record<string, string> = {};
  if (init === undefined || init === null) return headers;
  if (init instanceof Headers) {
    init.forEach((value, key) => (headers[key] = value));
    return headers;
  }
  if (Array.isArray(init)) {
    for (const [key, value] of init as [string, string][]) headers[key.toLowerCase()] = value;
    return headers;
  }
  for (const [key, value] of Object.entries(init as Record<string, string>))
    headers[key.toLowerCase()] = value;
  return headers;
}

function bodyOf(body: unknown): string | Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || Buffer.isBuffer(body)) return body;
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  throw new TypeError('the JSON-RPC transport sends string or byte bodies only');
}

function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error
    ? reason
    : new DOMException('This operation was aborted', 'AbortError');
}

/** One request through `dispatcher`, its body buffered whole. */
function dispatchBuffered(
  dispatcher: Dispatcher,
  target: URL,
  init: RpcInit,
): Promise<RpcResponse> {
  const signal = init.signal ?? null;
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let status = 0;
    let statusText = '';
    let raw: RawHeaders = {};
    let settled = false;
    let abortRequest: ((reason: Error) => void) | null = null;
    const onAbort = () => {
      const reason = abortReason(signal!);
      abortRequest?.(reason);
      finish(reason);
    };
    const finish = (error: Error | null, reply?: RpcResponse) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      if (error) reject(error);
      else resolve(reply!);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    dispatcher.dispatch(
      {
        origin: target.origin,
        path: target.pathname + target.search,
        method: (init.method ?? 'GET') as Dispatcher.HttpMethod,
        headers: headersOf(init.headers),
        body: bodyOf(init.body),
      },
      {
        onRequestStart(controller) {
          abortRequest = (reason) => controller.abort(reason);
        },
        onResponseStart(_controller, statusCode, headers, message) {
          status = statusCode;
          statusText = message || STATUS_CODES[statusCode] || '';
          raw = headers as RawHeaders;
        },
        onResponseData(_controller, chunk) {
          chunks.push(chunk);
        },
        onResponseEnd() {
          const text = (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString('utf8');
          finish(null, {
            ok: status >= 200 && status < 300,
            status,
            statusText,
            headers: new ReplyHeaders(raw),
            body: null,
            text: () => Promise.resolve(text),
          });
        },
        onResponseError(_controller, error) {
          finish(error);
        },
      },
    );
  });
}

/**
 * viem's timeout aborts a request through its signal (clients.ts sets it per client); these are
 * only the dispatcher's own backstop for a socket that stops answering.
 */
const BACKSTOP_TIMEOUT_MS = 60_000;

let shared: Agent | null = null;

/**
 * The process's JSON-RPC fetch: one keep-alive dispatcher for every chain client, as WHATWG fetch
 * has one global dispatcher (idle sockets close after KEEP_ALIVE_MS and never hold the process).
 */
export const rpcFetch = ((input: string | URL | Request, init?: RpcInit) => {
  shared ??= new Agent({
    connections: RPC_MAX_CONNECTIONS,
    keepAliveTimeout: KEEP_ALIVE_MS,
    keepAliveMaxTimeout: KEEP_ALIVE_MS,
    headersTimeout: BACKSTOP_TIMEOUT_MS,
    bodyTimeout: BACKSTOP_TIMEOUT_MS,
    maxResponseSize: RPC_MAX_RESPONSE_BYTES,
  });
  const target = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
  return dispatchBuffered(shared, target, init ?? {});
}) as unknown as typeof fetch;
