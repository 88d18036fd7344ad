// A local stand-in for the Telegram Bot API: sendMessage, answerCallbackQuery and setWebhook with
// Telegram's answer shapes, and the other direction too: an owner typing a reply or pressing an
// inline button becomes a genuine Update POSTed to the registered webhook with its secret token.
import { randomBytes } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import { FailureSwitch } from './failures';
import { DEFAULT_WAIT_TIMEOUT_MS, Inbox } from './inbox';
import { isRecord, parseJson } from './json';
import { serveOnLoopback } from './loopback';
import { isLoopbackHttpUrl, postToService } from './outbound';

export const TELEGRAM_STAND_IN_MAX_BODY_BYTES = 64 * 1024;
const MAX_TEXT_CHARS = 4_096;
const SECRET_TOKEN_PATTERN = /^[A-Za-z0-9_-]{1,256}$/;

export interface TelegramStandInOptions {
  readonly botToken: string;
  /** 0 (default) picks a free port. */
  readonly port?: number;
  /** The clock for `date` fields; defaults to the system clock. */
  readonly now?: () => Date;
}

export interface TelegramSentMessage {
  readonly messageId: number;
  readonly chatId: string;
  readonly text: string;
  /** reply_markup as received (inline_keyboard etc.), or null. */
  readonly replyMarkup: unknown;
  readonly date: number;
}

export interface TelegramCallbackAnswer {
  readonly callbackQueryId: string;
  readonly text: string | null;
}

export interface TelegramWebhook {
  readonly url: string;
  readonly secretToken: string | null;
}

export interface TelegramStandIn {
  /** The apiBaseUrl for the adapter: http://127.0.0.1:<port>. */
  readonly url: string;
  /** Every accepted sendMessage, in order. */
  readonly sent: readonly TelegramSentMessage[];
  readonly callbackAnswers: readonly TelegramCallbackAnswer[];
  /** What setWebhook registered last, or null. */
  readonly webhook: TelegramWebhook | null;
  waitForMessage(
    predicate?: (message: TelegramSentMessage) => boolean,
    timeoutMs?: number,
  ): Promise<TelegramSentMessage>;
  waitForCallbackAnswer(
    predicate?: (answer: TelegramCallbackAnswer) => boolean,
    timeoutMs?: number,
  ): Promise<TelegramCallbackAnswer>;
  /** The next `times` API calls answer `status` with Telegram's error body. */
  failNext(status: number, times?: number): void;
  /** The owner types `text` in chat `chatId`: a message Update to the webhook. Answers the HTTP status. */
  replyText(reply: {
    chatId: string | number;
    userId: string | number;
    text: string;
  }): Promise<number>;
  /**
   * The owner presses the inline button with callback_data `data` on the latest message in chat
   * `chatId` that has one: a callback_query Update to the webhook. Throws when no such button was
   * sent (Telegram offers no way to press a button that does not exist).
   */
  pressButton(press: {
    chatId: string | number;
    userId: string | number;
    data: string;
  }): Promise<number>;
  stop(): Promise<void>;
}

/** What the Bot API methods and the update sender share; the counters move as Telegram's do. */
interface TelegramBotState {
  readonly botToken: string;
  /** The `from` of the bot's own messages. */
  readonly bot: Record<string, unknown>;
  /** Unix seconds, for `date` fields. */
  readonly dateNow: () => number;
  readonly sent: Inbox<TelegramSentMessage>;
  readonly callbackAnswers: Inbox<TelegramCallbackAnswer>;
  readonly failures: FailureSwitch;
  /** callback_query ids pressed and not yet answered. */
  readonly openCallbackQueries: Set<string>;
  webhook: TelegramWebhook | null;
  nextMessageId: number;
  nextUpdateId: number;
}

function sendMessage(state: TelegramBotState, params: Record<string, unknown>): TelegramAnswer {
  const chatId = chatIdText(params.chat_id);
  if (chatId === null) return badRequest('chat_id is empty');
  if (typeof params.text !== 'string' || params.text.length === 0)
    return badRequest('message text is empty');
  if (params.text.length > MAX_TEXT_CHARS) return badRequest('message is too long');
  const replyMarkup =
    typeof params.reply_markup === 'string'
      ? parseJson(params.reply_markup)
      : (params.reply_markup ?? null);
  const message: TelegramSentMessage = {
    messageId: state.nextMessageId++,
    chatId,
    text: params.text,
    replyMarkup,
    date: state.dateNow(),
  };
  state.sent.record(message);
  return ok(messageJson(state.bot, message));
}

