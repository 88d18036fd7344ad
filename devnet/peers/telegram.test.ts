// The Telegram stand-in speaks the Bot API as Telegram does (answer shapes, 401 for a wrong token,
// 400 for a bad request) and delivers an owner's reply or button press as a genuine Update to the
// registered webhook, with the secret token header.
import { type TelegramStandIn, startTelegramStandIn } from './telegram';
import { type WebhookReceiver, startWebhookReceiver } from './webhookReceiver';

const TOKEN = '7000000001:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw';
const NOW = new Date('2026-03-14T09:00:00Z');

describe('Telegram stand-in', () => {
  let telegram: TelegramStandIn;
  let service: WebhookReceiver;

  const call = async (
    method: string,
    body: unknown,
    token = TOKEN,
  ): Promise<{ status: number; body: any }> => {
    const response = await fetch(`${telegram.url}/bot${token}/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  };

  beforeAll(async () => {
    telegram = await startTelegramStandIn({ botToken: TOKEN, now: () => NOW });
    service = await startWebhookReceiver();
  });

  afterAll(async () => {
    await telegram.stop();
    await service.stop();
  });

  it('listens on 127.0.0.1 only', () => {
    expect(new URL(telegram.url).hostname).toBe('127.0.0.1');
  });

  it('answers sendMessage with the sent Message and records it', async () => {
    const keyboard = { inline_keyboard: [[{ text: 'Approve', callback_data: 'APPROVE 1' }]] };
    const answer = await call('sendMessage', {
      chat_id: 4242,
      text: 'hello',
      reply_markup: keyboard,
    });
    expect(answer).toEqual({
      status: 200,
      body: {
        ok: true,
        result: {
          message_id: expect.any(Number),
          from: expect.objectContaining({ id: 7000000001, is_bot: true }),
          chat: { id: 4242, first_name: 'Owner', type: 'private' },
          date: NOW.getTime() / 1000,
          text: 'hello',
          reply_markup: keyboard,
        },
      },
    });
    expect(await telegram.waitForMessage((message) => message.chatId === '4242')).toEqual({
      messageId: answer.body.result.message_id,
      chatId: '4242',
      text: 'hello',
      replyMarkup: keyboard,
      date: NOW.getTime() / 1000,
    });
  });

  it('answers a wrong token with 401 Unauthorized and records nothing', async () => {
    const before = telegram.sent.length;
    expect(await call('sendMessage', { chat_id: 1, text: 'x' }, '7000000001:wrong')).toEqual({
      status: 401,
      body: { ok: false, error_code: 401, description: 'Unauthorized' },
    });
    expect(telegram.sent.length).toBe(before);
  });

  it('answers a missing chat_id or text with 400', async () => {
    expect(await call('sendMessage', { text: 'x' })).toMatchObject({
      status: 400,
      body: { ok: false, error_code: 400 },
    });
    expect(await call('sendMessage', { chat_id: 1 })).toMatchObject({
      status: 400,
      body: { ok: false, description: 'Bad Request: message text is empty' },
    });
    expect(await call('noSuchMethod', {})).toMatchObject({
      status: 404,
      body: { ok: false, error_code: 404 },
    });
  });

  it('fails the next calls on request, with Telegram error bodies', async () => {
    telegram.failNext(502, 2);
    expect((await call('sendMessage', { chat_id: 1, text: 'x' })).status).toBe(502);
    expect((await call('sendMessage', { chat_id: 1, text: 'x' })).status).toBe(502);
    expect((await call('sendMessage', { chat_id: 1, text: 'x' })).status).toBe(200);
  });

  it('refuses a webhook outside loopback and a malformed secret token', async () => {
    expect(await call('setWebhook', { url: 'https://example.com/hook' })).toMatchObject({
      status: 400,
    });
    expect(
      await call('setWebhook', { url: `${service.url}/tg`, secret_token: 'has space' }),
    ).toMatchObject({ status: 400 });
  });

  describe('with a webhook set', () => {
    beforeAll(async () => {
      expect(
        await call('setWebhook', { url: `${service.url}/tg`, secret_token: 'tg_secret-1' }),
      ).toMatchObject({ status: 200, body: { ok: true, result: true } });
      expect(telegram.webhook).toEqual({ url: `${service.url}/tg`, secretToken: 'tg_secret-1' });
    });

    it('delivers a typed reply as a message Update with the secret token', async () => {
      expect(await telegram.replyText({ chatId: 4242, userId: 4242, text: 'DENY abc' })).toBe(200);
      const request = await service.waitForRequest((req) => req.rawBody.includes('DENY abc'));
      expect(request.headers['x-telegram-bot-api-secret-token']).toBe('tg_secret-1');
      expect(JSON.parse(request.rawBody)).toEqual({
        update_id: expect.any(Number),
        message: {
          message_id: expect.any(Number),
          from: { id: 4242, is_bot: false, first_name: 'Owner', language_code: 'en' },
          chat: { id: 4242, first_name: 'Owner', type: 'private' },
          date: NOW.getTime() / 1000,
          text: 'DENY abc',
        },
      });
    });

    it('delivers a button press as a callback_query on the message that has the button', async () => {
      const keyboard = { inline_keyboard: [[{ text: 'Approve', callback_data: 'APPROVE 77' }]] };
      const sent = await call('sendMessage', {
        chat_id: '-100200',
        text: 'group notice',
        reply_markup: keyboard,
      });
      expect(
        await telegram.pressButton({ chatId: '-100200', userId: 31337, data: 'APPROVE 77' }),
      ).toBe(200);

      const request = await service.waitForRequest((req) => req.rawBody.includes('callback_query'));
      const update = JSON.parse(request.rawBody);
      expect(update.callback_query).toEqual({
        id: expect.stringMatching(/^[0-9]+$/),
        from: { id: 31337, is_bot: false, first_name: 'Owner', language_code: 'en' },
        message: expect.objectContaining({
          message_id: sent.body.result.message_id,
          chat: { id: -100200, title: 'Spend approvals', type: 'group' },
        }),
        chat_instance: expect.stringMatching(/^-?[0-9]+$/),
        data: 'APPROVE 77',
      });

      expect(
        await call('answerCallbackQuery', {
          callback_query_id: update.callback_query.id,
          text: 'ok',
        }),
      ).toMatchObject({ status: 200, body: { ok: true } });
      expect(
        await call('answerCallbackQuery', { callback_query_id: update.callback_query.id }),
      ).toMatchObject({ status: 400 });
      expect(telegram.callbackAnswers).toContainEqual({
        callbackQueryId: update.callback_query.id,
        text: 'ok',
      });
    });

    it('cannot press a button that was never sent to that chat', async () => {
      await expect(
        telegram.pressButton({ chatId: 4242, userId: 4242, data: 'APPROVE never-sent' }),
      ).rejects.toThrow(/no message in chat 4242/);
      await expect(
        telegram.pressButton({ chatId: 999, userId: 999, data: 'APPROVE 77' }),
      ).rejects.toThrow(/no message in chat 999/);
    });

    it('passes on the status the service answered', async () => {
      service.failNext(401);
      expect(await telegram.replyText({ chatId: 4242, userId: 4242, text: 'forged' })).toBe(401);
    });
  });
});
