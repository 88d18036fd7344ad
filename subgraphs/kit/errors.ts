// Turns whatever a resolver or the request pipeline throws into the error a subgraph reports:
// an AppError keeps its code, message and details (extensions {code, status, retryable, details});
// a malformed request keeps graphql-js's message under our code; anything else becomes
// INTERNAL_ERROR with the registry's message, so no internal message or stack ever leaves.
import { unwrapResolverError } from '@apollo/server/errors';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { AppError, ERROR_CODES, type ErrorCode, isErrorCode } from '../../core/errors';
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from '../../platform/db';

export interface SubgraphErrorExtensions {
  code: ErrorCode;
  status: number;
  retryable: boolean;
  details?: unknown;
  correlationId?: string;
}

/** Apollo Server's own codes for a request that cannot run as sent; the message names the defect. */
const REQUEST_ERROR_CODES: Readonly<Record<string, ErrorCode>> = {
  GRAPHQL_PARSE_FAILED: 'GRAPHQL_VALIDATION_FAILED',
  GRAPHQL_VALIDATION_FAILED: 'GRAPHQL_VALIDATION_FAILED',
  OPERATION_RESOLUTION_FAILURE: 'GRAPHQL_VALIDATION_FAILED',
  PERSISTED_QUERY_NOT_FOUND: 'GRAPHQL_VALIDATION_FAILED',
  PERSISTED_QUERY_NOT_SUPPORTED: 'GRAPHQL_VALIDATION_FAILED',
  BAD_USER_INPUT: 'REQUEST_INVALID',
  BAD_REQUEST: 'REQUEST_INVALID',
};

export type ErrorClassification =
  { kind: 'reported'; code: ErrorCode; message: string; details?: unknown } | { kind: 'internal' };

function extensionsFor(code: ErrorCode, details?: unknown): SubgraphErrorExtensions {
  const spec = ERROR_CODES[code];
  const extensions: SubgraphErrorExtensions = {
    code,
    status: spec.status,
    retryable: spec.retryable,
  };
  if (details !== undefined) extensions.details = details;
  return extensions;
}

/** An AppError as a GraphQLError; `httpStatus` is for errors raised before execution (context). */
export function toGraphQLError(
  error: AppError,
  options: { httpStatus?: number } = {},
): GraphQLError {
  const extensions: Record<string, unknown> = { ...extensionsFor(error.code, error.details) };
  if (options.httpStatus !== undefined) extensions.http = { status: options.httpStatus };
  return new GraphQLError(error.message, { originalError: error, extensions });
}

/** Decides whether an error was reported on purpose (keeps its message) or is internal (hidden). */
export function classifyError(error: unknown): ErrorClassification {
  const original = unwrapResolverError(error);
  if (original instanceof AppError) {
    return {
      kind: 'reported',
      code: original.code,
      message: original.message,
      details: original.details,
    };
  }
  for (const candidate of [original, error]) {
    if (!(candidate instanceof GraphQLError)) continue;
    const code = candidate.extensions?.code;
    if (isErrorCode(code) && code !== 'INTERNAL_ERROR') {
      return {
        kind: 'reported',
        code,
        message: candidate.message,
        details: candidate.extensions.details,
      };
    }
    if (typeof code === 'string' && REQUEST_ERROR_CODES[code] !== undefined) {
      return { kind: 'reported', code: REQUEST_ERROR_CODES[code], message: candidate.message };
    }
  }
  if (isDatabaseUnavailable(original) || isDatabaseUnavailable(error)) return databaseUnavailable();
  return { kind: 'internal' };
}

/** A database that is not there (stopped, restarting, unreachable) is a retryable 503, not a defect. */
export function databaseUnavailable(): ErrorClassification {
  return {
    kind: 'reported',
    code: 'SERVICE_UNAVAILABLE',
    message: 'The database is not reachable; retry shortly.',
    details: { dependency: 'database', retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS },
  };
}

/** Apollo Server's formatError: the only shape in which an error leaves a subgraph. */
export function formatSubgraphError(
  formatted: GraphQLFormattedError,
  error: unknown,
): GraphQLFormattedError {
  const classification = classifyError(error);
  const located: Pick<GraphQLFormattedError, 'locations' | 'path'> = {
    ...(formatted.locations !== undefined ? { locations: formatted.locations } : {}),
    ...(formatted.path !== undefined ? { path: formatted.path } : {}),
  };
  if (classification.kind === 'internal') {
    return {
      message: ERROR_CODES.INTERNAL_ERROR.message,
      ...located,
      extensions: { ...extensionsFor('INTERNAL_ERROR') },
    };
  }
  return {
    message: classification.message,
    ...located,
    extensions: { ...extensionsFor(classification.code, classification.details) },
  };
}
