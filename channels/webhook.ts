// The webhook channel: an HMAC-signed JSON POST of the notice (code included, so the owner's
// system can answer) to the owner's URL, and the checks on the owner's signed reply. A consumer
// intent's outcome is POSTed and signed the same way, as `consumer_intent.outcome` (no code).
// Both directions sign `<timestamp>.<rawBody>` with the secret shared at binding time.
import { ChannelDeliveryError } from './errors';
import {
  type FetchLike,
  checkTimeoutMs,
  hostOf,
  isRetryableStatus,
  postToPeer,
  retryAfterSeconds,
} from './http';
import {
  formatExpiry,
  isHttpUrl,
  noticeProblem,
  parseReplyText,
  renderNoticeText,
  replyCommand,
} from './message';
import { describeReviewReason, outcomeProblem, renderOutcomeText } from './outcome';
import {
  DEFAULT_TOLERANCE_SECONDS,
  constantTimeEqualText,
  hmacSha256Hex,
  isFreshTimestamp,
  singleHeaderValue,
  unixSeconds,
} from './signing';
import { renderResolutionText } from './resolution';
import type {
  ResolutionNotice,
  ChannelAdapter,
  ChannelTarget,
  DeliveryResult,
  EscalationNotice,
  OutcomeNotice,
  ParsedReply,
} from './types';
import { isEscalationPollRef } from '../core/canon/id-shapes';

export const WEBHOOK_TIMESTAMP_HEADER = 'x-spend-control-timestamp';
export const WEBHOOK_SIGNATURE_HEADER = 'x-spend-control-signature';
export const WEBHOOK_EVENT_REQUESTED = 'escalation.requested';
export const WEBHOOK_EVENT_REPLY = 'escalation.reply';
export const WEBHOOK_EVENT_OUTCOME = 'consumer_intent.outcome';
export const WEBHOOK_EVENT_RESOLVED = 'escalation.resolved';
/** A webhook secret shorter than this is guessable; binding should refuse it, delivery does too. */
export const MIN_WEBHOOK_SECRET_CHARS = 16;
export const MAX_WEBHOOK_URL_CHARS = 2_048;
/** A reply is one small JSON object. */
export const MAX_WEBHOOK_REPLY_BYTES = 4 * 1024;

const SIGNATURE_PATTERN = /^v1=([0-9a-f]{64})$/;

export interface WebhookAdapterOptions {
  readonly fetch?: FetchLike;
  /** Signs with this clock's time; defaults to the system clock. */
  readonly now?: () => Date;
  /** Where the owner's system POSTs its signed reply; sent in every payload when set. */
  readonly replyUrl?: string;
  /** Default DELIVERY_TIMEOUT_MS. */
  readonly timeoutMs?: number;
}

/** The JSON body POSTed to the owner. Field names are the wire contract; add, never rename. */
export interface WebhookEscalationPayload {
  readonly type: typeof WEBHOOK_EVENT_REQUESTED;
  readonly pollRef: string;
  readonly policyId: string;
  readonly policyName: string | null;
  readonly amount: string;
  readonly asset: string;
  readonly network: string;
  readonly recipient: string;
  readonly item: string;
  readonly rule: { readonly id: string; readonly name: string; readonly reason: string };
  readonly expiresAt: string;
  /** What happens when nobody answers in time. */
  readonly onExpiry: 'DENIED';
  readonly code: string;
  readonly reply: { readonly approve: string; readonly deny: string };
  readonly replyUrl?: string;
  readonly dashboardUrl: string;
  /** The same plain text the chat channels show. */
  readonly text: string;
  readonly sentAt: string;
}

/** The JSON body POSTed when a consumer intent reaches an outcome. Add, never rename. No code. */
export interface WebhookOutcomePayload {
  readonly type: typeof WEBHOOK_EVENT_OUTCOME;
  readonly intentId: string;
  readonly outcome: OutcomeNotice['outcome'];
  readonly policyId: string;
  readonly policyName: string | null;
  readonly capability: string;
  readonly params: string;
  readonly amount: string;
  readonly asset: string;
  readonly network: string;
  readonly reason: { readonly code: string; readonly description: string | null } | null;
  /** The service's own finding on the delivery (never the merchant's word), when there is one. */
  readonly delivery: {
    readonly verified: boolean;
    readonly method: string;
    readonly source: string;
    readonly detail: string | null;
  } | null;
  readonly refund: { readonly amount: string } | null;
  /** MANUAL_REVIEW: a person decides; the service re-sends nothing meanwhile. */
  readonly humanReview: boolean;
  readonly occurredAt: string;
  readonly dashboardUrl: string;
  /** The same plain text the chat channels show. */
  readonly text: string;
  readonly sentAt: string;
}

