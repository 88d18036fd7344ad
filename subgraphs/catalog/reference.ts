// Entity reference resolvers: how the gateway fetches a Provider or Capability by id when
// another subgraph's field returns one. Unknown ids resolve to null, as the queries do.
import type { ReferenceResolvers } from '../kit';
import { catalogFor } from './views';

export const catalogReferenceResolvers: ReferenceResolvers = {
  Provider: {
    async __resolveReference(reference, ctx) {
      return (await catalogFor(ctx)).providerById.get(String(reference.id)) ?? null;
    },
  },
  Capability: {
    async __resolveReference(reference, ctx) {
      return (await catalogFor(ctx)).capabilityById.get(String(reference.id)) ?? null;
    },
  },
};
