// The Telegram channel against the devnet Bot API stand-in: what the owner's chat receives, the
// buttons, each kind of failure, and reading back the updates a reply or a button press produces.
import { type TelegramStandIn, startTelegramStandIn } from '../devnet/peers/telegram';
import { type WebhookReceiver, startWebhookReceiver } from '../devnet/peers/webhookReceiver';
import { parseReplyText } from './message';
import {
  TELEGRAM_SECRET_TOKEN_HEADER,
  createTelegramAdapter,
  parseTelegramUpdate,
  verifyTelegramSecretToken,
} from './telegram';
import { deliveryError } from './test-support/delivery';
import { FIXED_NOW, SAMPLE_CODE, SAMPLE_RECIPIENT, sampleNotice } from './test-support/notices';
import { SAMPLE_INTENT_ID, sampleContradicted, sampleOutcome } from './test-support/outcomes';

const BOT_TOKEN = '7000000001:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw';
const OWNER_CHAT = '1234567890';
const target = { kind: 'telegram' as const, address: OWNER_CHAT };

describe('telegram adapter', () => {
  let telegram: TelegramStandIn;
  let adapter: ReturnType<typeof createTelegramAdapter>;

  beforeAll(async () => {
    telegram = await startTelegramStandIn({ botToken: BOT_TOKEN });
    adapter = createTelegramAdapter({
      apiBaseUrl: telegram.url,
      botToken: BOT_TOKEN,
      now: () => FIXED_NOW,
    });
  });

  afterAll(async () => {
    await telegram.stop();
  });

  it('sends the notice to the chat with Approve and Deny buttons carrying the reply', async () => {
    const result = await adapter.send(target, sampleNotice());
    const message = await telegram.waitForMessage((sent) => sent.chatId === OWNER_CHAT);
    expect(result).toEqual({ externalId: String(message.messageId) });
    for (const words of [
      '12.50 USDC on eip155:8453',
      SAMPLE_RECIPIENT,
      'Satellite imagery, tile 31UDQ',
      "The amount is above the policy's approval threshold",
      '2026-03-14T09:30:00Z (UTC, 30 minutes from now)',
      'silence means denial',
      `APPROVE ${SAMPLE_CODE}`,
      `DENY ${SAMPLE_CODE}`,
    ]) {
      expect(message.text).toContain(words);
    }
    expect(message.replyMarkup).toEqual({
      inline_keyboard: [
        [
          { text: 'Approve', callback_data: `APPROVE ${SAMPLE_CODE}` },
          { text: 'Deny', callback_data: `DENY ${SAMPLE_CODE}` },
        ],
      ],
    });
  });

  it('sends an outcome notice as plain text: the intent, capability, amount and finding, no buttons, no code', async () => {
    const result = await adapter.sendOutcome(target, sampleContradicted());
    const message = await telegram.waitForMessage(
      (sent) => sent.chatId === OWNER_CHAT && sent.text.includes(SAMPLE_INTENT_ID),
    );
    expect(result).toEqual({ externalId: String(message.messageId) });
    for (const words of [
      'Purchase held for review: domains.check (domain=example.test) for 0.05025 USDT0.',
      `Intent: ${SAMPLE_INTENT_ID}`,
      '(DELIVERY_CONTRADICTED)',
      'Finding: the registry contradicts the merchant',
      'A person at the service reviews this purchase.',
    ]) {
      expect(message.text).toContain(words);
    }
    expect(message.replyMarkup).toBeNull();
    expect(message.text).not.toMatch(/APPROVE|DENY/);
  });

  it('refuses a malformed outcome notice or a bad chat id without calling Telegram', async () => {
    const before = telegram.sent.length;
    expect(
      await deliveryError(adapter.sendOutcome(target, sampleOutcome({ intentId: 'ci_nope' }))),
    ).toMatchObject({ retryable: false, reason: 'INVALID_INPUT' });
    expect(
      await deliveryError(
        adapter.sendOutcome({ kind: 'telegram', address: 'not a chat' }, sampleOutcome()),
      ),
    ).toMatchObject({ retryable: false, reason: 'INVALID_INPUT' });
    expect(telegram.sent.length).toBe(before);
  });

  it('reports a wrong bot token as a refusal that retrying cannot fix, without the token', async () => {
    const wrong = createTelegramAdapter({
      apiBaseUrl: telegram.url,
      botToken: '7000000001:wrong-token-value',
    });
    const error = await deliveryError(wrong.send(target, sampleNotice()));
    expect(error).toMatchObject({
      kind: 'telegram',
      retryable: false,
      reason: 'REJECTED',
      status: 401,
      peerError: 'Unauthorized',
    });
    expect(`${error.message} ${JSON.stringify(error)}`).not.toMatch(
      /wrong-token-value|AAHdqTcvCH1vGWJx/,
    );
  });

  it('reports a 500 from Telegram as retryable and a 400 as not', async () => {
    telegram.failNext(500);
    expect(await deliveryError(adapter.send(target, sampleNotice()))).toMatchObject({
      retryable: true,
      status: 500,
    });
    telegram.failNext(400);
    expect(await deliveryError(adapter.send(target, sampleNotice()))).toMatchObject({
      retryable: false,
      status: 400,
    });
  });

  it("passes on Telegram's retry_after when rate limited", async () => {
    telegram.failNext(429);
    expect(await deliveryError(adapter.send(target, sampleNotice()))).toMatchObject({
      retryable: true,
      status: 429,
      retryAfterSeconds: 1,
    });
  });

  it('reports a refused connection as retryable, without the token in the message', async () => {
    const gone = await startTelegramStandIn({ botToken: BOT_TOKEN });
    await gone.stop();
    const offline = createTelegramAdapter({ apiBaseUrl: gone.url, botToken: BOT_TOKEN });
    const error = await deliveryError(offline.send(target, sampleNotice()));
    expect(error).toMatchObject({ retryable: true, reason: 'NETWORK' });
    expect(`${error.message} ${JSON.stringify(error)}`).not.toContain(BOT_TOKEN);
  });

  it('refuses a target that is not a chat id, without calling Telegram', async () => {
    const before = telegram.sent.length;
    for (const address of ['', 'chat 1', '../getMe', '@no']) {
      expect(
        await deliveryError(adapter.send({ kind: 'telegram', address }, sampleNotice())),
      ).toMatchObject({ reason: 'INVALID_INPUT' });
    }
    expect(telegram.sent.length).toBe(before);
  });

  describe('the way back', () => {
    let service: WebhookReceiver;
    const SECRET_TOKEN = 'tg-webhook-secret_0123456789';

    beforeAll(async () => {
      service = await startWebhookReceiver();
      await adapter.setWebhook({
        url: `${service.url}/channels/telegram`,
        secretToken: SECRET_TOKEN,
      });
    });

    afterAll(async () => {
      await service.stop();
    });

    it('reads a pressed button as the reply, and answers the callback query', async () => {
      await adapter.send(target, sampleNotice());
      expect(
        await telegram.pressButton({
          chatId: OWNER_CHAT,
          userId: OWNER_CHAT,
          data: `DENY ${SAMPLE_CODE}`,
        }),
      ).toBe(200);

      const request = await service.waitForRequest((req) => req.rawBody.includes('callback_query'));
      expect(
        verifyTelegramSecretToken(SECRET_TOKEN, request.headers[TELEGRAM_SECRET_TOKEN_HEADER]),
      ).toBe(true);
      const inbound = parseTelegramUpdate(JSON.parse(request.rawBody));
      expect(inbound).toMatchObject({
        senderChatId: OWNER_CHAT,
        senderUserId: OWNER_CHAT,
        text: `DENY ${SAMPLE_CODE}`,
      });
      expect(parseReplyText(inbound!.text)).toEqual({ decision: 'DENY', code: SAMPLE_CODE });

      await adapter.answerCallbackQuery(inbound!.callbackQueryId!, 'Denied.');
      expect(await telegram.waitForCallbackAnswer()).toEqual({
        callbackQueryId: inbound!.callbackQueryId,
        text: 'Denied.',
      });
    });

    it('reads a typed reply from a group chat with the sender', async () => {
      await telegram.replyText({
        chatId: '-1001234567890',
        userId: 555,
        text: `approve ${SAMPLE_CODE}`,
      });
      const request = await service.waitForRequest((req) => req.rawBody.includes('-1001234567890'));
      expect(parseTelegramUpdate(JSON.parse(request.rawBody))).toMatchObject({
        senderChatId: '-1001234567890',
        senderUserId: '555',
        text: `approve ${SAMPLE_CODE}`,
        callbackQueryId: null,
      });
    });
  });
});

