// What a REST request must be before a route reads it: a body only as application/json in UTF-8
// (415 otherwise; a request without a body passes, whatever its Content-Type), and a parsed body,
// query and path free of what the service cannot carry (core/validation/wireJson). Also maps the
// HTTP layer's own failures (body-parser, path decoding) to registry codes for the error handler.
import type { NextFunction, Request, Response } from 'express';
import { AppError, type ErrorCode } from '../../core/errors';
import { wireJsonProblem } from '../../core/validation/wireJson';
import { isConsumerIntentId } from '../../core/canon/id-shapes';

const JSON_MEDIA_TYPE = 'application/json';
const SHOWN_MEDIA_TYPE_CHARS = 80;

/**
 * An HTTP/1.1 request must name its Host (RFC 9112). Node's own check answers without the error
 * body, so the server leaves it to this middleware.
 */
export function requireHostHeader(req: Request, _res: Response, next: NextFunction): void {
  const missing =
    req.httpVersionMajor === 1 &&
    req.httpVersionMinor >= 1 &&
    (req.headers.host === undefined || req.headers.host === '');
  next(
    missing
      ? new AppError('REQUEST_INVALID', 'An HTTP/1.1 request needs a Host header.')
      : undefined,
  );
}

/** Content-Length above zero, or a chunked body: something to parse. */
export function hasRequestBody(req: Request): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = req.headers['content-length'];
  return length !== undefined && Number(length) > 0;
}

/** Null when `header` is application/json with no charset or charset utf-8; else why not. */
export function jsonMediaTypeProblem(header: string | undefined): string | null {
  if (header === undefined || header.trim() === '')
    return 'the request has a body but no Content-Type';
  const [type, ...parameters] = header.split(';');
  const mediaType = type!.trim().toLowerCase();
  if (mediaType !== JSON_MEDIA_TYPE)
    return `the body was sent as ${JSON.stringify(mediaType.slice(0, SHOWN_MEDIA_TYPE_CHARS))}`;
  for (const parameter of parameters) {
    const [name, ...rest] = parameter.split('=');
    if (name!.trim().toLowerCase() !== 'charset') continue;
    const charset = rest
      .join('=')
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase();
    if (charset !== 'utf-8')
      return `charset ${JSON.stringify(charset.slice(0, SHOWN_MEDIA_TYPE_CHARS))} is not utf-8`;
  }
  return null;
}

/** 415 UNSUPPORTED_MEDIA_TYPE for a body that is not application/json in UTF-8. */
export function requireJsonMediaType(req: Request, _res: Response, next: NextFunction): void {
  if (!hasRequestBody(req)) {
    next();
    return;
  }
  const problem = jsonMediaTypeProblem(req.headers['content-type']);
  next(
    problem === null
      ? undefined
      : new AppError(
          'UNSUPPORTED_MEDIA_TYPE',
          `Send the body as application/json (UTF-8): ${problem}.`,
        ),
  );
}

/** 400 REQUEST_INVALID naming the field when the parsed body holds what the service cannot carry. */
export function checkWireBody(req: Request, _res: Response, next: NextFunction): void {
  const problem = wireJsonProblem(req.body);
  next(
    problem === null
      ? undefined
      : new AppError(
          'REQUEST_INVALID',
          `The body cannot be accepted: ${problem.field} ${problem.reason}.`,
          [problem],
        ),
  );
}

/** The same check on a route's query and path parameters (percent-decoded by then). */
export function checkWireParameters(params: unknown, query: unknown): void {
  const problem = wireJsonProblem(params, 'path') ?? wireJsonProblem(query, 'query');
  if (problem !== null)
    throw new AppError(
      'REQUEST_INVALID',
      `The request cannot be accepted: ${problem.field} ${problem.reason}.`,
      [problem],
    );
}

/**
 * The one check of an `:intentId` path parameter, for every route that takes one: `ci_` + 24 hex,
 * else 400 REQUEST_INVALID (or the route's own not-found code), before any lookup or payment.
 */
export function checkPathIds(
  route: { readonly path: string; readonly malformedIntentId?: ErrorCode },
  params: Readonly<Record<string, string | undefined>>,
): void {
  if (!route.path.includes(':intentId') || isConsumerIntentId(params.intentId)) return;
  if (route.malformedIntentId !== undefined)
    throw new AppError(route.malformedIntentId, undefined, { intentId: params.intentId ?? null });
  throw new AppError('REQUEST_INVALID', 'intentId is ci_ followed by 24 hex characters.', {
    field: 'intentId',
  });
}

interface HttpLayerError {
  readonly type?: unknown;
  readonly status?: unknown;
}

/**
 * The registry code for an error thrown by Express's own layers (body-parser, path decoding), or
 * null for anything else (an internal error). Client faults keep their 4xx.
 */
export function httpLayerError(
  error: unknown,
  bodyLimitBytes: number,
): { code: ErrorCode; message?: string } | null {
  if (error instanceof URIError)
    return { code: 'REQUEST_INVALID', message: 'The path holds invalid percent-encoding.' };
  const layer = (typeof error === 'object' && error !== null ? error : {}) as HttpLayerError;
  switch (layer.type) {
    case 'entity.too.large':
      return {
        code: 'BODY_TOO_LARGE',
        message: `The request body is larger than ${bodyLimitBytes} bytes.`,
      };
    case 'entity.parse.failed':
      return { code: 'BODY_NOT_JSON' };
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return { code: 'UNSUPPORTED_MEDIA_TYPE' };
  }
  const status = layer.status;
  if (typeof status !== 'number' || status < 400 || status > 499) return null;
  if (status === 413) return { code: 'BODY_TOO_LARGE' };
  if (status === 415) return { code: 'UNSUPPORTED_MEDIA_TYPE' };
  return { code: 'REQUEST_INVALID', message: 'The request body could not be read.' };
}
