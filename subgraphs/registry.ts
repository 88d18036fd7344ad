// The five subgraph modules by name, in migration order, with the canonical port each one
// listens on (deployments override URLs and ports from config). The one place that says which
// subgraphs make up the supergraph, and so which entities the process's one DataSource maps.
import type { DataSource } from 'typeorm';
import { createDataSource } from '../platform/db/dataSource';
import { SUBGRAPH_NAMES, type SubgraphName } from '../platform/db/migrate';
import { builderSubgraph } from './builder/subgraph';
import { catalogSubgraph } from './catalog/subgraph';
import { intentSubgraph } from './intent/subgraph';
import type { SubgraphModule } from './kit';
import { ledgerSubgraph } from './ledger/subgraph';
import { policySubgraph } from './policy/subgraph';

export const SUBGRAPH_MODULES: Readonly<Record<SubgraphName, SubgraphModule>> = Object.freeze({
  catalog: catalogSubgraph,
  ledger: ledgerSubgraph,
  policy: policySubgraph,
  intent: intentSubgraph,
  builder: builderSubgraph,
});

/** Canonical ports, as written into the committed supergraph (`http://<name>:<port>/graphql`). */
export const CANONICAL_SUBGRAPH_PORTS: Readonly<Record<SubgraphName, number>> = Object.freeze({
  catalog: 4101,
  ledger: 4102,
  policy: 4103,
  intent: 4104,
  builder: 4105,
});

export function canonicalSubgraphUrl(name: SubgraphName): string {
  return `http://${name}:${CANONICAL_SUBGRAPH_PORTS[name]}/graphql`;
}

/** The modules as a list, in SUBGRAPH_NAMES order. */
export function subgraphModules(): SubgraphModule[] {
  return SUBGRAPH_NAMES.map((name) => {
    const module = SUBGRAPH_MODULES[name];
    if (module.name !== name)
      throw new Error(`registry entry ${name} holds the ${module.name} module`);
    return module;
  });
}

/** How many connections the DataSource may hold: it serves only small reads (the catalog). */
export const DATA_SOURCE_MAX_CONNECTIONS = 4;

/**
 * The process's one TypeORM DataSource over every subgraph's entities, connected. Created where the
 * process opens its pool and destroyed when it stops; subgraphs receive it in their server deps.
 */
export function openSubgraphDataSource(url: string, applicationName: string): Promise<DataSource> {
  const entities = subgraphModules().flatMap((module) => module.entities ?? []);
  return createDataSource(url, entities, {
    max: DATA_SOURCE_MAX_CONNECTIONS,
    applicationName,
  }).initialize();
}
