// The routes outside platforms call back on: Telegram's webhook (updates carrying the bot's secret
// token), Slack's interactivity and slash-command URL (signed with the app's signing secret) and the
// owners' webhook replies (signed with the binding's secret, which only the policy subgraph can
// open). Each reads the raw body, because signatures cover the exact bytes, verifies what the edge
// can, and runs a persisted mutation as a `channel` actor; the policy subgraph decides the rest.
import express from 'express';
import type { Logger } from '../../platform/log';
import type { GatewayExecutor } from '../subscriptions/escalations';
import { CHANNEL_DOCUMENTS, inboundRunner } from './inboundRun';
import { type SlackInboundOptions, slackInteractivity } from './slackInteractivity';
import { type TelegramInboundOptions, telegramWebhook } from './telegramWebhook';
import { webhookReply } from './webhookReply';
import { emailConfirm, emailConfirmPage } from './emailConfirm';

/** Platform requests are small; Slack's interaction payloads are the largest. */
export const MAX_INBOUND_BODY_BYTES = 256 * 1024;

export interface ChannelInboundOptions {
  readonly telegram?: TelegramInboundOptions;
  readonly slack?: SlackInboundOptions;
}

export interface ChannelInboundDeps {
  readonly options: ChannelInboundOptions;
  readonly documents: ReadonlyMap<string, string>;
  readonly execute: GatewayExecutor;
  readonly now: () => Date;
  readonly log: Logger;
}

export function createChannelInboundRouter(deps: ChannelInboundDeps): express.Router {
  const router = express.Router();
  const raw = express.raw({ type: () => true, limit: MAX_INBOUND_BODY_BYTES });
  for (const name of CHANNEL_DOCUMENTS) {
    if (!deps.documents.has(name))
      throw new Error(`channel routes: no persisted document ${name}.graphql`);
  }
  const run = inboundRunner(deps);
  router.post(
    '/channels/telegram/webhook',
    raw,
    telegramWebhook(deps.options.telegram, run, deps.log),
  );
  router.post(
    '/channels/slack/interactivity',
    raw,
    slackInteractivity(deps.options.slack, run, deps.now),
  );
  router.post('/channels/webhook/reply', raw, webhookReply(run));
  router.get('/channels/email/confirm', emailConfirmPage());
  router.post(
    '/channels/email/confirm',
    express.urlencoded({ extended: false, limit: MAX_INBOUND_BODY_BYTES }),
    emailConfirm(run),
  );
  return router;
}
