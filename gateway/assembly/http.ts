// The gateway's HTTP surface before any route: the server (header size, timeouts, Node's parser
// errors answered with our error body), one correlation id, access-log line and metric per request,
// the unlimited probes (health, readiness, metrics) and the public documents (OpenAPI, logo, docs).
import { createServer, type Server } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { newCorrelationId } from '../../core/canon/ids';
import { AppError } from '../../core/errors';
import type { TrustProxy } from '../../platform/config';
import type { Logger } from '../../platform/log';
import type { HttpMetrics } from '../../platform/metrics';
import {
  answerProbe,
  PROBE_PATHS,
  type ReadinessCheck,
  type RoleProbes,
} from '../../platform/probes';
import { projectRoot } from '../../platform/paths';
import { answerClientErrors, MAX_HEADER_BYTES } from '../rest/clientErrors';
import { LOGO_SVG } from '../rest/identity';
import { openApiDocument } from '../rest/openapi';
import type { RestServiceInfo, RouteDefinition } from '../rest/types';

export function createHttpSurface(options: {
  readonly trustProxy: TrustProxy | undefined;
  readonly docsBaseUrl: string | null;
  readonly log: Logger;
}): { app: Express; httpServer: Server } {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', options.trustProxy ?? false);
  const httpServer = createServer(
    { maxHeaderSize: MAX_HEADER_BYTES, requireHostHeader: false },
    app,
  );
  answerClientErrors(httpServer, { docsBaseUrl: options.docsBaseUrl, log: options.log });
  httpServer.keepAliveTimeout = 65_000;
  httpServer.headersTimeout = 66_000;
  httpServer.requestTimeout = 120_000;
  return { app, httpServer };
}

/** Every request: a correlation id, one access-log line, metrics. */
export function observeRequests(app: Express, metrics: HttpMetrics, log: Logger): void {
  app.use((req: Request, res: Response, next: NextFunction) => {
    const correlationId = newCorrelationId();
    res.locals.correlationId = correlationId;
    res.setHeader('x-correlation-id', correlationId);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route =
        (req.route as { path?: string } | undefined)?.path ??
        (req.path === '/graphql' ? '/graphql' : 'unmatched');
      metrics.requests.inc({ method: req.method, route, status: String(res.statusCode) });
      metrics.durationSeconds.observe({ method: req.method, route }, seconds);
      log.info(
        {
          correlationId,
          method: req.method,
          path: req.path,
          status: res.statusCode,
          ms: Math.round(seconds * 1000),
        },
        'request',
      );
    });
    next();
  });
}

/** /healthz, /readyz (503 while draining; the database and, with subscriptions, the LISTEN connection) and /metrics. */
export function serveProbes(
  app: Express,
  probes: {
    readonly metrics: HttpMetrics;
    readonly readinessCheck: (() => Promise<void>) | undefined;
    readonly notifications: { readonly connected: boolean } | null;
    /** True once the process is stopping: load balancers must send nothing new. */
    readonly draining: () => boolean;
  },
): void {
  const { readinessCheck, notifications } = probes;
  const checks: Record<string, ReadinessCheck> = {
    database: async () => {
      await readinessCheck?.();
      return 'ok';
    },
  };
  if (notifications)
    checks.notifications = async () => {
      if (!notifications.connected) throw new Error('reconnecting');
      return 'ok';
    };
  const roleProbes: RoleProbes = { metrics: probes.metrics, checks, draining: probes.draining };
  // One route per path, so that each request's metric is labelled with its own path.
  for (const path of PROBE_PATHS)
    app.get(path, (req, res, next) => {
      answerProbe(roleProbes, req, res).then((answered) => (answered ? undefined : next()), next);
    });
}

const DOC_FILE = /^[a-z0-9-]+\.md$/;

/** /openapi.json (from the route table), /logo.svg and the docs the error bodies link to. */
export function servePublicDocuments(
  app: Express,
  service: RestServiceInfo,
  routes: readonly RouteDefinition[],
): void {
  app.get('/openapi.json', (_req, res) => {
    res.json(openApiDocument(service, routes));
  });
  app.get('/logo.svg', (_req, res) => {
    res.type('image/svg+xml').send(LOGO_SVG);
  });
  app.get('/docs/:file', (req, res, next) => {
    const file = String(req.params.file);
    const full = path.join(projectRoot(), 'docs', file);
    if (!DOC_FILE.test(file) || !existsSync(full)) {
      next(new AppError('ROUTE_NOT_FOUND', `No document ${file}.`));
      return;
    }
    res.type('text/markdown; charset=utf-8').send(readFileSync(full, 'utf8'));
  });
}
