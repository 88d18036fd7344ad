// How an escalation is decided. The owner decides in the dashboard (owner session; optionally with
// an EIP-712 signature over the intent, checked against the owner's address), or by replying
// `APPROVE <code>` / `DENY <code>` from a channel bound to them. Every decision is one conditional
// UPDATE (still PENDING, code unused, not expired), so a code works once and nothing decides an
// expired escalation; a reply that changes nothing is logged on the escalation for its owner.
import { type Hex, getAddress, isAddressEqual, recoverTypedDataAddress } from 'viem';
import {
  hashSpendIntentMessage,
  spendIntentMessage,
  spendIntentTypedData,
} from '../../../core/canon/intent-hash';
import { AppError } from '../../../core/errors';
import { validateSpendIntent } from '../../../core/validation/intent';
import { createChainPublicClient } from '../../../platform/chain/clients';
import { type Db, withTransaction } from '../../../platform/db';
import { describeActor, requireActor, type SubgraphContext } from '../../kit';
import { isSignatureShape } from '../signIn/signature';
import {
  type EscalationRow,
  type EscalationState,
  readEscalation,
  readEscalationByCode,
} from './reads';
import { codeDigest, sameDigest } from './replyCode';
import { insertEscalationEvent } from './writes';

export type OwnerDecision = 'APPROVE' | 'DENY';

const STATE_OF: Record<OwnerDecision, 'APPROVED' | 'DENIED'> = {
  APPROVE: 'APPROVED',
  DENY: 'DENIED',
};

/** The one write that decides: true for exactly one caller while the escalation is open. */
async function resolve(
  client: Db,
  row: EscalationRow,
  decision: OwnerDecision,
  by: { via: string; sender: string; signature: string | null; useCode: boolean },
  now: Date,
): Promise<boolean> {
  const result = await client.query(
    `UPDATE policy.escalations
        SET state = $2, resolved_at = $3, resolved_via = $4, resolved_by = $5, owner_signature = $6,
            code_used_at = CASE WHEN $7 THEN $3 ELSE code_used_at END
      WHERE poll_ref = $1 AND state = 'PENDING' AND expires_at > $3 AND ($7 = false OR code_used_at IS NULL)`,
    [row.pollRef, STATE_OF[decision], now, by.via, by.sender, by.signature, by.useCode],
  );
  if (result.rowCount !== 1) return false;
  await insertEscalationEvent(client, {
    pollRef: row.pollRef,
    owner: row.owner,
    kind: STATE_OF[decision],
    channel: by.via,
    sender: by.sender,
    at: now,
  });
  return true;
}

/**
 * The EIP-712 signature over the escalated intent, by the owner: an EOA by recovery, a contract
 * wallet (ERC-1271 / ERC-6492) through the funding chain when one is configured.
 */
async function checkOwnerSignature(
  ctx: SubgraphContext,
  row: EscalationRow,
  signature: string,
): Promise<void> {
  if (!isSignatureShape(signature))
    throw new AppError('ESCALATION_SIGNATURE_INVALID', 'The signature is not 0x-hex.');
  const validated = validateSpendIntent(row.intent, row.createdAt);
  if (!validated.ok)
    throw new AppError('INTERNAL_ERROR', 'A stored escalated intent no longer validates.');
  const message = spendIntentMessage(validated.intent);
  if (hashSpendIntentMessage(message) !== row.intentHash)
    throw new AppError(
      'INTERNAL_ERROR',
      'A stored escalated intent no longer hashes to its intentHash.',
    );
  const typedData = spendIntentTypedData(message);
  const owner = getAddress(row.owner);
  let signed: boolean;
  try {
    signed = isAddressEqual(
      await recoverTypedDataAddress({ ...typedData, signature: signature as Hex }),
      owner,
    );
  } catch {
    signed = false;
  }
  if (!signed && ctx.chains !== undefined) {
    try {
      // The intentHash is the typed-data hash, so the contract wallet is asked about exactly it.
      signed = await createChainPublicClient(ctx.chains.funding).verifyHash({
        address: owner,
        hash: row.intentHash as Hex,
        signature: signature as Hex,
      });
    } catch (error) {
      throw new AppError(
        'SERVICE_UNAVAILABLE',
        'The chain needed to check a contract-wallet signature did not answer.',
        undefined,
        { cause: error },
      );
    }
  }
  if (!signed)
    throw new AppError(
      'ESCALATION_SIGNATURE_INVALID',
      `The signature over the intent is not ${row.owner}'s.`,
    );
}

