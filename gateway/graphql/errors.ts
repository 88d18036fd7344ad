// How GraphQL errors leave the gateway: every one carries a code from the error registry with its
// status and retryable flag (Apollo's own request codes are mapped onto the registry), anything
// unexpected is masked as INTERNAL_ERROR, and without introspection no message suggests schema names.
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { ERROR_CODES, isErrorCode, type ErrorCode } from '../../core/errors';

/** A refusal raised in the gateway's own pipeline, with the HTTP status Apollo answers it with. */
export function gatewayGraphQLError(
  code: ErrorCode,
  message?: string,
  details?: unknown,
): GraphQLError {
  const spec = ERROR_CODES[code];
  return new GraphQLError(message ?? spec.message, {
    extensions: {
      code,
      status: spec.status,
      retryable: spec.retryable,
      ...(details !== undefined ? { details } : {}),
      http: { status: spec.status },
    },
  });
}

/** Apollo Server's codes for a request that cannot run as sent, and the registry code each becomes. */
const APOLLO_REQUEST_CODES: Readonly<Record<string, ErrorCode>> = {
  GRAPHQL_PARSE_FAILED: 'GRAPHQL_VALIDATION_FAILED',
  GRAPHQL_VALIDATION_FAILED: 'GRAPHQL_VALIDATION_FAILED',
  BAD_USER_INPUT: 'REQUEST_INVALID',
  BAD_REQUEST: 'REQUEST_INVALID',
  OPERATION_RESOLUTION_FAILURE: 'GRAPHQL_OPERATION_NOT_FOUND',
};

/** Automatic persisted queries: clients retry with the full query on exactly these codes, so they stay. */
const APQ_CODES = new Set(['PERSISTED_QUERY_NOT_FOUND', 'PERSISTED_QUERY_NOT_SUPPORTED']);

/** graphql-js's parse error when a document has more tokens than `maxTokens` (its wording, typo included). */
const TOKEN_LIMIT = /Document contains more th[ae][nt] (\d+) tokens/;

/** graphql-js appends these to validation and input errors; they name fields and types of the schema. */
const SUGGESTION = / ?Did you mean .+?\?$/;

export interface GatewayErrorFormat {
  /** True when introspection is off: messages keep no "Did you mean …?" suggestion. */
  readonly hideSchemaDetails: boolean;
}

/** The HTTP status Apollo answers an error of its own with (405 for a mutation sent by GET). */
function httpStatusOf(error: unknown): number | undefined {
  const http =
    error instanceof GraphQLError
      ? (error.extensions.http as { status?: unknown } | undefined)
      : undefined;
  return typeof http?.status === 'number' ? http.status : undefined;
}

function registryCodeOf(
  formatted: GraphQLFormattedError,
  error: unknown,
): { code: ErrorCode; details?: unknown } | null {
  const code = formatted.extensions?.code;
  if (code === 'GRAPHQL_PARSE_FAILED') {
    const tokens = TOKEN_LIMIT.exec(formatted.message);
    if (tokens)
      return {
        code: 'GRAPHQL_QUERY_TOO_LARGE',
        details: { limit: 'tokens', max: Number(tokens[1]) },
      };
  }
  if (code === 'BAD_REQUEST' && httpStatusOf(error) === 405) return { code: 'METHOD_NOT_ALLOWED' };
  if (typeof code === 'string' && APOLLO_REQUEST_CODES[code] !== undefined)
    return { code: APOLLO_REQUEST_CODES[code] };
  if (isErrorCode(code)) return { code };
  return null;
}

/** Apollo Server's formatError for the gateway: the only shape in which a GraphQL error leaves it. */
export function formatGatewayError(
  formatted: GraphQLFormattedError,
  error: unknown,
  format: GatewayErrorFormat,
): GraphQLFormattedError {
  const code = formatted.extensions?.code;
  if (typeof code === 'string' && APQ_CODES.has(code))
    return { message: formatted.message, extensions: { code } };
  const registered = registryCodeOf(formatted, error);
  if (registered === null) {
    const spec = ERROR_CODES.INTERNAL_ERROR;
    return {
      message: spec.message,
      path: formatted.path,
      extensions: { code: 'INTERNAL_ERROR', status: spec.status, retryable: spec.retryable },
    };
  }
  const spec = ERROR_CODES[registered.code];
  const message = format.hideSchemaDetails
    ? formatted.message.replace(SUGGESTION, '')
    : formatted.message;
  const {
    stacktrace: _stacktrace,
    exception: _exception,
    ...extensions
  } = formatted.extensions ?? {};
  return {
    ...formatted,
    message,
    extensions: {
      ...extensions,
      code: registered.code,
      status: spec.status,
      retryable: spec.retryable,
      ...(registered.details !== undefined ? { details: registered.details } : {}),
    },
  };
}
