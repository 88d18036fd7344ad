// The gateway's GraphQL: Apollo Gateway over the composed supergraph, with the operation guard
// (depth, cost, tokens, paid fields) and error formatting, served on POST /graphql and run
// in-process for REST routes, subscriptions and channel callbacks with an actor of their own.
import type { Server } from 'node:http';
import express, { type Express } from 'express';
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { expressMiddleware } from '@as-integrations/express5';
import { GraphQLError } from 'graphql';
import { AppError } from '../../core/errors';
import { GRAPHQL_LIMIT_DEFAULTS, type GraphQLSettings } from '../../platform/config';
import type { Logger } from '../../platform/log';
import type { GatewayContext } from '../graphql/context';
import { formatGatewayError } from '../graphql/errors';
import { operationGuardPlugin } from '../graphql/operationGuard';
import { outboundFieldsOf } from '../graphql/outboundFields';
import { paidFieldsOf } from '../graphql/paidFields';
import { createFederatedGateway, type SubgraphEndpoint } from '../graphql/supergraph';
import type { OperationResult } from '../rest/router';
import type { RouteDefinition } from '../rest/types';
import type { GatewayExecutor } from '../subscriptions/escalations';
import type { ActorContexts } from './actors';

export interface GatewayGraphQLOptions {
  readonly supergraphSdl: string;
  readonly subgraphs: Readonly<Record<string, SubgraphEndpoint>>;
  /** Limits not given take GRAPHQL_LIMIT_DEFAULTS. */
  readonly graphql: Pick<GraphQLSettings, 'maxDepth' | 'maxCost' | 'introspection'> &
    Partial<GraphQLSettings>;
  readonly routes: readonly RouteDefinition[];
  readonly log: Logger;
}

export interface GatewayGraphQL {
  readonly apollo: ApolloServer<GatewayContext>;
  /** Runs an operation in-process; `purpose` names who asked, in the one error it can raise. */
  run(
    request: { query: string; operationName?: string; variables: Record<string, unknown> },
    contextValue: GatewayContext,
    purpose: string,
  ): Promise<OperationResult>;
  stop(): Promise<void>;
}

export async function startGraphQL(
  options: GatewayGraphQLOptions,
  httpServer: Server,
  documents: ReadonlyMap<string, string>,
): Promise<GatewayGraphQL> {
  const { log } = options;
  const federated = createFederatedGateway({
    supergraphSdl: options.supergraphSdl,
    subgraphs: options.subgraphs,
    log,
  });
  const graphql = { ...GRAPHQL_LIMIT_DEFAULTS, ...options.graphql };
  const plugins: ApolloServerPlugin<GatewayContext>[] = [
    ApolloServerPluginDrainHttpServer({ httpServer }),
    operationGuardPlugin({
      limits: graphql,
      paidFields: paidFieldsOf(options.routes, documents),
      outboundFields: outboundFieldsOf(options.routes, documents),
    }),
  ];
  const apollo = new ApolloServer<GatewayContext>({
    gateway: federated.gateway,
    introspection: graphql.introspection,
    includeStacktraceInErrorResponses: false,
    // The CLI owns the process's signals and stops the gateway in order; Apollo must not re-raise them.
    stopOnTerminationSignals: false,
    // Bounds parsing and graphql-js validation before any of our checks can run.
    parseOptions: { maxTokens: graphql.maxTokens },
    formatError: (formatted, error) =>
      formatGatewayError(formatted, error, { hideSchemaDetails: !graphql.introspection }),
    plugins,
    logger: log,
  });
  await apollo.start();
  return {
    apollo,
    async run(request, contextValue, purpose) {
      const response = await apollo.executeOperation(request, { contextValue });
      if (response.body.kind !== 'single')
        throw new AppError('INTERNAL_ERROR', `Incremental delivery is not used ${purpose}.`);
      return {
        data: response.body.singleResult.data as Record<string, unknown> | null | undefined,
        errors: response.body.singleResult.errors,
      };
    },
    async stop() {
      await apollo.stop();
      await federated.close();
    },
  };
}

/** Runs an operation on this gateway as `actor` (freshly signed): subscriptions and channels read and act with it. */
export function executorAs(graphql: GatewayGraphQL, contexts: ActorContexts): GatewayExecutor {
  return (actor, query, variables) =>
    graphql.run({ query, variables }, contexts.forActor(actor), 'here');
}

function graphQLAuthError(error: AppError): GraphQLError {
  return new GraphQLError(error.message, {
    extensions: {
      code: error.code,
      status: error.status,
      retryable: error.retryable,
      http: { status: error.status },
    },
  });
}

/** POST /graphql: the caller's bearer becomes the operation's signed actor. */
export function mountGraphQL(
  app: Express,
  graphql: GatewayGraphQL,
  contexts: ActorContexts,
  bodyLimitBytes: number,
  /** Takes a token from this client's outbound bucket (the REST routes' one); rejects with RATE_LIMITED. */
  takeOutboundToken: (req: express.Request) => Promise<void>,
): void {
  app.use(
    '/graphql',
    express.json({ limit: bodyLimitBytes }),
    expressMiddleware(graphql.apollo, {
      context: async ({ req, res }) => {
        try {
          const context = await contexts.forRequest(
            req.headers.authorization,
            String(res.locals.correlationId),
          );
          return { ...context, takeOutboundToken: () => takeOutboundToken(req) };
        } catch (error) {
          if (error instanceof AppError) throw graphQLAuthError(error);
          throw error;
        }
      },
    }),
  );
}
