import { GraphQLError } from 'graphql';
import { formatGatewayError } from './errors';

const hidden = { hideSchemaDetails: true };
const shown = { hideSchemaDetails: false };

function apolloError(
  message: string,
  code: string,
  httpStatus?: number,
): [GraphQLError, ReturnType<GraphQLError['toJSON']>] {
  const error = new GraphQLError(message, {
    extensions: { code, ...(httpStatus ? { http: { status: httpStatus } } : {}) },
  });
  return [error, { message, extensions: { code } }];
}

describe('formatGatewayError', () => {
  it('maps Apollo’s request codes onto the registry with status and retryable', () => {
    const [parseError, parsed] = apolloError(
      'Syntax Error: Expected Name, found <EOF>.',
      'GRAPHQL_PARSE_FAILED',
    );
    expect(formatGatewayError(parsed, parseError, shown).extensions).toEqual({
      code: 'GRAPHQL_VALIDATION_FAILED',
      status: 400,
      retryable: false,
    });
    const [inputError, input] = apolloError('Variable "$x" got invalid value 1.', 'BAD_USER_INPUT');
    expect(formatGatewayError(input, inputError, shown).extensions).toEqual({
      code: 'REQUEST_INVALID',
      status: 400,
      retryable: false,
    });
    const [getMutation, get] = apolloError(
      'GET requests only support query operations, not mutation operations',
      'BAD_REQUEST',
      405,
    );
    expect(formatGatewayError(get, getMutation, shown).extensions).toMatchObject({
      code: 'METHOD_NOT_ALLOWED',
      status: 405,
    });
  });

  it('names the token limit when graphql-js stops parsing a long document', () => {
    const [error, formatted] = apolloError(
      'Syntax Error: Document contains more that 2000 tokens. Parsing aborted.',
      'GRAPHQL_PARSE_FAILED',
    );
    expect(formatGatewayError(formatted, error, shown).extensions).toEqual({
      code: 'GRAPHQL_QUERY_TOO_LARGE',
      status: 400,
      retryable: false,
      details: { limit: 'tokens', max: 2000 },
    });
  });

  it('keeps the persisted-query codes clients retry on, and masks anything unknown', () => {
    const [apq, apqFormatted] = apolloError('PersistedQueryNotFound', 'PERSISTED_QUERY_NOT_FOUND');
    expect(formatGatewayError(apqFormatted, apq, hidden)).toEqual({
      message: 'PersistedQueryNotFound',
      extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' },
    });
    const [boom, boomFormatted] = apolloError(
      'connect ECONNREFUSED 10.0.0.7:5432',
      'INTERNAL_SERVER_ERROR',
    );
    expect(formatGatewayError(boomFormatted, boom, shown)).toEqual({
      message: 'An internal error occurred; quote the correlation id.',
      extensions: { code: 'INTERNAL_ERROR', status: 500, retryable: true },
    });
  });

  it('drops "Did you mean" suggestions only when schema details are hidden', () => {
    const message =
      'Cannot query field "polic" on type "Query". Did you mean "policy" or "policies"?';
    const [error, formatted] = apolloError(message, 'GRAPHQL_VALIDATION_FAILED');
    expect(formatGatewayError(formatted, error, hidden).message).toBe(
      'Cannot query field "polic" on type "Query".',
    );
    expect(formatGatewayError(formatted, error, shown).message).toBe(message);
  });
});
