// Serves one started subgraph server over HTTP on its own port: POST /graphql with a JSON body on
// a bare node:http hot path (operationHttp.ts), everything else (GET, other media types) through
// express 5 and Apollo's HTTP layer; a bounded body, keep-alive tuned for the gateway's pooled
// client, JSON errors for transport failures, the role's probes when it runs in a process of its
// own, and a stop() that drains idle then lingering connections.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ApolloServer } from '@apollo/server';
import { expressMiddleware } from '@as-integrations/express5';
import express, { type NextFunction, type Request, type Response } from 'express';
import { ERROR_CODES, type ErrorCode } from '../../core/errors';
import { ACTOR_HEADER } from '../../platform/actor';
import { answerProbe, PROBE_PATHS, type RoleProbes } from '../../platform/probes';
import { spanForRequest } from '../../platform/tracing';
import { CORRELATION_HEADER, contextFactoryFor } from './context';
import { isJsonPost, operationHandler } from './operationHttp';
import type { SubgraphContext } from './types';

export const GRAPHQL_PATH = '/graphql';
/** Entity batches from the gateway are the largest requests a subgraph sees. */
export const MAX_BODY_BYTES = 2 * 1024 * 1024;
/** Longer than the gateway agent's idle timeout, so the server never closes a socket mid-reuse. */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;
export const REQUEST_TIMEOUT_MS = 30_000;
/** After this grace, stop() cuts connections that still carry a request. */
export const STOP_GRACE_MS = 5_000;

export interface SubgraphHttpOptions {
  readonly host?: string;
  /** 0 picks a free port (tests). */
  readonly port: number;
  /** The subgraph's name, on its operation spans when tracing is on. */
  readonly name?: string;
  /** /healthz, /readyz and /metrics beside /graphql (a subgraph role's own process); absent: none. */
  readonly probes?: RoleProbes;
}

export interface SubgraphHttpHandle {
  readonly url: string;
  readonly port: number;
  /** Closes the listener; the ApolloServer itself stays up (its owner calls server.stop()). */
  stop(): Promise<void>;
}

function headerValue(req: Request, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

function sendTransportError(res: Response, code: ErrorCode): void {
  const spec = ERROR_CODES[code];
  res.status(spec.status).json({
    errors: [
      {
        message: spec.message,
        extensions: { code, status: spec.status, retryable: spec.retryable },
      },
    ],
  });
}

function transportErrorCode(error: unknown): ErrorCode {
  const type = (error as { type?: unknown } | null)?.type;
  if (type === 'entity.too.large') return 'BODY_TOO_LARGE';
  if (type === 'entity.parse.failed') return 'BODY_NOT_JSON';
  return 'INTERNAL_ERROR';
}

/** A span for each /graphql request, active for everything the request starts (tracing on). */
function graphqlSpan(options: SubgraphHttpOptions) {
  const name = `subgraph ${options.name ?? 'operation'}`;
  const attributes = { 'spend.subgraph': options.name ?? 'unknown', 'spend.transport': 'http' };
  return (res: http.ServerResponse, next: () => void) =>
    spanForRequest(name, attributes, (end) => res.once('close', () => end(res.statusCode)), next);
}

/** Everything but the hot path: GET and other media types through Apollo's HTTP layer, probes. */
function expressApp(
  server: ApolloServer<SubgraphContext>,
  options: SubgraphHttpOptions,
  span: ReturnType<typeof graphqlSpan>,
) {
  const contextFactory = contextFactoryFor(server);
  const app = express();
  app.disable('x-powered-by');
  app.use(
    GRAPHQL_PATH,
    (_req: Request, res: Response, next: NextFunction) => span(res, next),
    express.json({ limit: MAX_BODY_BYTES }),
    expressMiddleware(server, {
      context: async ({ req }) =>
        contextFactory({
          actorHeader: headerValue(req, ACTOR_HEADER),
          correlationId: headerValue(req, CORRELATION_HEADER),
        }),
    }),
  );
  const { probes } = options;
  if (probes)
    for (const path of PROBE_PATHS)
      app.get(path, (req, res, next) => {
        answerProbe(probes, req, res).then((answered) => (answered ? undefined : next()), next);
      });
  app.use((_req: Request, res: Response) => sendTransportError(res, 'ROUTE_NOT_FOUND'));
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    sendTransportError(res, transportErrorCode(error));
  });
  return app;
}

export async function startSubgraphHttp(
  server: ApolloServer<SubgraphContext>,
  options: SubgraphHttpOptions,
): Promise<SubgraphHttpHandle> {
  const span = graphqlSpan(options);
  const app = expressApp(server, options, span);
  const hotPath = operationHandler(server, MAX_BODY_BYTES);
  const httpServer = http.createServer((req, res) => {
    if (isJsonPost(req, GRAPHQL_PATH)) span(res, () => void hotPath(req, res));
    else app(req, res);
  });
  httpServer.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  httpServer.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1_000;
  httpServer.requestTimeout = REQUEST_TIMEOUT_MS;
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(options.port, host, () => {
      httpServer.off('error', reject);
      resolve();
    });
  });
  const port = (httpServer.address() as AddressInfo).port;

  let stopping: Promise<void> | null = null;
  return {
    url: `http://${host}:${port}${GRAPHQL_PATH}`,
    port,
    stop() {
      stopping ??= new Promise<void>((resolve, reject) => {
        const force = setTimeout(() => httpServer.closeAllConnections(), STOP_GRACE_MS);
        httpServer.close((error) => {
          clearTimeout(force);
          if (error) reject(error);
          else resolve();
        });
        httpServer.closeIdleConnections();
      });
      return stopping;
    },
  };
}
