// The intent subgraph: bound spend intents, preflight decisions (storage, window, engine), the
// read-side agent tools and the dashboard reads. Owns the `intent` Postgres schema.
import { buildFederatedSchema, type SubgraphModule } from '../kit';
import { DashboardResolver, PolicyIntentsResolver, PolicyWithIntents } from './dashboard';
import { IntentMutationResolver, IntentToolResolver } from './mutations';
import { intentReferenceResolvers, SpendIntentResolver } from './resolvers';

export const intentSubgraph: SubgraphModule = {
  name: 'intent',
  buildSchema: () => buildFederatedSchema(
      {
        resolvers: [SpendIntentResolver, IntentMutationResolver, IntentToolResolver, DashboardResolver, PolicyIntentsResolver],
        orphanedTypes: [PolicyWithIntents],
      },
      intentReferenceResolvers,
    ),
};
