// The one registry of error codes: each code's HTTP status, whether a retry can succeed, and a
// default message. Every failure the service reports, over REST or GraphQL, names a code from
// here, and every code has an anchor in docs/errors.md (a test keeps the two in step).

import { CONSUMER_ERROR_CODES } from './consumerErrorCodes';

export interface ErrorSpec {
  readonly status: number;
  readonly retryable: boolean;
  readonly message: string;
}

export const ERROR_CODES = {
  // The edge: transport and request shape.
  ROUTE_NOT_FOUND: { status: 404, retryable: false, message: 'No route matches this path.' },
  METHOD_NOT_ALLOWED: {
    status: 405,
    retryable: false,
    message: 'This path does not accept this method.',
  },
  BODY_NOT_JSON: { status: 400, retryable: false, message: 'The request body is not valid JSON.' },
  BODY_TOO_LARGE: {
    status: 413,
    retryable: false,
    message: 'The request body is larger than the limit.',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    retryable: false,
    message: 'Send the body as application/json.',
  },
  REQUEST_INVALID: {
    status: 400,
    retryable: false,
    message: 'The request does not match the route’s input.',
  },
  REQUEST_HEADERS_TOO_LARGE: {
    status: 431,
    retryable: false,
    message: 'The request line and headers are larger than the limit.',
  },
  REQUEST_TIMEOUT: { status: 408, retryable: true, message: 'The request did not arrive in time.' },
  RATE_LIMITED: {
    status: 429,
    retryable: true,
    message: 'Too many requests; retry after the indicated time.',
  },
  IDEMPOTENCY_KEY_INVALID: {
    status: 400,
    retryable: false,
    message: 'The Idempotency-Key header is not a usable key.',
  },
  IDEMPOTENCY_KEY_UNSUPPORTED: {
    status: 400,
    retryable: false,
    message: 'An anonymous paid call takes no Idempotency-Key; the payment is its key.',
  },
  IDEMPOTENCY_KEY_REUSED: {
    status: 409,
    retryable: false,
    message: 'This Idempotency-Key was already used for another request.',
  },
  IDEMPOTENCY_KEY_IN_FLIGHT: {
    status: 409,
    retryable: true,
    message:
      'A request with this Idempotency-Key is still running; retry after the indicated time.',
  },
  SUBSCRIPTION_LIMIT_REACHED: {
    status: 429,
    retryable: false,
    message: 'This websocket already runs as many subscriptions as it may.',
  },
  INTERNAL_ERROR: {
    status: 500,
    retryable: true,
    message: 'An internal error occurred; quote the correlation id.',
  },
  SERVICE_UNAVAILABLE: {
    status: 503,
    retryable: true,
    message: 'A dependency is not ready; retry shortly.',
  },
  GRAPHQL_QUERY_TOO_DEEP: {
    status: 400,
    retryable: false,
    message: 'The query nests deeper than the limit.',
  },
  GRAPHQL_QUERY_TOO_COSTLY: {
    status: 400,
    retryable: false,
    message: 'The query selects more fields than the cost limit.',
  },
  GRAPHQL_VALIDATION_FAILED: {
    status: 400,
    retryable: false,
    message: 'The GraphQL document does not validate.',
  },
  GRAPHQL_QUERY_TOO_LARGE: {
    status: 400,
    retryable: false,
    message: 'The query exceeds a size limit (tokens, fields, aliases, root fields or mutations).',
  },
  GRAPHQL_OPERATION_NOT_FOUND: {
    status: 400,
    retryable: false,
    message: 'The document holds no operation to run under this operationName.',
  },
  GRAPHQL_SUBSCRIPTION_NEEDS_WEBSOCKET: {
    status: 400,
    retryable: false,
    message: 'Subscriptions are served over a websocket on /graphql, not over HTTP.',
  },

  // Authentication and authorisation.
  AUTH_REQUIRED: { status: 401, retryable: false, message: 'This operation needs a credential.' },
  ADMIN_AUTH_REQUIRED: {
    status: 401,
    retryable: false,
    message: 'This route needs an admin bearer token.',
  },
  SESSION_INVALID: {
    status: 401,
    retryable: false,
    message: 'The session is invalid or expired; sign in again.',
  },
  SIWE_INVALID: {
    status: 401,
    retryable: false,
    message: 'The sign-in message or signature is invalid; sign again.',
  },
  SIWE_NONCE_INVALID: {
    status: 401,
    retryable: false,
    message: 'The sign-in nonce is unknown, used or expired; request a new one.',
  },
  NOT_POLICY_OWNER: {
    status: 403,
    retryable: false,
    message: 'The signing address does not own this policy.',
  },
  FORBIDDEN: {
    status: 403,
    retryable: false,
    message: 'This credential may not perform this operation.',
  },
  PAID_ROUTE_ONLY: {
    status: 403,
    retryable: false,
    message: 'This operation runs only through its priced REST route, paid with x402.',
  },

  // Policies.
  POLICY_ID_REQUIRED: { status: 400, retryable: false, message: 'A policyId is required.' },
  POLICY_RULES_INVALID: {
    status: 400,
    retryable: false,
    message: 'The policy document is invalid.',
  },
  POLICY_NOT_FOUND: { status: 404, retryable: false, message: 'No policy with this id.' },
  RANGE_TOO_LONG: {
    status: 400,
    retryable: false,
    message: 'The range is longer than a what-if replays (92 days).',
  },
  RULES_HASH_MISMATCH: {
    status: 409,
    retryable: false,
    message: 'The on-chain policy hash differs from the stored one.',
  },
  POLICY_REGISTRY_NOT_CONFIGURED: {
    status: 503,
    retryable: false,
    message: 'No policy registry is configured on this instance.',
  },
  POLICY_REGISTRATION_PENDING: {
    status: 409,
    retryable: true,
    message: 'The registration transaction is not confirmed yet; sync again once it is mined.',
  },
  POLICY_REGISTRATION_INVALID: {
    status: 409,
    retryable: false,
    message: 'The transaction did not register or update this policy in the configured registry.',
  },

  // Intents and decisions.
  INTENT_MALFORMED: { status: 400, retryable: false, message: 'The spend intent is malformed.' },
  INTENT_NOT_FOUND: {
    status: 404,
    retryable: false,
    message: 'No intent with this hash on this instance.',
  },
  RECEIPT_ID_INVALID: {
    status: 400,
    retryable: false,
    message: 'A receiptId is 0x followed by 64 hex characters.',
  },
  ESCALATION_NOT_FOUND: {
    status: 404,
    retryable: false,
    message: 'No escalation with this pollRef.',
  },
  ESCALATION_NOT_PENDING: {
    status: 409,
    retryable: false,
    message: 'The escalation is already decided or expired; nothing changed.',
  },
  ESCALATION_SIGNATURE_INVALID: {
    status: 403,
    retryable: false,
    message: 'The signature over the intent is not the policy owner’s.',
  },
  CHANNEL_LINK_INVALID: {
    status: 400,
    retryable: false,
    message: 'The channel link code is unknown, used or expired.',
  },
  CHANNEL_BINDING_NOT_FOUND: {
    status: 404,
    retryable: false,
    message: 'No channel binding with this id.',
  },
  WEBHOOK_ENDPOINT_NOT_FOUND: {
    status: 404,
    retryable: false,
    message: 'No webhook endpoint with this id.',
  },
  WEBHOOK_DELIVERY_NOT_FOUND: {
    status: 404,
    retryable: false,
    message: 'No webhook delivery with this id.',
  },
  CHANNEL_NOT_CONFIGURED: {
    status: 503,
    retryable: false,
    message: 'This channel is not configured on this instance.',
  },
  CHANNEL_REQUEST_UNVERIFIED: {
    status: 401,
    retryable: false,
    message: 'The channel request’s secret token or signature did not verify.',
  },

  // Catalog and gated capabilities (refusals are 409 and final).
  PROVIDER_NOT_FOUND: { status: 404, retryable: false, message: 'No provider with this id.' },
  CAPABILITY_NOT_FOUND: { status: 404, retryable: false, message: 'No capability with this id.' },
  CAPABILITY_NOT_VERIFIED: {
    status: 409,
    retryable: false,
    message: 'The capability’s effective maturity is not verified.',
  },
  DOMAIN_REGISTRATION_GATED: {
    status: 409,
    retryable: false,
    message: 'Domain registration and renewal are gated.',
  },
  SHOPPING_GATED: { status: 409, retryable: false, message: 'Shopping is gated.' },
  GIFT_ORDERING_GATED: { status: 409, retryable: false, message: 'Gift ordering is gated.' },
  TRAVEL_BOOKING_GATED: { status: 409, retryable: false, message: 'Travel booking is gated.' },
  NOTIFICATION_SENDING_GATED: {
    status: 409,
    retryable: false,
    message: 'Notification sending is gated.',
  },
  SOLANA_SETTLEMENT_GATED: {
    status: 409,
    retryable: false,
    message: 'Solana settlement is gated.',
  },
  TEMPO_SETTLEMENT_GATED: { status: 409, retryable: false, message: 'Tempo settlement is gated.' },

  // Consumer intents and execution (core/consumerErrorCodes.ts).
  ...CONSUMER_ERROR_CODES,

  // Payments on the service's own paid routes.
  PAYMENT_SETTLEMENT_PENDING: {
    status: 503,
    retryable: true,
    message: 'The payment was sent and is not confirmed yet; present the same payment again later.',
  },
  PAYMENT_IDENTIFIER_INVALID: {
    status: 400,
    retryable: false,
    message: 'The payment-identifier id must be 16 to 128 letters, digits, hyphens or underscores.',
  },
  PAYMENT_IDENTIFIER_CONFLICT: {
    status: 409,
    retryable: false,
    message: 'This payment identifier already names another payment; nothing was charged.',
  },

  // Trust scores.
  SCORE_INSUFFICIENT_HISTORY: {
    status: 422,
    retryable: false,
    message: 'Too few finished outcomes to compute a score; no number is made up.',
  },

  // Ledger.
  LEDGER_GROUP_UNBALANCED: {
    status: 400,
    retryable: false,
    message: 'A ledger group must sum to zero.',
  },
  LEDGER_GROUP_INVALID: { status: 400, retryable: false, message: 'The ledger group is invalid.' },
  LEDGER_GROUP_NOT_FOUND: {
    status: 404,
    retryable: false,
    message: 'No ledger group with this id.',
  },
  LEDGER_ALREADY_REVERSED: {
    status: 409,
    retryable: false,
    message: 'This ledger group has already been reversed.',
  },
  LEDGER_IDEMPOTENCY_CONFLICT: {
    status: 409,
    retryable: false,
    message: 'This idempotency key was used for a different posting.',
  },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERROR_CODES;

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(ERROR_CODES, value);
}

