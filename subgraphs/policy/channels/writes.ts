// Channel binding writes: where an owner's escalation notices go and who may answer them. A
// binding is started by the owner's session (startChannelLink) and becomes ACTIVE only when the
// link code comes back through the channel itself: `/start <code>` or `LINK <code>` typed to the
// Telegram bot or as a Slack slash command, or a webhook reply signed with the binding's secret.
// Email carries notices only (no code, never a decision path) and becomes ACTIVE only through its
// confirmation link: a single-use code mailed to the address (the only mail it gets before).
import { randomBytes } from 'node:crypto';
import { isChannelBindingId, newChannelBindingId } from '../../../core/canon/ids';
import { AppError } from '../../../core/errors';
import { type Db, withTransaction } from '../../../platform/db';
import { seal } from '../../../platform/sealing';
import type { SubgraphContext } from '../../kit';
import { codeDigest, newReplyCode } from '../escalations/replyCode';
import {
  type BindingKind,
  type BindingRecord,
  type BindingRow,
  type BindingState,
  COLUMNS,
  MAX_BINDINGS_PER_OWNER,
  toBinding,
} from './reads';

/** A link code is good for this long after startChannelLink. */
export const LINK_CODE_TTL_MS = 30 * 60_000;
/** An email confirmation link is good for a day: mail is read later than a chat. */
export const EMAIL_CONFIRM_TTL_MS = 24 * 60 * 60_000;
export const WEBHOOK_SECRET_BYTES = 32;
const LINK_TEXT = /^\s*(?:\/start|link)\s+([0-9a-f]{24})\s*$/i;
const EMAIL = /^[^\s@<>()",;:]{1,64}@[A-Za-z0-9.-]{1,253}\.[A-Za-z]{2,63}$/;
const SLACK_ID = /^[A-Z0-9]{2,32}$/;
const MAX_WEBHOOK_URL_CHARS = 2048;

export interface LinkStart {
  readonly binding: BindingRow;
  readonly linkCode: string | null;
  readonly linkExpiresAt: Date;
  /** webhook only: the HMAC key for notices and replies, shown this once. */
  readonly secret: string | null;
  readonly instructions: string;
}

export function requireSealingKey(ctx: Pick<SubgraphContext, 'sealingKey'>): Buffer {
  if (ctx.sealingKey === undefined)
    throw new AppError('INTERNAL_ERROR', 'No sealing key in this context.');
  return ctx.sealingKey;
}

function invalidAddress(reason: string): AppError {
  return new AppError('REQUEST_INVALID', undefined, [{ field: 'address', reason }]);
}

/** The address a kind needs, checked; telegram learns its chat from the /start message instead. */
function checkedAddress(
  kind: BindingKind,
  address: string | null,
  replyFrom: string | null,
): { address: string | null; replyFrom: string | null } {
  switch (kind) {
    case 'telegram':
      if (address !== null || replyFrom !== null)
        throw invalidAddress('telegram binds the chat that sends /start <code>; give no address');
      return { address: null, replyFrom: null };
    case 'slack':
      if (address !== null || replyFrom !== null)
        throw invalidAddress(
          'slack binds the channel and user that send the /spendctl link <code> command; give no address',
        );
      return { address: null, replyFrom: null };
    case 'webhook': {
      if (address === null || address.length > MAX_WEBHOOK_URL_CHARS)
        throw invalidAddress('an http(s) URL of at most 2048 characters');
      let url: URL;
      try {
        url = new URL(address);
      } catch {
        throw invalidAddress('an http(s) URL');
      }
      if (
        (url.protocol !== 'https:' && url.protocol !== 'http:') ||
        url.username !== '' ||
        url.password !== ''
      ) {
        throw invalidAddress('an http(s) URL without credentials');
      }
      return { address: url.toString(), replyFrom: null };
    }
    case 'email':
      if (address === null || !EMAIL.test(address)) throw invalidAddress('an email address');
      return { address: address.toLowerCase(), replyFrom: null };
  }
}

export async function startChannelLink(
  ctx: SubgraphContext,
  owner: string,
  input: { kind: BindingKind; address: string | null; replyFrom: string | null },
): Promise<LinkStart> {
  const now = ctx.now();
  const key = requireSealingKey(ctx);
  const { address, replyFrom } = checkedAddress(input.kind, input.address, input.replyFrom);
  const linkCode = newReplyCode();
  const secret =
    input.kind === 'webhook' ? randomBytes(WEBHOOK_SECRET_BYTES).toString('hex') : null;
  const expiresAt = new Date(
    now.getTime() + (input.kind === 'email' ? EMAIL_CONFIRM_TTL_MS : LINK_CODE_TTL_MS),
  );
  const bindingId = newChannelBindingId();
  return withTransaction(ctx.db, async (client) => {
    const count = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM policy.channel_bindings WHERE owner = $1 AND state <> 'REVOKED'`,
      [owner],
    );
    if (count.rows[0]!.n >= MAX_BINDINGS_PER_OWNER) {
      throw new AppError(
        'REQUEST_INVALID',
        `An owner keeps at most ${MAX_BINDINGS_PER_OWNER} channel bindings; revoke one first.`,
      );
    }
    const state: BindingState = 'PENDING';
    const inserted = await client.query<BindingRecord>(
      `INSERT INTO policy.channel_bindings (binding_id, owner, kind, address, reply_from, sealed_secret, state, link_code_sha256,
                                            link_expires_at, created_at, activated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING ${COLUMNS}`,
      [
        bindingId,
        owner,
        input.kind,
        address,
        replyFrom,
        secret === null ? null : seal(key, secret),
        state,
        codeDigest(linkCode),
        expiresAt,
        now,
        null,
      ],
    );
    if (input.kind === 'email') {
      // The confirmation mail: the code travels to the delivery job sealed, wiped once sent.
      await client.query(
        `INSERT INTO policy.channel_deliveries (binding_id, notice_kind, state, sealed_payload, next_attempt_at, created_at, updated_at)
         VALUES ($1, 'EMAIL_CONFIRMATION', 'PENDING', $2, $3, $3, $3)`,
        [bindingId, seal(key, linkCode), now],
      );
    }
    return {
      binding: toBinding(inserted.rows[0]!),
      // Email's code goes only to the address: whoever confirms must read that mailbox.
      linkCode: input.kind === 'email' ? null : linkCode,
      linkExpiresAt: expiresAt,
      secret,
      instructions: instructionsFor(input.kind, linkCode),
    };
  });
}

function instructionsFor(kind: BindingKind, linkCode: string | null): string {
  switch (kind) {
    case 'telegram':
      return `Send "/start ${linkCode}" to the service's Telegram bot from the chat that should receive escalations.`;
    case 'slack':
      return `Type "/spendctl link ${linkCode}" in the Slack channel that should receive escalations.`;
    case 'webhook':
      return `POST {"type":"channel.link","code":"${linkCode}"} to /channels/webhook/reply, signed with the secret (headers x-spend-control-timestamp and x-spend-control-signature).`;
    case 'email':
      return 'A confirmation link is mailed to the address; nothing else is sent there until it is opened and confirmed. Email never carries a reply code; decide in the dashboard or a chat channel.';
  }
}

/** `/start <code>` or `LINK <code>`: the code, or null when the text is no link command. */
export function parseLinkText(text: string): string | null {
  if (typeof text !== 'string' || text.length > 128) return null;
  const match = LINK_TEXT.exec(text);
  return match === null ? null : match[1].toLowerCase();
}

/**
 * Activates the PENDING binding of this kind whose link code matches, binding the chat (and the
 * user who may answer). One conditional UPDATE: a code links once, and only before it expires.
 */
export async function completeChannelLink(
  db: Db,
  input: { kind: 'telegram' | 'slack'; code: string; chatId: string; userId: string | null },
  now: Date,
): Promise<BindingRow | null> {
  if (
    input.kind === 'slack' &&
    (!SLACK_ID.test(input.chatId) || (input.userId !== null && !SLACK_ID.test(input.userId)))
  )
    return null;
  const result = await db.query<BindingRecord>(
    `UPDATE policy.channel_bindings
        SET state = 'ACTIVE', address = $3, reply_from = $4, link_code_sha256 = NULL, activated_at = $5
      WHERE kind = $1 AND link_code_sha256 = $2 AND state = 'PENDING' AND link_expires_at > $5
      RETURNING ${COLUMNS}`,
    [input.kind, codeDigest(input.code), input.chatId.slice(0, 2048), input.userId, now],
  );
  const record = result.rows[0];
  return record === undefined ? null : toBinding(record);
}

/** Activates the PENDING binding of this kind and id whose link code matches: once, before it expires. */
async function activateByLinkCode(
  db: Db,
  kind: 'webhook' | 'email',
  bindingId: string,
  code: string,
  now: Date,
): Promise<BindingRow | null> {
  const result = await db.query<BindingRecord>(
    `UPDATE policy.channel_bindings
        SET state = 'ACTIVE', link_code_sha256 = NULL, activated_at = $4
      WHERE binding_id = $1 AND kind = $2 AND link_code_sha256 = $3 AND state = 'PENDING' AND link_expires_at > $4
      RETURNING ${COLUMNS}`,
    [bindingId, kind, codeDigest(code), now],
  );
  const record = result.rows[0];
  return record === undefined ? null : toBinding(record);
}

/** Activates a PENDING webhook binding whose link the owner's receiver signed with its secret. */
export function completeWebhookLink(
  db: Db,
  bindingId: string,
  code: string,
  now: Date,
): Promise<BindingRow | null> {
  return activateByLinkCode(db, 'webhook', bindingId, code, now);
}

/** Activates the PENDING email binding whose mailed confirmation code this is. */
export async function confirmEmailBinding(
  db: Db,
  bindingId: string,
  code: string,
  now: Date,
): Promise<BindingRow | null> {
  if (!isChannelBindingId(bindingId) || !/^[0-9a-f]{24}$/.test(code)) return null;
  return activateByLinkCode(db, 'email', bindingId, code, now);
}

export async function revokeBinding(
  db: Db,
  owner: string,
  bindingId: string,
  now: Date,
): Promise<BindingRow> {
  if (!isChannelBindingId(bindingId))
    throw new AppError('CHANNEL_BINDING_NOT_FOUND', undefined, { bindingId });
  const result = await db.query<BindingRecord>(
    `UPDATE policy.channel_bindings SET state = 'REVOKED', revoked_at = $3, link_code_sha256 = NULL
      WHERE binding_id = $1 AND owner = $2 AND state <> 'REVOKED' RETURNING ${COLUMNS}`,
    [bindingId, owner, now],
  );
  const record = result.rows[0];
  if (record === undefined)
    throw new AppError('CHANNEL_BINDING_NOT_FOUND', undefined, { bindingId });
  return toBinding(record);
}
