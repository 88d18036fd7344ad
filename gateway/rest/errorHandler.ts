// The end of the edge's middleware chain: 405 (with Allow) or 404 for what no route served, and
// the one place errors become the REST error body. Registered codes keep their status and message;
// the HTTP layer's own client errors map to registry codes; anything else is INTERNAL_ERROR,
// logged with the correlation id and never described to the client.
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import { newCorrelationId } from '../../core/canon/ids';
import { AppError, ERROR_CODES, errorBody, type ErrorCode } from '../../core/errors';
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from '../../platform/db';
import type { Logger } from '../../platform/log';
import { httpLayerError } from './requestGuards';
import { allowedMethods } from './router';
import type { RouteDefinition } from './types';

export function unmatchedRequest(routes: readonly RouteDefinition[]): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    const methods = allowedMethods(routes, req.path);
    if (methods.length > 0) {
      next(
        new AppError(
          'METHOD_NOT_ALLOWED',
          `${req.method} is not allowed on ${req.path}; use ${methods.join(', ')}.`,
          { allow: methods },
        ),
      );
      return;
    }
    next(new AppError('ROUTE_NOT_FOUND', `No route ${req.method} ${req.path}.`));
  };
}

export function restErrorHandler(options: {
  log: Logger;
  bodyLimitBytes: number;
  docsBaseUrl: string | null;
}): ErrorRequestHandler {
  const { log } = options;
  return (error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const correlationId = String(res.locals.correlationId ?? newCorrelationId());
    let code: ErrorCode;
    let message: string | undefined;
    let details: unknown;
    const layer = error instanceof AppError ? null : httpLayerError(error, options.bodyLimitBytes);
    if (error instanceof AppError) {
      code = error.code;
      message = error.message;
      details = error.details;
    } else if (layer !== null) {
      ({ code, message } = layer);
    } else if (isDatabaseUnavailable(error)) {
      // The edge's own reads and writes (the paywall's claims, idempotency keys) hit a database
      // that is not there: retryable, and nothing was done that a retry would repeat wrongly.
      code = 'SERVICE_UNAVAILABLE';
      message = 'The database is not reachable; retry shortly.';
      details = { dependency: 'database', retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS };
      log.warn({ correlationId, err: error, path: req.path }, 'database unavailable');
    } else {
      code = 'INTERNAL_ERROR';
      log.error(
        { correlationId, err: error, method: req.method, path: req.path },
        'unhandled error',
      );
    }
    if (code === 'INTERNAL_ERROR' && error instanceof AppError && error.cause) {
      log.error(
        { correlationId, err: error.cause, method: req.method, path: req.path },
        'internal error',
      );
    }
    if (code === 'METHOD_NOT_ALLOWED') {
      const allow = (details as { allow?: string[] } | undefined)?.allow ?? [];
      res.setHeader('Allow', allow.join(', '));
    }
    const retryAfter = (details as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds;
    if (typeof retryAfter === 'number' && ERROR_CODES[code].retryable)
      res.setHeader('Retry-After', String(retryAfter));
    if (code === 'INTERNAL_ERROR') {
      message = undefined;
      details = undefined;
    }
    if (res.headersSent) {
      // A failure after the answer started (a stream cut short) can only end the connection.
      res.destroy();
      return;
    }
    res
      .status(ERROR_CODES[code].status)
      .json(errorBody(code, { message, details, correlationId, docsBaseUrl: options.docsBaseUrl }));
  };
}