/** One field-level problem, as listed in `details` of INTENT_MALFORMED and POLICY_RULES_INVALID. */
export interface FieldError {
  readonly field: string;
  readonly reason: string;
}

/** A failure the service reports on purpose: a code from the registry plus optional details. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details?: unknown;

  constructor(code: ErrorCode, message?: string, details?: unknown, options?: { cause?: unknown }) {
    super(message ?? ERROR_CODES[code].message, options);
    this.name = 'AppError';
    this.code = code;
    this.details = details;
  }

  get status(): number {
    return ERROR_CODES[this.code].status;
  }

  get retryable(): boolean {
    return ERROR_CODES[this.code].retryable;
  }
}

/** The error body of every REST failure: `{code, message, retryable, docsUrl}` plus optional extras. */
export interface ErrorBody {
  code: ErrorCode;
  message: string;
  retryable: boolean;
  docsUrl: string | null;
  details?: unknown;
  correlationId?: string;
}

/** docs/errors.md has one `### CODE` heading per code; Markdown renderers anchor it in lowercase. */
export function docsUrlFor(code: ErrorCode, docsBaseUrl: string | null): string | null {
  if (docsBaseUrl === null) return null;
  return `${docsBaseUrl.replace(/\/$/, '')}/errors.md#${code.toLowerCase()}`;
}

export function errorBody(
  code: ErrorCode,
  options: {
    message?: string;
    details?: unknown;
    correlationId?: string;
    docsBaseUrl: string | null;
  },
): ErrorBody {
  const spec = ERROR_CODES[code];
  const body: ErrorBody = {
    code,
    message: options.message ?? spec.message,
    retryable: spec.retryable,
    docsUrl: docsUrlFor(code, options.docsBaseUrl),
  };
  if (options.details !== undefined) body.details = options.details;
  if (options.correlationId !== undefined) body.correlationId = options.correlationId;
  return body;
}
