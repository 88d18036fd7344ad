// The Slack channel through the Web API (base URL configurable for the devnet stand-in):
// chat.postMessage with Approve/Deny buttons (a consumer intent's outcome: plain text only), and
// the checks on what Slack POSTs back when a button is clicked: the v0 request signature and the
// block_actions payload. The bot token stays here.
import { ChannelDeliveryError, scrubPeerText } from './errors';
import {
  type FetchLike,
  checkTimeoutMs,
  isRetryableStatus,
  isObject,
  parseJsonObject,
  postToPeer,
  retryAfterSeconds,
} from './http';
import { isHttpUrl, noticeProblem, renderNoticeText, replyCommand } from './message';
import { outcomeProblem, renderOutcomeText } from './outcome';
import {
  DEFAULT_TOLERANCE_SECONDS,
  constantTimeEqualText,
  hmacSha256Hex,
  isFreshTimestamp,
  singleHeaderValue,
} from './signing';
import { renderResolutionText } from './resolution';
import type {
  ResolutionNotice,
  ChannelAdapter,
  ChannelTarget,
  DeliveryResult,
  EscalationNotice,
  OutcomeNotice,
} from './types';

export const SLACK_TIMESTAMP_HEADER = 'x-slack-request-timestamp';
export const SLACK_SIGNATURE_HEADER = 'x-slack-signature';
export const SLACK_APPROVE_ACTION_ID = 'escalation_approve';
export const SLACK_DENY_ACTION_ID = 'escalation_deny';
/** Slack's limit for a section's text. */
export const SLACK_MAX_SECTION_CHARS = 3_000;
/** Interaction payloads carry the whole message; far below this in practice. */
export const MAX_SLACK_INTERACTION_BYTES = 256 * 1024;
/** Channel (C…, G…), DM (D…) or user (U…, W…) ids. */
const CONVERSATION_ID_PATTERN = /^[CDGUW][A-Z0-9]{2,31}$/;
const SIGNATURE_PATTERN = /^v0=[0-9a-f]{64}$/;
/** Slack `error` words that may pass if tried again; every other one will not. */
const RETRYABLE_SLACK_ERRORS = new Set([
  'ratelimited',
  'internal_error',
  'fatal_error',
  'service_unavailable',
  'request_timeout',
]);

export interface SlackAdapterOptions {
  /** e.g. https://slack.com/api, or the stand-in's url. */
  readonly apiBaseUrl: string;
  readonly botToken: string;
  readonly fetch?: FetchLike;
  /** Default DELIVERY_TIMEOUT_MS. */
  readonly timeoutMs?: number;
  readonly now?: () => Date;
}

/** A clicked button, read from Slack's block_actions payload. */
export interface SlackInteraction {
  readonly userId: string;
  readonly channelId: string;
  /** The button's value: `APPROVE <code>` or `DENY <code>`. */
  readonly value: string;
  readonly actionId: string | null;
  /** Where a follow-up message for the clicker may be POSTed. */
  readonly responseUrl: string | null;
}

export interface SlackSignatureCheck {
  readonly signingSecret: string;
  /** X-Slack-Request-Timestamp as received. */
  readonly timestamp: string | readonly string[] | null | undefined;
  /** X-Slack-Signature as received. */
  readonly signature: string | readonly string[] | null | undefined;
  /** The form body exactly as received. */
  readonly rawBody: string | Buffer;
  readonly now: Date;
  readonly toleranceSeconds?: number;
}

/** Slack's v0 scheme: `v0=` + hex HMAC-SHA256(signingSecret, `v0:<ts>:<rawBody>`), five-minute window. */
export function verifySlackSignature(check: SlackSignatureCheck): boolean {
  const timestamp = singleHeaderValue(check.timestamp);
  const signature = singleHeaderValue(check.signature);
  if (typeof check.signingSecret !== 'string' || check.signingSecret.length === 0) return false;
  if (timestamp === null || signature === null || !SIGNATURE_PATTERN.test(signature)) return false;
  if (!isFreshTimestamp(timestamp, check.now, check.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS))
    return false;
  const body = typeof check.rawBody === 'string' ? check.rawBody : check.rawBody.toString('utf8');
  return constantTimeEqualText(
    `v0=${hmacSha256Hex(check.signingSecret, `v0:${timestamp}:${body}`)}`,
    signature,
  );
}

