// The routes outside platforms call back on: Telegram's webhook (updates carrying the bot's secret
// token), Slack's interactivity and slash-command URL (signed with the app's signing secret) and the
// owners' webhook replies (signed with the binding's secret, which only the policy subgraph can
// open). Each reads the raw body, because signatures cover the exact bytes, verifies what the edge
// can, and runs a persisted mutation as a `channel` actor; the policy subgraph decides the rest.
import express, { type NextFunction, type Request, type Response } from 'express';
import { parseSlackInteraction, verifySlackSignature } from '../../channels/slack';
import {
  parseTelegramUpdate,
  TELEGRAM_SECRET_TOKEN_HEADER,
  verifyTelegramSecretToken,
} from '../../channels/telegram';
import { WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER } from '../../channels/webhook';
import { AppError } from '../../core/errors';
import type { Actor, ChannelActorKind } from '../../platform/actor';
import type { Logger } from '../../platform/log';
import { appErrorFromGraphQL } from '../rest/graphqlErrors';
import type { GatewayExecutor } from '../subscriptions/escalations';

/** Platform requests are small; Slack's interaction payloads are the largest. */
export const MAX_INBOUND_BODY_BYTES = 256 * 1024;

export interface ChannelInboundOptions {
  /** TELEGRAM_WEBHOOK_SECRET: the secret_token given to setWebhook. */
  readonly telegram?: {
    readonly webhookSecret: string;
    /** Stops the spinner of a pressed button and shows the answer (best effort). */
    readonly answerCallbackQuery?: (callbackQueryId: string, text: string) => Promise<void>;
  };
  /** SLACK_SIGNING_SECRET. */
  readonly slack?: { readonly signingSecret: string };
}

export interface ChannelInboundDeps {
  readonly options: ChannelInboundOptions;
  readonly documents: ReadonlyMap<string, string>;
  readonly execute: GatewayExecutor;
  readonly now: () => Date;
  readonly log: Logger;
}

interface InboundResult {
  outcome: string;
  reason: string | null;
  pollRef: string | null;
  state: string | null;
  answer: string;
}

function header(req: Request, name: string): string | string[] | undefined {
  return req.headers[name];
}

function rawText(req: Request): string {
  return Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
}

export function createChannelInboundRouter(deps: ChannelInboundDeps): express.Router {
  const router = express.Router();
  const raw = express.raw({ type: () => true, limit: MAX_INBOUND_BODY_BYTES });
  for (const name of ['receiveChatMessage', 'receiveWebhookRequest']) {
    if (!deps.documents.has(name))
      throw new Error(`channel routes: no persisted document ${name}.graphql`);
  }

  const run = async (
    channel: ChannelActorKind,
    document: string,
    variables: Record<string, unknown>,
  ): Promise<InboundResult> => {
    const actor: Actor = { kind: 'channel', channel };
    const result = await deps.execute(actor, deps.documents.get(document)!, variables);
    if (result.errors && result.errors.length > 0)
      throw appErrorFromGraphQL(result.errors as never);
    const data = result.data?.[document] as InboundResult | undefined;
    if (data === undefined) throw new AppError('INTERNAL_ERROR', 'The operation returned no data.');
    return data;
  };
  const logged = (channel: string, result: InboundResult): void => {
    deps.log.info(
      { channel, outcome: result.outcome, reason: result.reason, pollRef: result.pollRef },
      'channel message',
    );
  };

  router.post(
    '/channels/telegram/webhook',
    raw,
    async (req: Request, res: Response, next: NextFunction) => {
      try {
        const telegram = deps.options.telegram;
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
        logged('telegram', result);
        if (inbound.callbackQueryId !== null && telegram.answerCallbackQuery !== undefined) {
          await telegram
            .answerCallbackQuery(inbound.callbackQueryId, result.answer)
            .catch((error: unknown) =>
              deps.log.warn(
                { err: (error as Error).message },
                'telegram answerCallbackQuery failed',
              ),
            );
        }
        res.json({ ok: true, ...result });
      } catch (error) {
        next(error);
      }
    },
  );

  router.post(
    '/channels/slack/interactivity',
    raw,
    async (req: Request, res: Response, next: NextFunction) => {
      try {
        const slack = deps.options.slack;
        if (slack === undefined)
          throw new AppError(
            'CHANNEL_NOT_CONFIGURED',
            'Slack is not configured (SLACK_SIGNING_SECRET).',
          );
        const body = rawText(req);
        const verified = verifySlackSignature({
          signingSecret: slack.signingSecret,
          timestamp: header(req, 'x-slack-request-timestamp'),
          signature: header(req, 'x-slack-signature'),
          rawBody: body,
          now: deps.now(),
        });
        if (!verified) throw new AppError('CHANNEL_REQUEST_UNVERIFIED');
        const interaction = parseSlackInteraction(body);
        const form = new URLSearchParams(body);
        // A clicked button (block_actions), or a slash command (`/spendctl link <code>`, `/spendctl approve <code>`).
        const message =
          interaction !== null
            ? { chatId: interaction.channelId, userId: interaction.userId, text: interaction.value }
            : form.get('command') !== null
              ? {
                  chatId: form.get('channel_id') ?? '',
                  userId: form.get('user_id'),
                  text: form.get('text') ?? '',
                }
              : null;
        if (message === null || message.chatId === '') {
          res.json({ response_type: 'ephemeral', text: 'Nothing to do.' });
          return;
        }
        const result = await run('slack', 'receiveChatMessage', { channel: 'SLACK', ...message });
        logged('slack', result);
        res.json({
          response_type: 'ephemeral',
          text: result.answer,
          outcome: result.outcome,
          reason: result.reason,
        });
      } catch (error) {
        next(error);
      }
    },
  );

  router.post(
    '/channels/webhook/reply',
    raw,
    async (req: Request, res: Response, next: NextFunction) => {
      try {
        const timestamp = header(req, WEBHOOK_TIMESTAMP_HEADER);
        const signature = header(req, WEBHOOK_SIGNATURE_HEADER);
        if (typeof timestamp !== 'string' || typeof signature !== 'string')
          throw new AppError('CHANNEL_REQUEST_UNVERIFIED');
        const result = await run('webhook', 'receiveWebhookRequest', {
          timestamp,
          signature,
          rawBody: rawText(req),
        });
        logged('webhook', result);
        res.json(result);
      } catch (error) {
        next(error);
      }
    },
  );
  return router;
}