/** The header value `v1=<hex hmac-sha256(secret, "<timestamp>.<rawBody>")>`. */
export function signWebhookBody(
  secret: string,
  timestamp: string | number,
  rawBody: string | Buffer,
): string {
  const body = typeof rawBody === 'string' ? rawBody : rawBody.toString('utf8');
  return `v1=${hmacSha256Hex(secret, `${timestamp}.${body}`)}`;
}

export interface WebhookReplyCheck {
  readonly secret: string;
  /** The x-spend-control-timestamp header as received. */
  readonly timestamp: string | readonly string[] | null | undefined;
  /** The x-spend-control-signature header as received. */
  readonly signature: string | readonly string[] | null | undefined;
  /** The body exactly as received, before any JSON parsing. */
  readonly rawBody: string | Buffer;
  readonly now: Date;
  readonly toleranceSeconds?: number;
}

/** True only for a fresh timestamp and a matching v1 signature over exactly these bytes. */
export function verifyWebhookReply(check: WebhookReplyCheck): boolean {
  const timestamp = singleHeaderValue(check.timestamp);
  const signature = singleHeaderValue(check.signature);
  if (typeof check.secret !== 'string' || check.secret.length === 0) return false;
  if (timestamp === null || signature === null || !SIGNATURE_PATTERN.test(signature.trim()))
    return false;
  if (!isFreshTimestamp(timestamp, check.now, check.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS))
    return false;
  return constantTimeEqualText(
    signWebhookBody(check.secret, timestamp, check.rawBody),
    signature.trim(),
  );
}

/**
 * The owner's reply body, `{"type":"escalation.reply","pollRef":"esc_…","reply":"APPROVE <code>"}`
 * (type optional). Parse only after verifyWebhookReply, except to find the pollRef whose secret
 * verifies it. Null when it is anything else.
 */
export function parseWebhookReplyBody(
  rawBody: string | Buffer,
): (ParsedReply & { pollRef: string }) | null {
  const text = typeof rawBody === 'string' ? rawBody : rawBody.toString('utf8');
  if (Buffer.byteLength(text, 'utf8') > MAX_WEBHOOK_REPLY_BYTES) return null;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const { type, pollRef, reply } = body as Record<string, unknown>;
  if (type !== undefined && type !== WEBHOOK_EVENT_REPLY) return null;
  if (!isEscalationPollRef(pollRef) || typeof reply !== 'string') return null;
  const parsed = parseReplyText(reply);
  return parsed === null ? null : { pollRef, ...parsed };
}

export function buildWebhookPayload(
  notice: EscalationNotice,
  sentAt: Date,
  replyUrl?: string,
): WebhookEscalationPayload {
  return {
    type: WEBHOOK_EVENT_REQUESTED,
    pollRef: notice.pollRef,
    policyId: notice.policyId,
    policyName: notice.policyName,
    amount: notice.amountDisplay,
    asset: notice.assetSymbol,
    network: notice.network,
    recipient: notice.recipient,
    item: notice.item,
    rule: { id: notice.ruleId, name: notice.ruleName, reason: notice.ruleReason },
    expiresAt: formatExpiry(notice.expiresAt),
    onExpiry: 'DENIED',
    code: notice.code,
    reply: {
      approve: replyCommand('APPROVE', notice.code),
      deny: replyCommand('DENY', notice.code),
    },
    ...(replyUrl === undefined ? {} : { replyUrl }),
    dashboardUrl: notice.dashboardUrl,
    text: renderNoticeText(notice, { now: sentAt }),
    sentAt: sentAt.toISOString(),
  };
}

export function buildWebhookOutcomePayload(
  notice: OutcomeNotice,
  sentAt: Date,
): WebhookOutcomePayload {
  return {
    type: WEBHOOK_EVENT_OUTCOME,
    intentId: notice.intentId,
    outcome: notice.outcome,
    policyId: notice.policyId,
    policyName: notice.policyName,
    capability: notice.capability,
    params: notice.params,
    amount: notice.amountDisplay,
    asset: notice.assetSymbol,
    network: notice.network,
    reason:
      notice.reasonCode === null
        ? null
        : {
            code: notice.reasonCode,
            description:
              notice.outcome === 'MANUAL_REVIEW' ? describeReviewReason(notice.reasonCode) : null,
          },
    delivery:
      notice.verification === null ? null : { ...notice.verification, detail: notice.detail },
    refund: notice.refundDisplay === null ? null : { amount: notice.refundDisplay },
    humanReview: notice.outcome === 'MANUAL_REVIEW',
    occurredAt: notice.occurredAt.toISOString(),
    dashboardUrl: notice.dashboardUrl,
    text: renderOutcomeText(notice),
    sentAt: sentAt.toISOString(),
  };
}

