// What every gateway operation carries: the authenticated actor, its signed form for the subgraphs,
// and the correlation id that ties logs and error bodies together.
import type { Actor } from '../../platform/actor';

export interface GatewayContext {
  actor: Actor;
  signedActor: string;
  correlationId: string;
}
