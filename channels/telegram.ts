// The Telegram channel through the Bot API (base URL configurable, so tests and `npm start` talk
// to the devnet stand-in): sendMessage with Approve/Deny buttons for an escalation, plain text for
// a consumer intent's outcome, and the reading of the updates Telegram POSTs back. The bot token
// is part of every API path; it never leaves this module.
import { ChannelDeliveryError, scrubPeerText } from './errors';
import {
  type FetchLike,
  checkTimeoutMs,
  isRetryableStatus,
  isObject,
  parseJsonObject,
  postToPeer,
} from './http';
import { isHttpUrl, noticeProblem, renderNoticeText, replyCommand } from './message';
import { outcomeProblem, renderOutcomeText } from './outcome';
import { constantTimeEqualText, singleHeaderValue } from './signing';
import { renderResolutionText } from './resolution';
import type {
  ResolutionNotice,
  ChannelAdapter,
  ChannelTarget,
  DeliveryResult,
  EscalationNotice,
  OutcomeNotice,
} from './types';

export const TELEGRAM_SECRET_TOKEN_HEADER = 'x-telegram-bot-api-secret-token';
/** Telegram's own limits. */
export const TELEGRAM_MAX_TEXT_CHARS = 4_096;
export const TELEGRAM_MAX_CALLBACK_ANSWER_CHARS = 200;
/** A numeric chat id (negative for groups) or an @channel username. */
const CHAT_ID_PATTERN = /^(-?[0-9]{1,20}|@[A-Za-z0-9_]{5,32})$/;
/** Telegram allows 1–256 of these characters in setWebhook's secret_token. */
const SECRET_TOKEN_PATTERN = /^[A-Za-z0-9_-]{1,256}$/;

export interface TelegramAdapterOptions {
  /** e.g. https://api.telegram.org, or the stand-in's url. */
  readonly apiBaseUrl: string;
  readonly botToken: string;
  readonly fetch?: FetchLike;
  /** Default DELIVERY_TIMEOUT_MS. */
  readonly timeoutMs?: number;
  /** The clock for "minutes from now" in the text; defaults to the system clock. */
  readonly now?: () => Date;
}

export interface TelegramAdapter extends ChannelAdapter {
  readonly kind: 'telegram';
  /** Stops the spinner on a pressed button; `text` shows as a small notice to the presser. */
  answerCallbackQuery(callbackQueryId: string, text?: string): Promise<void>;
  /** Registers where Telegram POSTs updates, and the secret it sends in TELEGRAM_SECRET_TOKEN_HEADER. */
  setWebhook(webhook: { url: string; secretToken: string }): Promise<void>;
}

/** One update that may carry a reply: a typed message, or a pressed inline button. */
export interface TelegramInbound {
  readonly senderChatId: string;
  readonly senderUserId: string | null;
  readonly text: string;
  /** Set for a pressed button; answer it with answerCallbackQuery. */
  readonly callbackQueryId: string | null;
  readonly updateId: number | null;
}

/** Where the Bot API is and how to reach it; the token stays inside this module. */
interface BotApiConnection {
  readonly base: string;
  readonly botToken: string;
  readonly fetch: FetchLike | undefined;
  readonly timeoutMs: number | undefined;
}

/**
 * One Bot API call: its `result` when Telegram answers ok, otherwise a ChannelDeliveryError with
 * Telegram's error_code, scrubbed description and retry_after.
 */
async function callBotApi(
  connection: BotApiConnection,
  method: string,
  params: Record<string, unknown>,
): Promise<unknown> {
  const { botToken } = connection;
  const response = await postToPeer({
    kind: 'telegram',
    url: `${connection.base}/bot${botToken}/${method}`,
    fetch: connection.fetch,
    timeoutMs: connection.timeoutMs,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(params),
  });
  const answer = parseJsonObject(response.text);
  if (answer?.ok === true && response.status >= 200 && response.status <= 299) return answer.result;
  const errorCode = typeof answer?.error_code === 'number' ? answer.error_code : response.status;
  const parameters = answer?.parameters as { retry_after?: unknown } | undefined;
  const retryAfter = typeof parameters?.retry_after === 'number' ? parameters.retry_after : null;
  const description = scrubPeerText(answer?.description, [botToken]);
  throw new ChannelDeliveryError(
    'telegram',
    `${method} refused: ${errorCode}${description ? ` ${description}` : ''}`,
    {
      retryable: isRetryableStatus(errorCode),
      reason: answer === null ? 'HTTP_STATUS' : 'REJECTED',
      status: response.status,
      peerError: description,
      retryAfterSeconds: retryAfter,
    },
  );
}

/** sendMessage to a checked chat; the message_id Telegram gives it. */
async function sendMessage(
  connection: BotApiConnection,
  target: ChannelTarget,
  text: string,
  extra: Record<string, unknown> = {},
): Promise<DeliveryResult> {
  if (target.kind !== 'telegram') throw invalid(`target kind is ${target.kind}`);
  if (!CHAT_ID_PATTERN.test(target.address))
    throw invalid('target address is not a Telegram chat id');
  if (text.length > TELEGRAM_MAX_TEXT_CHARS)
    throw invalid(`text is longer than ${TELEGRAM_MAX_TEXT_CHARS} characters`);
  const result = await callBotApi(connection, 'sendMessage', {
    chat_id: target.address,
    text,
    ...extra,
  });
  const messageId = (result as { message_id?: unknown } | null)?.message_id;
  if (typeof messageId !== 'number' || !Number.isSafeInteger(messageId)) {
    throw new ChannelDeliveryError('telegram', 'sendMessage answered ok without a message_id', {
      retryable: false,
      reason: 'BAD_RESPONSE',
    });
  }
  return { externalId: String(messageId) };
}

