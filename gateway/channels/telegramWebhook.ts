// POST /channels/telegram/webhook: Telegram's updates, verified by the bot's secret token header
// (TELEGRAM_WEBHOOK_SECRET). A text or a pressed button becomes one chat message for the policy
// subgraph; the button's spinner is stopped with the answer, best effort.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import {
  parseTelegramUpdate,
  TELEGRAM_SECRET_TOKEN_HEADER,
  verifyTelegramSecretToken,
} from '../../channels/telegram';
import { AppError } from '../../core/errors';
import type { Logger } from '../../platform/log';
import { header, rawText, type RunInbound } from './inboundRun';

export interface TelegramInboundOptions {
  /** TELEGRAM_WEBHOOK_SECRET: the secret_token given to setWebhook. */
  readonly webhookSecret: string;
  /** Stops the spinner of a pressed button and shows the answer (best effort). */
  readonly answerCallbackQuery?: (callbackQueryId: string, text: string) => Promise<void>;
}

export function telegramWebhook(
  telegram: TelegramInboundOptions | undefined,
  run: RunInbound,
  log: Logger,
): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      if (telegram === undefined)
        throw new AppError(
          'CHANNEL_NOT_CONFIGURED',
          'Telegram is not configured (TELEGRAM_WEBHOOK_SECRET).',
        );
      if (
        !verifyTelegramSecretToken(
          telegram.webhookSecret,
          header(req, TELEGRAM_SECRET_TOKEN_HEADER),
        )
      )
        throw new AppError('CHANNEL_REQUEST_UNVERIFIED');
      let update: unknown;
      try {
        update = JSON.parse(rawText(req));
      } catch {
        throw new AppError('BODY_NOT_JSON');
      }
      const inbound = parseTelegramUpdate(update);
      // Telegram retries anything but a 2xx: updates that carry no text are acknowledged and dropped.
      if (inbound === null) {
        res.json({ ok: true, outcome: 'IGNORED' });
        return;
      }
      const result = await run('telegram', 'receiveChatMessage', {
        channel: 'TELEGRAM',
        chatId: inbound.senderChatId,
        userId: inbound.senderUserId,
        text: inbound.text,
      });
      if (inbound.callbackQueryId !== null && telegram.answerCallbackQuery !== undefined) {
        await telegram
          .answerCallbackQuery(inbound.callbackQueryId, result.answer)
          .catch((error: unknown) =>
            log.warn({ err: (error as Error).message }, 'telegram answerCallbackQuery failed'),
          );
      }
      res.json({ ok: true, ...result });
    } catch (error) {
      next(error);
    }
  };
}
