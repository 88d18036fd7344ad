// How the gateway reaches subgraphs over HTTP: a keep-alive http.Agent with bounded sockets, a
// per-request timeout and a response size cap (the gateway's default client costs 2.5x in
// throughput, see docs/architecture.md), and the signed actor and correlation id on every request.
import http from 'node:http';
import https from 'node:https';
import { RemoteGraphQLDataSource, type GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import type {
  Fetcher,
  FetcherHeaders,
  FetcherRequestInit,
  FetcherResponse,
} from '@apollo/utils.fetcher';
import { ACTOR_HEADER, CORRELATION_HEADER } from '../../platform/actor';
import type { GatewayContext } from './context';

export const SUBGRAPH_TIMEOUT_MS = 15_000;
export const SUBGRAPH_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;
export const SUBGRAPH_MAX_SOCKETS = 64;

export class SubgraphTransportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SubgraphTransportError';
  }
}

/**
 * The response the gateway's data source reads: status, headers and the body already in memory.
 * A plain object instead of a WHATWG Response, whose stream machinery cost more per subgraph call
 * than the JSON parse it wraps.
 */
class BufferedResponse implements FetcherResponse {
  readonly redirected = false;
  private used = false;

  constructor(
    readonly url: string,
    readonly status: number,
    readonly statusText: string,
    readonly headers: FetcherHeaders,
    private readonly body: Buffer,
  ) {}

  get ok(): boolean {
    return this.status >= 200 && this.status < 300;
  }

  get bodyUsed(): boolean {
    return this.used;
  }

  private consume(): Buffer {
    if (this.used) throw new TypeError('Body has already been consumed.');
    this.used = true;
    return this.body;
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const body = this.consume();
    return body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer;
  }

  async text(): Promise<string> {
    return this.consume().toString('utf8');
  }

  async json(): Promise<unknown> {
    return JSON.parse(this.consume().toString('utf8'));
  }

  clone(): FetcherResponse {
    if (this.used) throw new TypeError('Body has already been consumed.');
    return new BufferedResponse(
      this.url,
      this.status,
      this.statusText,
      new Headers(this.headers as unknown as Headers),
      this.body,
    );
  }
}

/** The request body as bytes and headers with its content-length, so it goes out in one write. */
function requestPayload(init: FetcherRequestInit): {
  body: Buffer | undefined;
  headers: Record<string, string>;
} {
  const body =
    init.body === undefined
      ? undefined
      : typeof init.body === 'string'
        ? Buffer.from(init.body, 'utf8')
        : init.body;
  const headers: Record<string, string> = { ...init.headers };
  if (
    body !== undefined &&
    !Object.keys(headers).some((name) => name.toLowerCase() === 'content-length')
  ) {
    headers['content-length'] = String(body.length);
  }
  return { body, headers };
}

/** Buffers a response up to maxBytes (beyond it the request is destroyed) and settles with it. */
function bufferResponse(
  url: string,
  request: http.ClientRequest,
  response: http.IncomingMessage,
  maxBytes: number,
  settle: { resolve(response: FetcherResponse): void; reject(error: unknown): void },
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  response.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > maxBytes) {
      request.destroy(new SubgraphTransportError(`subgraph response over ${maxBytes} bytes`));
      return;
    }
    chunks.push(chunk);
  });
  response.on('end', () => {
    const headers = new Headers();
    for (const [name, value] of Object.entries(response.headers)) {
      if (Array.isArray(value)) value.forEach((v) => headers.append(name, v));
      else if (value !== undefined) headers.set(name, value);
    }
    settle.resolve(
      new BufferedResponse(
        url,
        response.statusCode ?? 502,
        response.statusMessage ?? '',
        headers as unknown as FetcherHeaders,
        chunks.length === 1 ? chunks[0] : Buffer.concat(chunks),
      ),
    );
  });
  response.on('error', settle.reject);
}

/** A Fetcher over node:http with keep-alive; resolves with the whole body buffered. */
export function createKeepAliveFetcher(
  options: { timeoutMs?: number; maxResponseBytes?: number } = {},
): {
  fetcher: Fetcher;
  close(): void;
} {
  const timeoutMs = options.timeoutMs ?? SUBGRAPH_TIMEOUT_MS;
  const maxBytes = options.maxResponseBytes ?? SUBGRAPH_MAX_RESPONSE_BYTES;
  const httpAgent = new http.Agent({ keepAlive: true, maxSockets: SUBGRAPH_MAX_SOCKETS });
  const httpsAgent = new https.Agent({ keepAlive: true, maxSockets: SUBGRAPH_MAX_SOCKETS });

  const fetcher: Fetcher = (url: string, init: FetcherRequestInit = {}) =>
    new Promise<FetcherResponse>((resolve, reject) => {
      const target = new URL(url);
      const transport = target.protocol === 'https:' ? https : http;
      const { body, headers } = requestPayload(init);
      const request = transport.request(
        target,
        {
          method: init.method ?? 'POST',
          headers,
          agent: target.protocol === 'https:' ? httpsAgent : httpAgent,
          timeout: timeoutMs,
        },
        (response) => bufferResponse(url, request, response, maxBytes, { resolve, reject }),
      );
      request.on('timeout', () =>
        request.destroy(new SubgraphTransportError(`subgraph timed out after ${timeoutMs} ms`)),
      );
      request.on('error', reject);
      request.end(body);
    });

  return {
    fetcher,
    close() {
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}

/** Forwards every subgraph request with the actor the gateway authenticated, signed. */
export class SignedRemoteDataSource extends RemoteGraphQLDataSource<GatewayContext> {
  override willSendRequest(options: GraphQLDataSourceProcessOptions<GatewayContext>): void {
    const context = options.context as Partial<GatewayContext>;
    if (context.signedActor) options.request.http?.headers.set(ACTOR_HEADER, context.signedActor);
    if (context.correlationId)
      options.request.http?.headers.set(CORRELATION_HEADER, context.correlationId);
  }
}