/** The dashboard decision: the owner's session only (an admin has no approval authority). */
export async function decideAsOwner(
  ctx: SubgraphContext,
  input: { pollRef: string; decision: OwnerDecision; signature: string | null },
): Promise<EscalationRow> {
  const actor = requireActor(ctx, ['owner']);
  const now = ctx.now();
  const current = await readEscalation(ctx.db, input.pollRef, now);
  if (current === null || current.owner !== actor.address)
    throw new AppError('ESCALATION_NOT_FOUND', undefined, { pollRef: input.pollRef });
  if (input.signature !== null) {
    if (input.decision !== 'APPROVE') {
      throw new AppError(
        'REQUEST_INVALID',
        'A signature over the intent approves it; deny without one.',
        [{ field: 'signature', reason: 'only with APPROVE' }],
      );
    }
    await checkOwnerSignature(ctx, current, input.signature);
  }
  return withTransaction(ctx.db, async (client) => {
    const row = await readEscalation(client, input.pollRef, now, { lock: true });
    if (row === null)
      throw new AppError('ESCALATION_NOT_FOUND', undefined, { pollRef: input.pollRef });
    const decided = await resolve(
      client,
      row,
      input.decision,
      {
        via: input.signature === null ? 'dashboard' : 'dashboard+eip712',
        sender: describeActor(actor),
        signature: input.signature,
        useCode: false,
      },
      now,
    );
    if (!decided)
      throw new AppError('ESCALATION_NOT_PENDING', undefined, {
        pollRef: row.pollRef,
        state: row.state,
      });
    return (await readEscalation(client, input.pollRef, now))!;
  });
}

/** A reply from a messaging channel, as the gateway verified it came from the platform. */
export interface ChannelReply {
  readonly channel: 'telegram' | 'slack' | 'webhook';
  /** The bound conversation: telegram chat id, slack channel id; for webhook the binding id that verified it. */
  readonly chatId: string;
  /** The person: telegram or slack user id; null when the platform names none. */
  readonly userId: string | null;
  readonly decision: OwnerDecision;
  readonly code: string;
}

export type ReplyOutcome =
  | { readonly accepted: true; readonly pollRef: string; readonly state: EscalationState }
  | {
      readonly accepted: false;
      readonly reason:
        'UNKNOWN_CODE' | 'CODE_REUSED' | 'UNBOUND_SENDER' | 'AFTER_EXPIRY' | 'ALREADY_RESOLVED';
      readonly pollRef: string | null;
    };

/** The owner of the ACTIVE binding this sender may answer through, or null. */
async function boundOwner(client: Db, reply: ChannelReply): Promise<string | null> {
  const result = await client.query<{ owner: string }>(
    reply.channel === 'webhook'
      ? `SELECT owner FROM policy.channel_bindings WHERE binding_id = $2 AND kind = $1 AND state = 'ACTIVE'`
      : `SELECT owner FROM policy.channel_bindings
          WHERE kind = $1 AND address = $2 AND state = 'ACTIVE' AND (reply_from IS NULL OR reply_from = $3)
          ORDER BY activated_at LIMIT 1`,
    reply.channel === 'webhook'
      ? [reply.channel, reply.chatId]
      : [reply.channel, reply.chatId, reply.userId],
  );
  return result.rows[0]?.owner ?? null;
}

function senderOf(reply: ChannelReply): string {
  return reply.userId === null ? reply.chatId : `${reply.chatId}/${reply.userId}`;
}

/**
 * Applies `APPROVE|DENY <code>` from a channel. A wrong code, a reused code, an unbound sender or a
 * reply after expiry changes nothing; each is logged (on the escalation when the code names one).
 */
export async function applyChannelReply(
  ctx: Pick<SubgraphContext, 'db' | 'now'>,
  reply: ChannelReply,
): Promise<ReplyOutcome> {
  const now = ctx.now();
  const digest = codeDigest(reply.code);
  return withTransaction(ctx.db, async (client) => {
    const owner = await boundOwner(client, reply);
    const row = await readEscalationByCode(client, digest, now);
    const refuse = async (
      reason: Exclude<ReplyOutcome, { accepted: true }>['reason'],
      target: EscalationRow | null,
    ): Promise<ReplyOutcome> => {
      await insertEscalationEvent(client, {
        pollRef: target?.pollRef ?? null,
        owner: target?.owner ?? owner,
        kind: `REPLY_${reason}`,
        channel: reply.channel,
        sender: senderOf(reply),
        detail: `${reply.decision} refused: ${reason.toLowerCase().replace(/_/g, ' ')}`,
        at: now,
      });
      return { accepted: false, reason, pollRef: target?.pollRef ?? null };
    };
    if (row === null || !sameDigest(row.codeDigest, digest)) return refuse('UNKNOWN_CODE', null);
    if (owner === null || owner !== row.owner) return refuse('UNBOUND_SENDER', row);
    if (row.codeUsedAt !== null) return refuse('CODE_REUSED', row);
    if (row.state === 'EXPIRED') return refuse('AFTER_EXPIRY', row);
    if (row.state !== 'PENDING') return refuse('ALREADY_RESOLVED', row);
    const decided = await resolve(
      client,
      row,
      reply.decision,
      { via: reply.channel, sender: senderOf(reply), signature: null, useCode: true },
      now,
    );
    if (!decided) return refuse('ALREADY_RESOLVED', row);
    return { accepted: true, pollRef: row.pollRef, state: STATE_OF[reply.decision] };
  });
}
