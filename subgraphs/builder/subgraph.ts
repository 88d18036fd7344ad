// The builder subgraph (launch pack): the five operations behind the /builder/* routes
// (operations.ts: suggest_names, check_domains, rank_options, seo_tips, brand_pack) and
// Capability.builderTools, the builder routes that rely on a catalog capability. It owns no tables;
// the pure parts are in core/builder, the model client in platform/llm, RDAP in platform/rdap.
import { buildFederatedSchema, type SubgraphModule } from '../kit';
import { BuilderOperationsResolver } from './operations';
import { builderReferenceResolvers, CapabilityBuilderToolsResolver } from './resolvers';
import { CapabilityBuilderTools } from './schema';

export const builderSubgraph: SubgraphModule = {
  name: 'builder',
  buildSchema: () =>
    buildFederatedSchema(
      {
        resolvers: [CapabilityBuilderToolsResolver, BuilderOperationsResolver],
        orphanedTypes: [CapabilityBuilderTools],
      },
      builderReferenceResolvers,
    ),
};
