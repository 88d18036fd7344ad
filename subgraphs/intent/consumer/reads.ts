// Reading consumer intents for the people allowed to: a consumer session its bound policy's, an
// owner the intents of the policies they own (asked of the policy subgraph through its published
// `policy.policy_owner` / `policy.owner_policy_ids`), an admin every one. Another policy's intent
// reads exactly like a missing one (null / 404 CONSUMER_INTENT_NOT_FOUND). Lists are newest first
// with opaque keyset cursors (created_at in microseconds, then intentId).
import { type ConsumerIntentState, isConsumerIntentState } from '../../../core/consumer/lifecycle';
import { isConsumerIntentId, POLICY_ID_PATTERN } from '../../../core/canon/id-shapes';
import { AppError } from '../../../core/errors';
import type { Db } from '../../../platform/db';
import { requireActor, settingsOf, type SubgraphContext } from '../../kit';
import { afterCursor as decodeCursor, cursorOf } from '../lists/paging';
import { policyOwner } from '../lists/access';
import {
  CONSUMER_INTENT_COLUMNS,
  type ConsumerIntentDbRow,
  type ConsumerIntentRow,
  fromRow,
  getConsumerIntent,
} from './store';

// Who owns a policy: one copy, in lists/access.ts; re-exported for the consumer folder's users.
export { policyOwner };

/** The intent with this idempotency key on this policy, if one was created. */
export async function intentByIdempotencyKey(
  db: Db,
  policyId: string,
  key: string,
): Promise<ConsumerIntentRow | null> {
  const result = await db.query<ConsumerIntentDbRow>(
    `SELECT ${CONSUMER_INTENT_COLUMNS} FROM intent.consumer_intents
      WHERE policy_id = $1::numeric AND idempotency_key = $2`,
    [policyId, key],
  );
  return result.rows[0] ? fromRow(result.rows[0]) : null;
}

/** Whether the caller may see this policy's consumer intents. */
async function mayRead(ctx: SubgraphContext, policyId: string): Promise<boolean> {
  const actor = ctx.actor;
  switch (actor.kind) {
    case 'admin':
      return true;
    case 'consumer':
      return actor.policyId === policyId;
    case 'owner':
      return (await policyOwner(ctx.db, policyId)) === actor.address.toLowerCase();
    default:
      return false;
  }
}

/** One intent the caller may see; null for a missing one and for anyone else's. */
export async function readableConsumerIntent(
  ctx: SubgraphContext,
  intentId: string,
): Promise<ConsumerIntentRow | null> {
  requireActor(ctx, ['admin', 'owner', 'consumer']);
  if (!isConsumerIntentId(intentId)) return null;
  const row = await getConsumerIntent(ctx.db, intentId);
  if (row === null || !(await mayRead(ctx, row.policyId))) return null;
  return row;
}

/** The same, or 404 CONSUMER_INTENT_NOT_FOUND. */
export async function requireReadableConsumerIntent(
  ctx: SubgraphContext,
  intentId: string,
): Promise<ConsumerIntentRow> {
  const row = await readableConsumerIntent(ctx, intentId);
  if (row === null) throw new AppError('CONSUMER_INTENT_NOT_FOUND', undefined, { intentId });
  return row;
}

export interface ConsumerIntentPageArgs {
  readonly policyId?: string | null;
  readonly state?: string | null;
  readonly after?: string | null;
  readonly first?: number | null;
}

export interface ConsumerIntentPage {
  readonly nodes: ConsumerIntentRow[];
  readonly pageInfo: { endCursor: string | null; hasNextPage: boolean };
}

const CURSOR = /^ci:([0-9]{1,17}):(ci_[0-9a-f]{24})$/;

function pageArgs(args: ConsumerIntentPageArgs): {
  first: number;
  state: ConsumerIntentState | null;
} {
  const first = args.first ?? 20;
  if (!Number.isInteger(first) || first < 1 || first > 100)
    throw new AppError('REQUEST_INVALID', 'first must be 1–100.', [
      { field: 'first', reason: 'must be 1–100' },
    ]);
  const state = args.state ?? null;
  if (state !== null && !isConsumerIntentState(state))
    throw new AppError('REQUEST_INVALID', 'state must be a consumer intent state.', [
      { field: 'state', reason: 'must be a consumer intent state such as AWAITING_FUNDING' },
    ]);
  if (args.policyId != null && !POLICY_ID_PATTERN.test(args.policyId))
    throw new AppError('REQUEST_INVALID', 'policyId must be a uint256 decimal string.', [
      { field: 'policyId', reason: 'must be a uint256 decimal string' },
    ]);
  return { first, state };
}

/**
 * The policies a list covers: a consumer session its own (naming another is FORBIDDEN); an owner
 * the named one when theirs (else none), or all of theirs; an admin the named one or all (null);
 * no credential, the named one where CONSUMER_AUTH_REQUIRED=0 (AUTH_REQUIRED otherwise).
 */
async function scopeOf(ctx: SubgraphContext, policyId: string | null): Promise<string[] | null> {
  const named = policyId === null ? null : BigInt(policyId).toString();
  // Without a session, a named policy is listed only where CONSUMER_AUTH_REQUIRED=0.
  if (ctx.actor.kind === 'anonymous' && named !== null && !settingsOf(ctx).consumerAuthRequired)
    return [named];
  const actor = requireActor(ctx, ['admin', 'owner', 'consumer']);
  if (actor.kind === 'consumer') {
    if (named !== null && named !== actor.policyId)
      throw new AppError('FORBIDDEN', 'This session is bound to another policy.');
    return [actor.policyId];
  }
  if (actor.kind === 'admin') return named === null ? null : [named];
  if (named !== null) return (await mayRead(ctx, named)) ? [named] : [];
  const owned = await ctx.db.query<{ policy_id: string }>(
    'SELECT policy_id FROM policy.owner_policy_ids($1)',
    [actor.address],
  );
  return owned.rows.map((row) => row.policy_id);
}

export async function consumerIntentsPage(
  ctx: SubgraphContext,
  args: ConsumerIntentPageArgs,
): Promise<ConsumerIntentPage> {
  const { first, state } = pageArgs(args);
  const after = decodeCursor(args.after, CURSOR);
  const scope = await scopeOf(ctx, args.policyId ?? null);
  if (scope !== null && scope.length === 0)
    return { nodes: [], pageInfo: { endCursor: null, hasNextPage: false } };
  const result = await ctx.db.query<ConsumerIntentDbRow & { micros: string }>(
    `SELECT ${CONSUMER_INTENT_COLUMNS},
            (extract(epoch FROM created_at) * 1000000)::bigint::text AS micros
       FROM intent.consumer_intents
      WHERE ($1::numeric[] IS NULL OR policy_id = ANY($1::numeric[]))
        AND ($2::text IS NULL OR state = $2)
        AND ($3::bigint IS NULL OR ((extract(epoch FROM created_at) * 1000000)::bigint, intent_id) < ($3::bigint, $4::text))
      ORDER BY created_at DESC, intent_id DESC
      LIMIT $5`,
    [scope, state, after?.[1] ?? null, after?.[2] ?? null, first + 1],
  );
  const kept = result.rows.slice(0, first);
  const last = kept[kept.length - 1];
  return {
    nodes: kept.map(fromRow),
    pageInfo: {
      endCursor: last === undefined ? null : cursorOf(`ci:${last.micros}:${last.intent_id}`),
      hasNextPage: result.rows.length > first,
    },
  };
}
