// Authorisation guards for resolvers: each names the actor kinds an operation admits and throws
// AUTH_REQUIRED for the anonymous actor or FORBIDDEN for any other kind; a field a priced REST
// route sells admits only a paid call. Row-level ownership stays in the subgraph that owns the rows.
import { AppError } from '../../core/errors';
import type { Actor } from '../../platform/actor';
import type { SubgraphContext } from './types';

export type ActorKind = Actor['kind'];

export function requireActor<K extends ActorKind>(
  ctx: Pick<SubgraphContext, 'actor'>,
  kinds: readonly K[],
): Extract<Actor, { kind: K }> {
  const actor = ctx.actor;
  if ((kinds as readonly ActorKind[]).includes(actor.kind))
    return actor as Extract<Actor, { kind: K }>;
  if (actor.kind === 'anonymous') throw new AppError('AUTH_REQUIRED');
  throw new AppError('FORBIDDEN');
}

/**
 * For fields a priced REST route runs: only a call the gateway signed as paid (after its paywall)
 * gets through, whoever the actor is, admins included; anything else is PAID_ROUTE_ONLY.
 */
export function requirePaidCall(ctx: Pick<SubgraphContext, 'paidRoute'>, field: string): string {
  if (typeof ctx.paidRoute === 'string') return ctx.paidRoute;
  throw new AppError('PAID_ROUTE_ONLY', undefined, { field });
}

export function requireAdmin(
  ctx: Pick<SubgraphContext, 'actor'>,
): Extract<Actor, { kind: 'admin' }> {
  return requireActor(ctx, ['admin']);
}

/** How an actor is written into audit rows: its kind, plus its address where it has one. */
export function describeActor(actor: Actor): string {
  switch (actor.kind) {
    case 'anonymous':
    case 'admin':
      return actor.kind;
    case 'owner':
      return `owner:${actor.address}`;
    case 'consumer':
      return `consumer:${actor.address}:${actor.policyId}`;
    case 'channel':
      return `channel:${actor.channel}`;
  }
}
