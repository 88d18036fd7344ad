// The builder subgraph (launch pack). This issue: it extends the catalog's Capability entity with
// builderTools. No tables yet; the builder routes themselves arrive in a later issue.
import { buildFederatedSchema, type SubgraphModule } from '../kit';
import { builderReferenceResolvers, CapabilityBuilderToolsResolver } from './resolvers';
import { CapabilityBuilderTools } from './schema';

export const builderSubgraph: SubgraphModule = {
  name: 'builder',
  buildSchema: () =>
    buildFederatedSchema(
      { resolvers: [CapabilityBuilderToolsResolver], orphanedTypes: [CapabilityBuilderTools] },
      builderReferenceResolvers,
    ),
};