/** The clicked button of a block_actions interaction (`payload=<json>` form body); null otherwise. */
export function parseSlackInteraction(formBody: string): SlackInteraction | null {
  if (
    typeof formBody !== 'string' ||
    Buffer.byteLength(formBody, 'utf8') > MAX_SLACK_INTERACTION_BYTES
  )
    return null;
  const payloadText = new URLSearchParams(formBody).get('payload');
  if (payloadText === null) return null;
  let payload: unknown;
  try {
    payload = JSON.parse(payloadText);
  } catch {
    return null;
  }
  if (!isObject(payload) || payload.type !== 'block_actions') return null;
  const userId = isObject(payload.user) ? payload.user.id : undefined;
  const channelId = isObject(payload.channel)
    ? payload.channel.id
    : isObject(payload.container)
      ? payload.container.channel_id
      : undefined;
  const action =
    Array.isArray(payload.actions) && payload.actions.length === 1 ? payload.actions[0] : undefined;
  if (typeof userId !== 'string' || typeof channelId !== 'string' || !isObject(action)) return null;
  if (typeof action.value !== 'string') return null;
  return {
    userId,
    channelId,
    value: action.value,
    actionId: typeof action.action_id === 'string' ? action.action_id : null,
    responseUrl: isHttpUrl(payload.response_url) ? payload.response_url : null,
  };
}

/** Slack reads `text` as mrkdwn; these three characters must be escaped in it. */
export function escapeSlackText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function buildSlackMessage(
  channel: string,
  notice: EscalationNotice,
  now: Date,
): Record<string, unknown> {
  const text = renderNoticeText(notice, { now });
  return {
    channel,
    text: escapeSlackText(text),
    unfurl_links: false,
    blocks: [
      { type: 'section', text: { type: 'plain_text', text, emoji: false } },
      {
        type: 'actions',
        block_id: 'escalation_decision',
        elements: [
          button(
            SLACK_APPROVE_ACTION_ID,
            'Approve',
            'primary',
            replyCommand('APPROVE', notice.code),
          ),
          button(SLACK_DENY_ACTION_ID, 'Deny', 'danger', replyCommand('DENY', notice.code)),
        ],
      },
    ],
  };
}

/** A consumer intent's outcome: the same plain text as a section, and no actions block. */
export function buildSlackOutcomeMessage(
  channel: string,
  notice: OutcomeNotice,
): Record<string, unknown> {
  const text = renderOutcomeText(notice);
  return {
    channel,
    text: escapeSlackText(text),
    unfurl_links: false,
    blocks: [{ type: 'section', text: { type: 'plain_text', text, emoji: false } }],
  };
}

interface SlackConnection {
  readonly base: string;
  readonly botToken: string;
  readonly fetch: FetchLike | undefined;
  readonly timeoutMs: number | undefined;
}

