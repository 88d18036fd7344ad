// What every gateway operation carries: the authenticated actor, its signed form for the subgraphs,
// the correlation id that ties logs and error bodies together, and, only on a priced REST route's
// own call after its paywall, the route it was paid on (signed into the actor header too).
import type { Actor } from '../../platform/actor';

export interface GatewayContext {
  actor: Actor;
  signedActor: string;
  correlationId: string;
  /** `POST /preflight_payment` on the REST layer's paid call; absent on every other request. */
  paidRoute?: string;
  /**
   * On POST /graphql only: takes a token from the caller's outbound bucket (the one the REST routes
   * that call a third party take), rejecting with RATE_LIMITED when it is empty.
   */
  takeOutboundToken?: () => Promise<void>;
}
