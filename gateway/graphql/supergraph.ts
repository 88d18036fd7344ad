// The federated gateway: @apollo/gateway loading the committed supergraph (schema/supergraph.graphql)
// with each subgraph reached either over HTTP (keep-alive client, persisted queries) or, in the all-in-one process,
// in-process. Either way the subgraph receives the same signed actor.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  ApolloGateway,
  type GraphQLDataSource,
  type GraphQLDataSourceProcessOptions,
} from '@apollo/gateway';
import type { GatewayGraphQLResponse } from '@apollo/server-gateway-interface';
import { projectRoot } from '../../platform/paths';
import type { Logger } from '../../platform/log';
import type { GatewayContext } from './context';
import { createSubgraphClient } from './subgraphClient';

export interface InProcessSubgraph {
  execute(
    request: { query: string; variables?: Record<string, unknown>; operationName?: string },
    credentials: { signedActor: string; correlationId: string },
  ): Promise<GatewayGraphQLResponse>;
}

export type SubgraphEndpoint = { readonly url: string } | { readonly inProcess: InProcessSubgraph };

export function supergraphPath(): string {
  return path.join(projectRoot(), 'schema', 'supergraph.graphql');
}

export function loadSupergraphSdl(file: string = supergraphPath()): string {
  return readFileSync(file, 'utf8');
}

class InProcessDataSource implements GraphQLDataSource<GatewayContext> {
  constructor(private readonly subgraph: InProcessSubgraph) {}

  async process(
    options: GraphQLDataSourceProcessOptions<GatewayContext>,
  ): Promise<GatewayGraphQLResponse> {
    const context = options.context as Partial<GatewayContext>;
    const { query, variables, operationName } = options.request;
    if (!query) throw new Error('in-process subgraph request without a query');
    return this.subgraph.execute(
      {
        query,
        variables: variables as Record<string, unknown> | undefined,
        operationName: operationName ?? undefined,
      },
      { signedActor: context.signedActor ?? '', correlationId: context.correlationId ?? '' },
    );
  }
}

/** Subgraph names in the supergraph are lowercase (catalog, ledger, policy, intent, builder). */
export function createFederatedGateway(options: {
  supergraphSdl: string;
  subgraphs: Readonly<Record<string, SubgraphEndpoint>>;
  log: Logger;
}): { gateway: ApolloGateway; close(): Promise<void> } {
  const client = createSubgraphClient();
  const gateway = new ApolloGateway({
    supergraphSdl: options.supergraphSdl,
    logger: options.log,
    buildService({ name }) {
      const endpoint = options.subgraphs[name.toLowerCase()];
      if (!endpoint) throw new Error(`no endpoint configured for subgraph ${name}`);
      if ('inProcess' in endpoint) return new InProcessDataSource(endpoint.inProcess);
      return client.dataSource(endpoint.url);
    },
  });
  return { gateway, close: () => client.close() };
}
