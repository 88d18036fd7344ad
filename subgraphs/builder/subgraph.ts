// The builder subgraph (launch pack): extends the catalog's Capability entity with builderTools,
// the builder routes that rely on it (tools.ts, a static table). It owns no tables and serves no
// builder route itself; the launch pack's pure parts (names, ranking, SEO tips) are in core/builder.
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
