// The one error a channel adapter throws. It says whether trying again later can help and why it
// failed, as a machine reason. Messages name the peer and the failure, never a token, a signing
// secret, a webhook secret, a full webhook URL or the reply code; no raw cause is attached.
import type { ChannelKind } from './types';

export type DeliveryFailureReason =
  /** The target or notice is unusable (bad address, missing webhook secret, malformed code). */
  | 'INVALID_INPUT'
  /** Connection refused, reset, DNS failure. */
  | 'NETWORK'
  | 'TIMEOUT'
  /** The peer answered with a non-success HTTP status. */
  | 'HTTP_STATUS'
  /** The peer answered but refused (Telegram ok:false, Slack ok:false, SMTP rejection). */
  | 'REJECTED'
  /** The peer's answer could not be understood; the message may or may not have been delivered. */
  | 'BAD_RESPONSE';

export interface ChannelDeliveryErrorDetails {
  readonly retryable: boolean;
  readonly reason: DeliveryFailureReason;
  /** HTTP status, or SMTP reply code for email; null when there was no answer. */
  readonly status?: number | null;
  /** The peer's own error word (Slack `error`, Telegram `description`, SMTP error code), scrubbed. */
  readonly peerError?: string | null;
  /** From Retry-After or Telegram's parameters.retry_after, when the peer said so. */
  readonly retryAfterSeconds?: number | null;
}

export class ChannelDeliveryError extends Error {
  readonly kind: ChannelKind;
  readonly retryable: boolean;
  readonly reason: DeliveryFailureReason;
  readonly status: number | null;
  readonly peerError: string | null;
  readonly retryAfterSeconds: number | null;

  constructor(kind: ChannelKind, message: string, details: ChannelDeliveryErrorDetails) {
    super(`${kind} delivery failed: ${message}`);
    this.name = 'ChannelDeliveryError';
    this.kind = kind;
    this.retryable = details.retryable;
    this.reason = details.reason;
    this.status = details.status ?? null;
    this.peerError = details.peerError ?? null;
    this.retryAfterSeconds = details.retryAfterSeconds ?? null;
  }
}

/** Peer-supplied words go into errors and logs; bound them and cut out anything secret they echo. */
export const MAX_PEER_ERROR_CHARS = 200;

export function scrubPeerText(text: unknown, secrets: readonly string[]): string | null {
  if (typeof text !== 'string' || text.length === 0) return null;
  let scrubbed = text;
  for (const secret of secrets) {
    if (secret.length > 0) scrubbed = scrubbed.split(secret).join('[redacted]');
  }
  scrubbed = scrubbed.replace(/[\u0000-\u001f\u007f]+/g, ' ');
  return scrubbed.length > MAX_PEER_ERROR_CHARS
    ? `${scrubbed.slice(0, MAX_PEER_ERROR_CHARS)}…`
    : scrubbed;
}
