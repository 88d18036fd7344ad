// POST /channels/slack/interactivity: Slack's button clicks and slash commands, verified by the
// app's signing secret over the raw form body and a recent timestamp (SLACK_SIGNING_SECRET).
// Either becomes one chat message for the policy subgraph; the answer goes back ephemeral.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { parseSlackInteraction, verifySlackSignature } from '../../channels/slack';
import { AppError } from '../../core/errors';
import { header, rawText, type RunInbound } from './inboundRun';

export interface SlackInboundOptions {
  /** SLACK_SIGNING_SECRET. */
  readonly signingSecret: string;
}

interface SlackMessage {
  chatId: string;
  userId: string | null;
  text: string;
}

/** A clicked button (block_actions), or a slash command (`/spendctl link <code>`, `/spendctl approve <code>`). */
function slackMessage(body: string): SlackMessage | null {
  const interaction = parseSlackInteraction(body);
  if (interaction !== null)
    return { chatId: interaction.channelId, userId: interaction.userId, text: interaction.value };
  const form = new URLSearchParams(body);
  if (form.get('command') === null) return null;
  return {
    chatId: form.get('channel_id') ?? '',
    userId: form.get('user_id'),
    text: form.get('text') ?? '',
  };
}

export function slackInteractivity(
  slack: SlackInboundOptions | undefined,
  run: RunInbound,
  now: () => Date,
): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
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
        now: now(),
      });
      if (!verified) throw new AppError('CHANNEL_REQUEST_UNVERIFIED');
      const message = slackMessage(body);
      if (message === null || message.chatId === '') {
        res.json({ response_type: 'ephemeral', text: 'Nothing to do.' });
        return;
      }
      const result = await run('slack', 'receiveChatMessage', { channel: 'SLACK', ...message });
      res.json({
        response_type: 'ephemeral',
        text: result.answer,
        outcome: result.outcome,
        reason: result.reason,
      });
    } catch (error) {
      next(error);
    }
  };
}
