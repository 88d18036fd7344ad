// The catalog subgraph: providers, capabilities and gated rails with their maturities, the
// execution object, and the audited admin maturity changes. Owns the `catalog` Postgres schema;
// reads it through TypeORM (its entities are declared here for the process's one DataSource).
import { buildFederatedSchema, type SubgraphModule } from '../kit';
import { catalogReferenceResolvers } from './reference';
import { CatalogResolver } from './resolvers';
import { CATALOG_ENTITIES } from './schema';

export const catalogSubgraph: SubgraphModule = {
  name: 'catalog',
  entities: CATALOG_ENTITIES,
  buildSchema: () =>
    buildFederatedSchema({ resolvers: [CatalogResolver] }, catalogReferenceResolvers),
};
