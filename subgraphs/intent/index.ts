// The intent subgraph: bound spend intents (this issue: the SpendIntent entity and its admin read).
// Owns the `intent` Postgres schema.
import { buildFederatedSchema, type SubgraphModule } from '../kit';
import { intentReferenceResolvers, SpendIntentResolver } from './resolvers';

export const intentSubgraph: SubgraphModule = {
  name: 'intent',
  buildSchema: () => buildFederatedSchema({ resolvers: [SpendIntentResolver] }, intentReferenceResolvers),
};
