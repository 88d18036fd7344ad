// One error type for everything the SDK refuses or the service answers with an error: the
// service's own code (docs/errors.md) with its status, retryability, field details and
// correlation id, so an agent branches on `error.code` exactly as on the REST body. The few codes
// the SDK adds for what happens on the caller's side are listed in SDK_ERROR_CODES.
import type { ErrorCode } from '../../core/errors';

/** Codes the SDK raises itself (no service answer behind them); docs/agents.md lists them. */
export const SDK_ERROR_CODES = {
  /** The request never got an answer (connection refused or dropped) after every retry. */
  NETWORK_ERROR: 'NETWORK_ERROR',
  /** A wait (escalation, purchase) ran out of polls before the state was final. */
  WAIT_EXHAUSTED: 'WAIT_EXHAUSTED',
  /** A receipt's integrity.digest is not the digest of its own body. */
  RECEIPT_DIGEST_MISMATCH: 'RECEIPT_DIGEST_MISMATCH',
  /**
   * A priced call was not paid: no payer, or the x402 client refused the 402's terms (another
   * asset or network, or more than the cap). Nothing was signed.
   */
  PAYMENT_NOT_MADE: 'PAYMENT_NOT_MADE',
  /** The service answered something that is not its documented shape. */
  UNEXPECTED_ANSWER: 'UNEXPECTED_ANSWER',
} as const;

export type SdkErrorCode = (typeof SDK_ERROR_CODES)[keyof typeof SDK_ERROR_CODES];

export class SpendControlError extends Error {
  /** The service's code (docs/errors.md), or one of SDK_ERROR_CODES. */
  readonly code: ErrorCode | SdkErrorCode;
  /** The HTTP status of the answer; null when the SDK refused before or without one. */
  readonly status: number | null;
  readonly retryable: boolean;
  readonly details: unknown;
  readonly correlationId: string | null;
  readonly docsUrl: string | null;

  constructor(
    code: ErrorCode | SdkErrorCode,
    message: string,
    extra: {
      status?: number | null;
      retryable?: boolean;
      details?: unknown;
      correlationId?: string | null;
      docsUrl?: string | null;
    } = {},
  ) {
    super(message);
    this.name = 'SpendControlError';
    this.code = code;
    this.status = extra.status ?? null;
    this.retryable = extra.retryable ?? false;
    this.details = extra.details;
    this.correlationId = extra.correlationId ?? null;
    this.docsUrl = extra.docsUrl ?? null;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The error a non-2xx answer stands for, from the service's error body when it has one. */
export function errorFromAnswer(status: number, body: unknown): SpendControlError {
  if (isRecord(body) && typeof body.code === 'string') {
    return new SpendControlError(
      body.code as ErrorCode,
      typeof body.message === 'string' ? body.message : body.code,
      {
        status,
        retryable: body.retryable === true,
        details: body.details,
        correlationId: typeof body.correlationId === 'string' ? body.correlationId : null,
        docsUrl: typeof body.docsUrl === 'string' ? body.docsUrl : null,
      },
    );
  }
  if (status === 402)
    return new SpendControlError('PAYMENT_NOT_MADE', 'The call is priced and was not paid.', {
      status,
    });
  return new SpendControlError('UNEXPECTED_ANSWER', `the service answered ${status}`, {
    status,
    details: body,
  });
}