describe('parseTelegramUpdate', () => {
  const chat = { id: 42, type: 'private', first_name: 'Owner' };
  const from = { id: 42, is_bot: false, first_name: 'Owner' };

  it('reads message.text and callback_query.data', () => {
    expect(
      parseTelegramUpdate({
        update_id: 9,
        message: { message_id: 1, from, chat, date: 1, text: 'hello' },
      }),
    ).toEqual({
      senderChatId: '42',
      senderUserId: '42',
      text: 'hello',
      callbackQueryId: null,
      updateId: 9,
    });
    expect(
      parseTelegramUpdate({
        update_id: 10,
        callback_query: {
          id: '77',
          from,
          message: { message_id: 1, chat, date: 1 },
          chat_instance: '1',
          data: 'DENY x',
        },
      }),
    ).toEqual({
      senderChatId: '42',
      senderUserId: '42',
      text: 'DENY x',
      callbackQueryId: '77',
      updateId: 10,
    });
  });

  it.each([
    ['null', null],
    ['a string', 'update'],
    ['an edited message', { update_id: 1, edited_message: { chat, text: 'APPROVE x' } }],
    ['a photo without text', { update_id: 1, message: { chat, from, photo: [] } }],
    ['a message without chat', { update_id: 1, message: { from, text: 'x' } }],
    [
      'a callback from an inline message (no chat)',
      { update_id: 1, callback_query: { id: '1', from, inline_message_id: 'x', data: 'x' } },
    ],
    [
      'a callback without data',
      { update_id: 1, callback_query: { id: '1', from, message: { chat } } },
    ],
    ['a fractional chat id', { update_id: 1, message: { chat: { id: 1.5 }, text: 'x' } }],
  ])('ignores %s', (_what, update) => {
    expect(parseTelegramUpdate(update)).toBeNull();
  });
});

describe('verifyTelegramSecretToken', () => {
  it('accepts only the exact token in a single header', () => {
    expect(verifyTelegramSecretToken('abc_DEF-123', 'abc_DEF-123')).toBe(true);
    expect(verifyTelegramSecretToken('abc_DEF-123', ['abc_DEF-123'])).toBe(true);
    expect(verifyTelegramSecretToken('abc_DEF-123', 'abc_DEF-124')).toBe(false);
    expect(verifyTelegramSecretToken('abc_DEF-123', 'abc_DEF-1234')).toBe(false);
    expect(verifyTelegramSecretToken('abc_DEF-123', undefined)).toBe(false);
    expect(verifyTelegramSecretToken('abc_DEF-123', ['abc_DEF-123', 'abc_DEF-123'])).toBe(false);
    expect(verifyTelegramSecretToken('', '')).toBe(false);
  });
});