/** POSTs `rawBody` signed with the target's secret; a ChannelDeliveryError on any non-2xx. */
async function postSigned(
  options: WebhookAdapterOptions,
  target: ChannelTarget,
  secret: string,
  rawBody: string,
  sentAt: Date,
): Promise<DeliveryResult> {
  const timestamp = String(unixSeconds(sentAt));
  const response = await postToPeer({
    kind: 'webhook',
    url: target.address,
    fetch: options.fetch,
    timeoutMs: options.timeoutMs,
    body: rawBody,
    headers: {
      'content-type': 'application/json',
      [WEBHOOK_TIMESTAMP_HEADER]: timestamp,
      [WEBHOOK_SIGNATURE_HEADER]: signWebhookBody(secret, timestamp, rawBody),
    },
  });
  if (response.status < 200 || response.status > 299) {
    throw new ChannelDeliveryError(
      'webhook',
      `${hostOf(target.address)} answered HTTP ${response.status}`,
      {
        retryable: isRetryableStatus(response.status),
        reason: 'HTTP_STATUS',
        status: response.status,
        retryAfterSeconds: retryAfterSeconds(response.headers),
      },
    );
  }
  return { externalId: null };
}

export function createWebhookAdapter(options: WebhookAdapterOptions = {}): ChannelAdapter {
  checkTimeoutMs('webhook', options.timeoutMs);
  const now = options.now ?? (() => new Date());
  if (options.replyUrl !== undefined && !isHttpUrl(options.replyUrl)) {
    throw new RangeError('webhook replyUrl must be an http(s) URL');
  }
  return {
    kind: 'webhook',
    async send(target: ChannelTarget, notice: EscalationNotice): Promise<DeliveryResult> {
      const secret = checkTarget(target);
      const problem = noticeProblem(notice);
      if (problem !== null) throw invalid(`notice is malformed: ${problem}`);
      const sentAt = now();
      const rawBody = JSON.stringify(buildWebhookPayload(notice, sentAt, options.replyUrl));
      return postSigned(options, target, secret, rawBody, sentAt);
    },
    async sendOutcome(target: ChannelTarget, notice: OutcomeNotice): Promise<DeliveryResult> {
      const secret = checkTarget(target);
      const problem = outcomeProblem(notice);
      if (problem !== null) throw invalid(`notice is malformed: ${problem}`);
      const sentAt = now();
      const rawBody = JSON.stringify(buildWebhookOutcomePayload(notice, sentAt));
      return postSigned(options, target, secret, rawBody, sentAt);
    },
    async sendResolution(target: ChannelTarget, notice: ResolutionNotice): Promise<DeliveryResult> {
      const secret = checkTarget(target);
      const sentAt = now();
      const rawBody = JSON.stringify({
        type: WEBHOOK_EVENT_RESOLVED,
        pollRef: notice.pollRef,
        outcome: notice.outcome,
        policyId: notice.policyId,
        policyName: notice.policyName,
        amount: notice.amountDisplay,
        asset: notice.assetSymbol,
        item: notice.item,
        resolvedAt: notice.resolvedAt.toISOString(),
        resolvedVia: notice.resolvedVia,
        dashboardUrl: notice.dashboardUrl,
        text: renderResolutionText(notice),
        sentAt: sentAt.toISOString(),
      });
      return postSigned(options, target, secret, rawBody, sentAt);
    },
  };
}

function checkTarget(target: ChannelTarget): string {
  if (target.kind !== 'webhook') throw invalid(`target kind is ${target.kind}`);
  if (target.address.length > MAX_WEBHOOK_URL_CHARS || !isHttpUrl(target.address)) {
    throw invalid('target address is not an http(s) URL');
  }
  const url = new URL(target.address);
  if (url.username !== '' || url.password !== '')
    throw invalid('target URL must not carry credentials');
  if (typeof target.secret !== 'string' || target.secret.length < MIN_WEBHOOK_SECRET_CHARS) {
    throw invalid(
      `target has no webhook secret of at least ${MIN_WEBHOOK_SECRET_CHARS} characters`,
    );
  }
  return target.secret;
}

function invalid(message: string): ChannelDeliveryError {
  return new ChannelDeliveryError('webhook', message, {
    retryable: false,
    reason: 'INVALID_INPUT',
  });
}
