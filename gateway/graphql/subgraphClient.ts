// How the gateway reaches subgraphs over HTTP: a keep-alive http.Agent with bounded sockets, a
// per-request timeout and a response size cap (the gateway's default client costs 2.5x in
// throughput, see docs/architecture.md), and the signed actor and correlation id on every request.
import http from 'node:http';
import https from 'node:https';
import { RemoteGraphQLDataSource, type GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import type { Fetcher, FetcherRequestInit, FetcherResponse } from '@apollo/utils.fetcher';
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

/** A Fetcher over node:http with keep-alive; resolves with a WHATWG Response. */
export function createKeepAliveFetcher(options: { timeoutMs?: number; maxResponseBytes?: number } = {}): {
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
      const request = transport.request(
        target,
        {
          method: init.method ?? 'POST',
          headers: init.headers,
          agent: target.protocol === 'https:' ? httpsAgent : httpAgent,
          timeout: timeoutMs,
        },
        (response) => {
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
            resolve(
              new Response(Buffer.concat(chunks), {
                status: response.statusCode ?? 502,
                statusText: response.statusMessage,
                headers,
              }) as unknown as FetcherResponse,
            );
          });
          response.on('error', reject);
        },
      );
      request.on('timeout', () => request.destroy(new SubgraphTransportError(`subgraph timed out after ${timeoutMs} ms`)));
      request.on('error', reject);
      if (init.body !== undefined) request.write(init.body);
      request.end();
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
    if (context.correlationId) options.request.http?.headers.set(CORRELATION_HEADER, context.correlationId);
  }
}
