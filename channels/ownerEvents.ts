// The owner's outbound events on the wire (DECISIONS "Outbound events", "Webhook endpoints"): the
// body `{id, type, occurredAt, data}`, the `x-signature: t=<unix>,v1=<hex HMAC-SHA256 of
// "<t>.<body>">` header, the receiver's check of it (constant time, bounded clock skew), and one
// signed POST to an endpoint with a 10 s limit. A 2xx is delivered; anything else is a
// ChannelDeliveryError the delivery job turns into a retry. Knows no database and no schedule.
import type { OwnerEventBody } from '../core/ownerEvents/types';
import { ChannelDeliveryError } from './errors';
import { DELIVERY_TIMEOUT_MS, type FetchLike, hostOf, postToPeer } from './http';
import {
  DEFAULT_TOLERANCE_SECONDS,
  constantTimeEqualText,
  hmacSha256Hex,
  isFreshTimestamp,
  singleHeaderValue,
  unixSeconds,
} from './signing';

export const EVENT_SIGNATURE_HEADER = 'x-signature';
export const EVENT_ID_HEADER = 'x-event-id';
/** An event endpoint's secret: 32 random bytes as hex. */
export const EVENT_SECRET_BYTES = 32;

const SIGNATURE_VALUE = /^t=([0-9]{1,12}),v1=([0-9a-f]{64})$/;

/** The exact bytes POSTed (and signed): keys in the documented order. */
export function eventBodyText(event: OwnerEventBody): string {
  return JSON.stringify({
    id: event.id,
    type: event.type,
    occurredAt: event.occurredAt,
    data: event.data,
  });
}

/** The `x-signature` value for `body` signed at `timestamp` (unix seconds). */
export function signEventBody(secret: string, timestamp: number, body: string): string {
  return `t=${timestamp},v1=${hmacSha256Hex(secret, `${timestamp}.${body}`)}`;
}

/**
 * A receiver's check: one `x-signature` header, its time within `toleranceSeconds` of `now`, and
 * its v1 HMAC over exactly these bytes, compared in constant time.
 */
export function verifyEventSignature(check: {
  readonly secret: string;
  readonly header: string | readonly string[] | null | undefined;
  readonly rawBody: string;
  readonly now: Date;
  readonly toleranceSeconds?: number;
}): boolean {
  const value = singleHeaderValue(check.header);
  if (value === null || check.secret.length === 0) return false;
  const match = SIGNATURE_VALUE.exec(value.trim());
  if (match === null) return false;
  const tolerance = check.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (!isFreshTimestamp(match[1]!, check.now, tolerance)) return false;
  return constantTimeEqualText(
    signEventBody(check.secret, Number(match[1]), check.rawBody),
    value.trim(),
  );
}

/** What one attempt got back: the status (2xx: delivered). */
export interface EventPostResult {
  readonly status: number;
}

/** POSTs the event signed with `secret`; throws ChannelDeliveryError unless the answer is a 2xx. */
export async function postOwnerEvent(post: {
  readonly url: string;
  readonly secret: string;
  readonly event: OwnerEventBody;
  readonly sentAt: Date;
  readonly fetch?: FetchLike;
  readonly timeoutMs?: number;
}): Promise<EventPostResult> {
  const body = eventBodyText(post.event);
  const response = await postToPeer({
    kind: 'webhook',
    url: post.url,
    fetch: post.fetch,
    timeoutMs: post.timeoutMs ?? DELIVERY_TIMEOUT_MS,
    body,
    headers: {
      'content-type': 'application/json',
      [EVENT_SIGNATURE_HEADER]: signEventBody(post.secret, unixSeconds(post.sentAt), body),
      [EVENT_ID_HEADER]: post.event.id,
    },
  });
  if (response.status < 200 || response.status > 299) {
    throw new ChannelDeliveryError(
      'webhook',
      `${hostOf(post.url)} answered HTTP ${response.status}`,
      { retryable: true, reason: 'HTTP_STATUS', status: response.status },
    );
  }
  return { status: response.status };
}