/** chat.postMessage of a built message; Slack's ts, or a ChannelDeliveryError saying whether to retry. */
async function postMessage(
  connection: SlackConnection,
  message: Record<string, unknown>,
): Promise<DeliveryResult> {
  const { botToken } = connection;
  if (renderedLength(message) > SLACK_MAX_SECTION_CHARS)
    throw invalid(`text is longer than ${SLACK_MAX_SECTION_CHARS} characters`);
  const response = await postToPeer({
    kind: 'slack',
    url: `${connection.base}/chat.postMessage`,
    fetch: connection.fetch,
    timeoutMs: connection.timeoutMs,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      authorization: `Bearer ${botToken}`,
    },
    body: JSON.stringify(message),
  });
  const answer = parseJsonObject(response.text);
  if (response.status < 200 || response.status > 299) {
    const peerError = scrubPeerText(answer?.error, [botToken]);
    throw new ChannelDeliveryError('slack', `chat.postMessage answered HTTP ${response.status}`, {
      retryable: isRetryableStatus(response.status),
      reason: 'HTTP_STATUS',
      status: response.status,
      peerError,
      retryAfterSeconds: retryAfterSeconds(response.headers),
    });
  }
  if (answer === null) {
    throw new ChannelDeliveryError('slack', 'chat.postMessage answered something other than JSON', {
      retryable: false,
      reason: 'BAD_RESPONSE',
      status: response.status,
    });
  }
  if (answer.ok !== true) {
    const peerError = scrubPeerText(answer.error, [botToken]) ?? 'unknown_error';
    throw new ChannelDeliveryError('slack', `chat.postMessage refused: ${peerError}`, {
      retryable: RETRYABLE_SLACK_ERRORS.has(peerError),
      reason: 'REJECTED',
      status: response.status,
      peerError,
      retryAfterSeconds: retryAfterSeconds(response.headers),
    });
  }
  return { externalId: typeof answer.ts === 'string' ? answer.ts : null };
}

function checkTarget(target: ChannelTarget): string {
  if (target.kind !== 'slack') throw invalid(`target kind is ${target.kind}`);
  if (!CONVERSATION_ID_PATTERN.test(target.address))
    throw invalid('target address is not a Slack channel or user id');
  return target.address;
}

export function createSlackAdapter(options: SlackAdapterOptions): ChannelAdapter {
  if (!isHttpUrl(options.apiBaseUrl))
    throw new RangeError('slack apiBaseUrl must be an http(s) URL');
  if (
    typeof options.botToken !== 'string' ||
    options.botToken.length === 0 ||
    /\s/.test(options.botToken)
  ) {
    throw new RangeError('slack botToken must be a non-empty token without spaces');
  }
  checkTimeoutMs('slack', options.timeoutMs);
  const connection: SlackConnection = {
    base: options.apiBaseUrl.replace(/\/+$/, ''),
    botToken: options.botToken,
    fetch: options.fetch,
    timeoutMs: options.timeoutMs,
  };
  const now = options.now ?? (() => new Date());
  return {
    kind: 'slack',
    async send(target: ChannelTarget, notice: EscalationNotice): Promise<DeliveryResult> {
      const channel = checkTarget(target);
      const problem = noticeProblem(notice);
      if (problem !== null) throw invalid(`notice is malformed: ${problem}`);
      return postMessage(connection, buildSlackMessage(channel, notice, now()));
    },
    async sendOutcome(target: ChannelTarget, notice: OutcomeNotice): Promise<DeliveryResult> {
      const channel = checkTarget(target);
      const problem = outcomeProblem(notice);
      if (problem !== null) throw invalid(`notice is malformed: ${problem}`);
      return postMessage(connection, buildSlackOutcomeMessage(channel, notice));
    },
    async sendResolution(target: ChannelTarget, notice: ResolutionNotice): Promise<DeliveryResult> {
      const channel = checkTarget(target);
      return postMessage(connection, { channel, text: renderResolutionText(notice) });
    },
  };
}

function renderedLength(message: Record<string, unknown>): number {
  const [section] = message.blocks as [{ text: { text: string } }];
  return section.text.text.length;
}

function button(
  actionId: string,
  label: string,
  style: 'primary' | 'danger',
  value: string,
): Record<string, unknown> {
  return {
    type: 'button',
    action_id: actionId,
    style,
    text: { type: 'plain_text', text: label },
    value,
  };
}

function invalid(message: string): ChannelDeliveryError {
  return new ChannelDeliveryError('slack', message, { retryable: false, reason: 'INVALID_INPUT' });
}
