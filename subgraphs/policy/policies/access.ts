// Who may see and change which policy. An admin: any. An owner session: only policies it owns.
// A consumer session: only the one policy it is bound to, through the consumer read. Anyone else:
// nothing. A refused read looks exactly like a missing policy (null / POLICY_NOT_FOUND), so the
// answer never reveals that another owner's policy exists.
import { AppError } from '../../../core/errors';
import { requireActor, settingsOf, type SubgraphContext } from '../../kit';
import { type PolicyRow, readLatestPolicy } from './reads';
import type { OwnerScope } from './writes';

export async function readablePolicy(ctx: SubgraphContext, id: string): Promise<PolicyRow | null> {
  switch (ctx.actor.kind) {
    case 'admin':
      return readLatestPolicy(ctx.db, id, null);
    case 'owner':
      return readLatestPolicy(ctx.db, id, ctx.actor.address);
    default:
      return null;
  }
}

/** Writers are admins and owner sessions; AUTH_REQUIRED for no credential, FORBIDDEN for a consumer session. */
export function writerScope(ctx: SubgraphContext): OwnerScope {
  const actor = requireActor(ctx, ['admin', 'owner']);
  return actor.kind === 'admin' ? { anyOwner: true } : { anyOwner: false, owner: actor.address };
}

/** The readable policy, or POLICY_NOT_FOUND: for operations that must name an existing policy. */
export async function requireReadablePolicy(ctx: SubgraphContext, id: string): Promise<PolicyRow> {
  const policy = await readablePolicy(ctx, id);
  if (policy === null) throw new AppError('POLICY_NOT_FOUND', undefined, { policyId: id });
  return policy;
}

/**
 * The consumer surface's read: a consumer session reads the policy it is bound to (naming another
 * is FORBIDDEN); owners and admins name one they may read; without a credential, a named policy is
 * readable only where CONSUMER_AUTH_REQUIRED=0.
 */
export async function consumerReadablePolicy(
  ctx: SubgraphContext,
  policyId: string | null,
): Promise<PolicyRow> {
  const actor = ctx.actor;
  if (actor.kind === 'consumer' && policyId !== null && policyId !== actor.policyId) {
    throw new AppError('FORBIDDEN', 'This session is bound to another policy.');
  }
  const target = actor.kind === 'consumer' ? actor.policyId : policyId;
  if (target === null)
    throw actor.kind === 'anonymous'
      ? new AppError('AUTH_REQUIRED')
      : new AppError('POLICY_ID_REQUIRED');
  let policy: PolicyRow | null;
  switch (actor.kind) {
    case 'consumer':
      policy = await readLatestPolicy(ctx.db, target, actor.address);
      break;
    case 'anonymous':
      if (settingsOf(ctx).consumerAuthRequired) {
        throw new AppError(
          'AUTH_REQUIRED',
          'Consumer reads need a session; a policyId alone is not a credential.',
        );
      }
      policy = await readLatestPolicy(ctx.db, target, null);
      break;
    default:
      policy = await readablePolicy(ctx, target);
  }
  if (policy === null) throw new AppError('POLICY_NOT_FOUND', undefined, { policyId: target });
  return policy;
}
