// The catalog subgraph: providers, capabilities and gated rails with their maturities, the
// execution object, and the audited admin maturity changes. Owns the `catalog` Postgres schema.
import { buildFederatedSchema, type SubgraphModule } from '../kit';
import { catalogReferenceResolvers } from './reference';
import { CatalogResolver } from './resolvers';

export const catalogSubgraph: SubgraphModule = {
  name: 'catalog',
  buildSchema: () =>
    buildFederatedSchema({ resolvers: [CatalogResolver] }, catalogReferenceResolvers),
};
