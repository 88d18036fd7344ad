// Maps the errors of a GraphQL result to the one AppError a REST caller sees: a registered code
// passes through with its details; Apollo's own input codes become REQUEST_INVALID; anything else
// is an internal error whose message is not shown.
import { AppError, isErrorCode } from '../../core/errors';

export interface GraphQLErrorLike {
  message: string;
  extensions?: Record<string, unknown>;
}

export function appErrorFromGraphQL(errors: readonly GraphQLErrorLike[]): AppError {
  for (const error of errors) {
    const code = error.extensions?.code;
    if (isErrorCode(code)) return new AppError(code, error.message, error.extensions?.details);
  }
  const first = errors[0];
  const code = first?.extensions?.code;
  if (code === 'BAD_USER_INPUT' || code === 'GRAPHQL_VALIDATION_FAILED') {
    return new AppError('REQUEST_INVALID', first.message);
  }
  return new AppError('INTERNAL_ERROR', undefined, undefined, { cause: first });
}
