// Tells a database that is not there (stopped, restarting, unreachable, out of connection slots)
// from a defect: the first is a retryable 503 SERVICE_UNAVAILABLE for the caller, the second an
// INTERNAL_ERROR. Read from node-postgres's errors (socket codes, SQLSTATEs, its own messages),
// following the links an error arrives wrapped in: `cause`, a GraphQL error's `originalError`, and
// graphql-js's `thrownValue` (a socket error from another realm is not `instanceof Error` there).

/** Socket errors of a connection that could not be made or was cut. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);
/** SQLSTATEs of a server that is going away or not yet taking connections. */
const SERVER_STATES = new Set(['57P01', '57P02', '57P03', '53300']);
/** node-postgres's own words for a lost or unobtainable connection. */
const CLIENT_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
];

/** Seconds a caller is asked to wait (Retry-After) before trying again. */
export const DATABASE_RETRY_AFTER_SECONDS = 1;

export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 5; depth += 1) {
    if (typeof current !== 'object') return false;
    const { code, message, cause, originalError, thrownValue } = current as {
      code?: unknown;
      message?: unknown;
      cause?: unknown;
      originalError?: unknown;
      thrownValue?: unknown;
    };
    if (typeof code === 'string') {
      if (SOCKET_CODES.has(code) || SERVER_STATES.has(code) || /^08[0-9A-Z]{3}$/.test(code))
        return true;
    }
    if (typeof message === 'string' && CLIENT_MESSAGES.some((words) => message.includes(words)))
      return true;
    current = cause ?? originalError ?? thrownValue;
  }
  return false;
}