function answerCallbackQuery(
  state: TelegramBotState,
  params: Record<string, unknown>,
): TelegramAnswer {
  const id = typeof params.callback_query_id === 'string' ? params.callback_query_id : null;
  if (id === null || !state.openCallbackQueries.delete(id)) {
    return badRequest('query is too old and response timeout expired or query ID is invalid');
  }
  state.callbackAnswers.record({
    callbackQueryId: id,
    text: typeof params.text === 'string' ? params.text : null,
  });
  return ok(true);
}

function setWebhook(state: TelegramBotState, params: Record<string, unknown>): TelegramAnswer {
  if (typeof params.url !== 'string' || !isLoopbackHttpUrl(params.url)) {
    return badRequest('bad webhook: the devnet stand-in delivers to loopback http(s) URLs only');
  }
  const secret = params.secret_token;
  if (secret !== undefined && (typeof secret !== 'string' || !SECRET_TOKEN_PATTERN.test(secret))) {
    return badRequest('secret token contains unallowed characters');
  }
  state.webhook = { url: params.url, secretToken: typeof secret === 'string' ? secret : null };
  return { status: 200, body: { ok: true, result: true, description: 'Webhook was set' } };
}

/** The Bot API methods the stand-in knows, by name as in /bot<token>/<method>. */
const METHODS: Record<
  string,
  (state: TelegramBotState, params: Record<string, unknown>) => TelegramAnswer
> = { sendMessage, answerCallbackQuery, setWebhook };

/** One route for /bot<token>/<method>, with Telegram's answers to a wrong token, method or body. */
function telegramApi(state: TelegramBotState): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(express.json({ limit: TELEGRAM_STAND_IN_MAX_BODY_BYTES }));
  app.use(express.urlencoded({ extended: false, limit: TELEGRAM_STAND_IN_MAX_BODY_BYTES }));
  app.use((req: Request, res: Response) => {
    const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(req.path);
    if (match === null || match[1] !== state.botToken) {
      res.status(match === null ? 404 : 401).json(telegramError(match === null ? 404 : 401));
      return;
    }
    const injected = state.failures.take();
    if (injected !== null) {
      res.status(injected).json(telegramError(injected));
      return;
    }
    const method = METHODS[match[2]];
    const answer = method
      ? method(state, isRecord(req.body) ? req.body : {})
      : { status: 404, body: telegramError(404) };
    res.status(answer.status).json(answer.body);
  });
  app.use((_error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    res
      .status(400)
      .json({ ok: false, error_code: 400, description: "Bad Request: can't parse request body" });
  });
  return app;
}

/** POSTs an Update to the registered webhook, with its secret token, under the next update_id. */
async function deliverUpdate(
  state: TelegramBotState,
  update: Record<string, unknown>,
): Promise<number> {
  const webhook = state.webhook;
  if (webhook === null) throw new Error('no webhook is set: call setWebhook first');
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (webhook.secretToken !== null)
    headers['X-Telegram-Bot-Api-Secret-Token'] = webhook.secretToken;
  return postToService(
    webhook.url,
    headers,
    JSON.stringify({ update_id: state.nextUpdateId++, ...update }),
  );
}

/** The callback_query Update of a press on the latest message in `chatId` with that button. */
function pressUpdate(
  state: TelegramBotState,
  press: { chatId: string | number; userId: string | number; data: string },
): Record<string, unknown> {
  const { chatId, userId, data } = press;
  const message = [...state.sent.items]
    .reverse()
    .find((item) => item.chatId === String(chatId) && hasButton(item.replyMarkup, data));
  if (message === undefined)
    throw new Error(`no message in chat ${chatId} has a button with this callback_data`);
  const id = BigInt(`0x${randomBytes(7).toString('hex')}`).toString();
  state.openCallbackQueries.add(id);
  return {
    callback_query: {
      id,
      from: userJson(userId),
      message: messageJson(state.bot, message),
      chat_instance: String(-BigInt(`0x${randomBytes(7).toString('hex')}`)),
      data,
    },
  };
}

