// How the gateway turns a caller into the signed actor every operation carries: authenticate the
// bearer, sign the actor for the subgraphs with the injected clock, and, on a priced route's own
// call after its paywall, sign the paid route in too. Signed per operation: a header lives 60 s.
import { newCorrelationId } from '../../core/canon/ids';
import { type Actor, signActor } from '../../platform/actor';
import { Authenticator, adminTokenVerifier, type BearerVerifier } from '../auth/credentials';
import { sessionVerifier } from '../auth/sessions';
import type { GatewayContext } from '../graphql/context';

/** Admin tokens, then owner and consumer sessions, then any verifiers the process adds. */
export function gatewayAuthenticator(
  credentials: {
    readonly adminTokenHashes: readonly Buffer[];
    readonly sessionSecret: Buffer;
    readonly extraVerifiers?: readonly BearerVerifier[];
  },
  now: () => Date,
): Authenticator {
  return new Authenticator([
    adminTokenVerifier(credentials.adminTokenHashes),
    sessionVerifier(credentials.sessionSecret, now),
    ...(credentials.extraVerifiers ?? []),
  ]);
}

export interface ActorContexts {
  /** The context of a request bearing `authorization`; rejects with AppError for a bad credential. */
  forRequest(authorization: string | undefined, correlationId: string): Promise<GatewayContext>;
  /** The context of an operation the gateway runs itself as `actor` (subscriptions, channels). */
  forActor(actor: Actor): GatewayContext;
  /** The same caller as a paid call of this priced route. */
  paid(context: GatewayContext, paidRoute: string): GatewayContext;
}

export function actorContexts(
  authenticator: Authenticator,
  actorSecret: Buffer,
  now: () => Date,
): ActorContexts {
  const signed = (actor: Actor, correlationId: string): GatewayContext => ({
    actor,
    signedActor: signActor(actor, actorSecret, now().getTime()),
    correlationId,
  });
  return {
    forRequest: async (authorization, correlationId) =>
      signed(await authenticator.authenticate(authorization), correlationId),
    forActor: (actor) => signed(actor, newCorrelationId()),
    paid: (context, paidRoute) => ({
      ...context,
      paidRoute,
      signedActor: signActor(context.actor, actorSecret, now().getTime(), paidRoute),
    }),
  };
}
