// What arrives from a channel after the gateway verified the platform (Telegram's secret token,
// Slack's signing secret): a link command, a reply, or anything else (ignored). Webhook requests
// are verified here instead, because their key is the binding's own secret: the signature must
// match a webhook binding of the escalation's owner (or, for a link, of the pending binding).
import { parseReplyText } from '../../../channels/message';
import { parseWebhookReplyBody, verifyWebhookReply } from '../../../channels/webhook';
import { AppError } from '../../../core/errors';
import { withTransaction } from '../../../platform/db/transaction';
import type { SubgraphContext } from '../../kit';
import { applyChannelReply, type ReplyOutcome } from '../escalations/decisions';
import type { EscalationState } from '../escalations/reads';
import { codeDigest } from '../escalations/replyCode';
import { webhookSecrets } from './reads';
import {
  completeChannelLink,
  completeWebhookLink,
  parseLinkText,
  requireSealingKey,
} from './writes';

export type InboundOutcome = 'ACCEPTED' | 'REFUSED' | 'LINKED' | 'LINK_REFUSED' | 'IGNORED';

export interface InboundResult {
  readonly outcome: InboundOutcome;
  readonly reason: string | null;
  readonly pollRef: string | null;
  readonly state: EscalationState | null;
  /** A short answer the gateway may show the sender (a Telegram callback notice, a Slack ephemeral reply). */
  readonly answer: string;
}

function fromReply(outcome: ReplyOutcome): InboundResult {
  if (outcome.accepted) {
    return {
      outcome: 'ACCEPTED',
      reason: null,
      pollRef: outcome.pollRef,
      state: outcome.state,
      answer: `${outcome.pollRef}: ${outcome.state}.`,
    };
  }
  return {
    outcome: 'REFUSED',
    reason: outcome.reason,
    pollRef: outcome.pollRef,
    state: null,
    answer: `Nothing changed (${outcome.reason.toLowerCase().replace(/_/g, ' ')}).`,
  };
}

/** A typed message or pressed button from a bound chat (telegram) or channel (slack). */
export async function receiveChatMessage(
  ctx: SubgraphContext,
  input: { channel: 'telegram' | 'slack'; chatId: string; userId: string | null; text: string },
): Promise<InboundResult> {
  const now = ctx.now();
  const linkCode = parseLinkText(input.text);
  if (linkCode !== null) {
    const linked = await completeChannelLink(
      ctx.db,
      { kind: input.channel, code: linkCode, chatId: input.chatId, userId: input.userId },
      now,
    );
    return linked === null
      ? {
          outcome: 'LINK_REFUSED',
          reason: 'CHANNEL_LINK_INVALID',
          pollRef: null,
          state: null,
          answer: 'That link code is unknown, used or expired.',
        }
      : {
          outcome: 'LINKED',
          reason: null,
          pollRef: null,
          state: null,
          answer: 'Linked: escalations for this owner will arrive here.',
        };
  }
  const reply = parseReplyText(input.text);
  if (reply === null) {
    return {
      outcome: 'IGNORED',
      reason: null,
      pollRef: null,
      state: null,
      answer: 'Reply APPROVE <code> or DENY <code>.',
    };
  }
  return fromReply(
    await applyChannelReply(ctx, {
      channel: input.channel,
      chatId: input.chatId,
      userId: input.userId,
      ...reply,
    }),
  );
}

const LINK_BODY_TYPE = 'channel.link';

function linkBody(rawBody: string): string | null {
  try {
    const body = JSON.parse(rawBody) as unknown;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
    const { type, code } = body as Record<string, unknown>;
    return type === LINK_BODY_TYPE && typeof code === 'string' && /^[0-9a-f]{24}$/i.test(code)
      ? code.toLowerCase()
      : null;
  } catch {
    return null;
  }
}

/** A signed webhook request: a link confirmation or a reply; CHANNEL_REQUEST_UNVERIFIED when no binding's secret signed it. */
export async function receiveWebhookRequest(
  ctx: SubgraphContext,
  input: { timestamp: string; signature: string; rawBody: string },
): Promise<InboundResult> {
  const now = ctx.now();
  const key = requireSealingKey(ctx);
  const verifiedBy = (secret: string): boolean =>
    verifyWebhookReply({
      secret,
      timestamp: input.timestamp,
      signature: input.signature,
      rawBody: input.rawBody,
      now,
    });

  const code = linkBody(input.rawBody);
  if (code !== null) {
    const pending = await ctx.db.query<{ binding_id: string }>(
      `SELECT binding_id FROM policy.channel_bindings WHERE kind = 'webhook' AND state = 'PENDING' AND link_code_sha256 = $1`,
      [codeDigest(code)],
    );
    const bindingId = pending.rows[0]?.binding_id;
    const secrets = bindingId === undefined ? [] : await webhookSecrets(ctx.db, key, { bindingId });
    if (secrets.length === 0 || !verifiedBy(secrets[0]!.secret))
      throw new AppError('CHANNEL_REQUEST_UNVERIFIED');
    const linked = await completeWebhookLink(ctx.db, bindingId!, code, now);
    if (linked === null)
      return {
        outcome: 'LINK_REFUSED',
        reason: 'CHANNEL_LINK_INVALID',
        pollRef: null,
        state: null,
        answer: 'The link code is used or expired.',
      };
    return { outcome: 'LINKED', reason: null, pollRef: null, state: null, answer: 'Linked.' };
  }

  const reply = parseWebhookReplyBody(input.rawBody);
  if (reply === null)
    throw new AppError(
      'REQUEST_INVALID',
      'The body is neither a channel.link nor an escalation.reply.',
    );
  const owner = await withTransaction(ctx.db, async (client) => {
    const found = await client.query<{ owner: string }>(
      'SELECT owner FROM policy.escalations WHERE poll_ref = $1',
      [reply.pollRef],
    );
    return found.rows[0]?.owner ?? null;
  });
  const secrets = owner === null ? [] : await webhookSecrets(ctx.db, key, { owner });
  const signer = secrets.find(
    (candidate) => candidate.state === 'ACTIVE' && verifiedBy(candidate.secret),
  );
  if (signer === undefined) throw new AppError('CHANNEL_REQUEST_UNVERIFIED');
  return fromReply(
    await applyChannelReply(ctx, {
      channel: 'webhook',
      chatId: signer.bindingId,
      userId: null,
      decision: reply.decision,
      code: reply.code,
    }),
  );
}