export async function startTelegramStandIn(
  options: TelegramStandInOptions,
): Promise<TelegramStandIn> {
  const { botToken } = options;
  if (typeof botToken !== 'string' || !/^[A-Za-z0-9:_-]{1,128}$/.test(botToken)) {
    throw new RangeError('botToken must be 1-128 of A-Z a-z 0-9 : _ -');
  }
  const now = options.now ?? (() => new Date());
  const botId = Number(/^([0-9]{1,15}):/.exec(botToken)?.[1] ?? 7000000001);
  const state: TelegramBotState = {
    botToken,
    bot: {
      id: botId,
      is_bot: true,
      first_name: 'Spend Control',
      username: 'spend_control_devnet_bot',
    },
    dateNow: () => Math.floor(now().getTime() / 1000),
    sent: new Inbox<TelegramSentMessage>('Telegram message'),
    callbackAnswers: new Inbox<TelegramCallbackAnswer>('Telegram callback answer'),
    failures: new FailureSwitch(),
    openCallbackQueries: new Set<string>(),
    webhook: null,
    nextMessageId: 1,
    nextUpdateId: 100_000_001,
  };
  const { sent, callbackAnswers } = state;
  const server = await serveOnLoopback(telegramApi(state), options.port ?? 0);

  return {
    url: server.url,
    sent: sent.items,
    callbackAnswers: callbackAnswers.items,
    get webhook() {
      return state.webhook;
    },
    waitForMessage: (predicate, timeoutMs = DEFAULT_WAIT_TIMEOUT_MS) =>
      sent.waitFor(predicate, timeoutMs),
    waitForCallbackAnswer: (predicate, timeoutMs = DEFAULT_WAIT_TIMEOUT_MS) =>
      callbackAnswers.waitFor(predicate, timeoutMs),
    failNext: (status, times = 1) => state.failures.arm(status, times),
    async replyText({ chatId, userId, text }) {
      return deliverUpdate(state, {
        message: {
          message_id: state.nextMessageId++,
          from: userJson(userId),
          chat: chatJson(String(chatId)),
          date: state.dateNow(),
          text,
        },
      });
    },
    async pressButton(press) {
      return deliverUpdate(state, pressUpdate(state, press));
    },
    async stop() {
      sent.close();
      callbackAnswers.close();
      await server.stop();
    },
  };
}

interface TelegramAnswer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  401: 'Unauthorized',
  404: 'Not Found',
  429: 'Too Many Requests: retry after 1',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
};

function telegramError(status: number): Record<string, unknown> {
  return {
    ok: false,
    error_code: status,
    description:
      ERROR_DESCRIPTIONS[status] ?? (status >= 500 ? 'Internal Server Error' : 'Bad Request'),
    ...(status === 429 ? { parameters: { retry_after: 1 } } : {}),
  };
}

function ok(result: unknown): TelegramAnswer {
  return { status: 200, body: { ok: true, result } };
}

function badRequest(description: string): TelegramAnswer {
  return {
    status: 400,
    body: { ok: false, error_code: 400, description: `Bad Request: ${description}` },
  };
}

function messageJson(
  bot: Record<string, unknown>,
  message: TelegramSentMessage,
): Record<string, unknown> {
  return {
    message_id: message.messageId,
    from: bot,
    chat: chatJson(message.chatId),
    date: message.date,
    text: message.text,
    ...(message.replyMarkup === null ? {} : { reply_markup: message.replyMarkup }),
  };
}

function chatIdText(value: unknown): string | null {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  if (typeof value === 'string' && /^(-?[0-9]{1,20}|@[A-Za-z0-9_]{5,32})$/.test(value))
    return value;
  return null;
}

/** Telegram sends ids as JSON numbers; usernames stay strings. */
function idJson(id: string | number): string | number {
  const text = String(id);
  return /^-?[0-9]{1,16}$/.test(text) && Number.isSafeInteger(Number(text)) ? Number(text) : text;
}

function chatJson(chatId: string): Record<string, unknown> {
  const id = idJson(chatId);
  if (typeof id === 'number' && id > 0) return { id, first_name: 'Owner', type: 'private' };
  return { id, title: 'Spend approvals', type: typeof id === 'number' ? 'group' : 'channel' };
}

function userJson(userId: string | number): Record<string, unknown> {
  return { id: idJson(userId), is_bot: false, first_name: 'Owner', language_code: 'en' };
}

function hasButton(replyMarkup: unknown, data: string): boolean {
  const rows = isRecord(replyMarkup) ? replyMarkup.inline_keyboard : undefined;
  return (
    Array.isArray(rows) &&
    rows.some(
      (row) =>
        Array.isArray(row) &&
        row.some((button) => isRecord(button) && button.callback_data === data),
    )
  );
}