export function createTelegramAdapter(options: TelegramAdapterOptions): TelegramAdapter {
  if (!isHttpUrl(options.apiBaseUrl))
    throw new RangeError('telegram apiBaseUrl must be an http(s) URL');
  if (
    typeof options.botToken !== 'string' ||
    options.botToken.length === 0 ||
    /[\s/]/.test(options.botToken)
  ) {
    throw new RangeError('telegram botToken must be a non-empty token without spaces or slashes');
  }
  checkTimeoutMs('telegram', options.timeoutMs);
  const base = options.apiBaseUrl.replace(/\/+$/, '');
  const { botToken } = options;
  const now = options.now ?? (() => new Date());

  const connection: BotApiConnection = {
    base,
    botToken,
    fetch: options.fetch,
    timeoutMs: options.timeoutMs,
  };
  const callApi = (method: string, params: Record<string, unknown>): Promise<unknown> =>
    callBotApi(connection, method, params);

  return {
    kind: 'telegram',
    async send(target: ChannelTarget, notice: EscalationNotice): Promise<DeliveryResult> {
      const problem = noticeProblem(notice);
      if (problem !== null) throw invalid(`notice is malformed: ${problem}`);
      return sendMessage(connection, target, renderNoticeText(notice, { now: now() }), {
        reply_markup: {
          inline_keyboard: [
            [
              { text: 'Approve', callback_data: replyCommand('APPROVE', notice.code) },
              { text: 'Deny', callback_data: replyCommand('DENY', notice.code) },
            ],
          ],
        },
      });
    },
    async sendOutcome(target: ChannelTarget, notice: OutcomeNotice): Promise<DeliveryResult> {
      const problem = outcomeProblem(notice);
      if (problem !== null) throw invalid(`notice is malformed: ${problem}`);
      // Plain text, no buttons: there is nothing to answer.
      return sendMessage(connection, target, renderOutcomeText(notice));
    },
    async sendResolution(target: ChannelTarget, notice: ResolutionNotice): Promise<DeliveryResult> {
      return sendMessage(connection, target, renderResolutionText(notice));
    },
    async answerCallbackQuery(callbackQueryId: string, text?: string): Promise<void> {
      if (typeof callbackQueryId !== 'string' || !/^[0-9A-Za-z_-]{1,64}$/.test(callbackQueryId)) {
        throw invalid('callback query id is malformed');
      }
      const params: Record<string, unknown> = { callback_query_id: callbackQueryId };
      if (text !== undefined) params.text = text.slice(0, TELEGRAM_MAX_CALLBACK_ANSWER_CHARS);
      await callApi('answerCallbackQuery', params);
    },
    async setWebhook(webhook: { url: string; secretToken: string }): Promise<void> {
      if (!isHttpUrl(webhook.url)) throw invalid('webhook url is not an http(s) URL');
      if (!SECRET_TOKEN_PATTERN.test(webhook.secretToken))
        throw invalid('secret token must be 1-256 of A-Z a-z 0-9 _ -');
      await callApi('setWebhook', {
        url: webhook.url,
        secret_token: webhook.secretToken,
        allowed_updates: ['message', 'callback_query'],
      });
    },
  };
}

/**
 * The sender and text of a Telegram Update: `message.text`, or `callback_query.data` of a pressed
 * button (with the chat of the message the button belongs to). Null for every other update.
 */
export function parseTelegramUpdate(update: unknown): TelegramInbound | null {
  if (!isObject(update)) return null;
  const updateId = Number.isSafeInteger(update.update_id) ? (update.update_id as number) : null;
  if (isObject(update.message)) {
    const message = update.message;
    const chatId = idText(isObject(message.chat) ? message.chat.id : undefined);
    if (
      chatId === null ||
      typeof message.text !== 'string' ||
      message.text.length > TELEGRAM_MAX_TEXT_CHARS
    )
      return null;
    const userId = idText(isObject(message.from) ? message.from.id : undefined);
    return {
      senderChatId: chatId,
      senderUserId: userId,
      text: message.text,
      callbackQueryId: null,
      updateId,
    };
  }
  if (isObject(update.callback_query)) {
    const query = update.callback_query;
    const message = isObject(query.message) ? query.message : null;
    const chatId = idText(message !== null && isObject(message.chat) ? message.chat.id : undefined);
    if (chatId === null || typeof query.data !== 'string' || typeof query.id !== 'string')
      return null;
    const userId = idText(isObject(query.from) ? query.from.id : undefined);
    return {
      senderChatId: chatId,
      senderUserId: userId,
      text: query.data,
      callbackQueryId: query.id,
      updateId,
    };
  }
  return null;
}

/** Constant-time check of the X-Telegram-Bot-Api-Secret-Token header; an empty expectation never matches. */
export function verifyTelegramSecretToken(
  expected: string,
  headerValue: string | readonly string[] | null | undefined,
): boolean {
  const actual = singleHeaderValue(headerValue);
  if (typeof expected !== 'string' || expected.length === 0 || actual === null) return false;
  return constantTimeEqualText(expected, actual);
}

function invalid(message: string): ChannelDeliveryError {
  return new ChannelDeliveryError('telegram', message, {
    retryable: false,
    reason: 'INVALID_INPUT',
  });
}

/** Telegram ids are integers (up to 52 bits); some clients send them as strings. */
function idText(value: unknown): string | null {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  if (typeof value === 'string' && /^-?[0-9]{1,20}$/.test(value)) return value;
  return null;
}
