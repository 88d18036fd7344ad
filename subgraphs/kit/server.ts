// Wraps one subgraph module in an Apollo Server: introspection on (the gateway reads `_service`),
// stack traces and internal messages never sent, every internal error logged with its
// correlation id. Also runs operations in-process with the same actor verification as HTTP.
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import {
  ApolloServerPluginInlineTraceDisabled,
  ApolloServerPluginLandingPageDisabled,
} from '@apollo/server/plugin/disabled';
import type { DocumentNode, FormattedExecutionResult } from 'graphql';
import {
  createContextFactory,
  registerContextFactory,
  type RequestCredentials,
  type SubgraphServerDeps,
} from './context';
import { classifyError, formatSubgraphError } from './errors';
import { answerOperation } from './operation';
import type { SubgraphContext, SubgraphModule } from './types';

export { CORRELATION_HEADER, type RequestCredentials, type SubgraphServerDeps } from './context';
export { startSubgraphHttp, type SubgraphHttpHandle, type SubgraphHttpOptions } from './http';

export interface InProcessRequest {
  readonly query: string | DocumentNode;
  readonly variables?: Record<string, unknown>;
  readonly operationName?: string;
}

function logInternalErrorToStderr(subgraph: string) {
  return (error: unknown, correlationId: string): void => {
    const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
    process.stderr.write(
      `${JSON.stringify({ level: 'error', subgraph, correlationId, msg: 'internal error', error: detail })}\n`,
    );
  };
}

function internalErrorPlugin(
  onInternalError: (error: unknown, correlationId: string) => void,
): ApolloServerPlugin<SubgraphContext> {
  return {
    async requestDidStart() {
      return {
        async didEncounterErrors({ errors, contextValue }) {
          for (const error of errors) {
            if (classifyError(error).kind === 'internal')
              onInternalError(error, contextValue.correlationId);
          }
        },
        async willSendResponse({ response, contextValue }) {
          if (response.body.kind !== 'single' || response.body.singleResult.errors === undefined)
            return;
          response.body.singleResult.errors = response.body.singleResult.errors.map((error) =>
            error.extensions?.code === 'INTERNAL_ERROR'
              ? {
                  ...error,
                  extensions: { ...error.extensions, correlationId: contextValue.correlationId },
                }
              : error,
          );
        },
      };
    },
  };
}

/** Builds the module's schema and returns a started server bound to these deps. */
export async function createSubgraphServer(
  module: SubgraphModule,
  deps: SubgraphServerDeps,
): Promise<ApolloServer<SubgraphContext>> {
  const contextFactory = createContextFactory(deps);
  const server = new ApolloServer<SubgraphContext>({
    schema: await module.buildSchema(),
    introspection: true,
    includeStacktraceInErrorResponses: false,
    formatError: formatSubgraphError,
    stopOnTerminationSignals: false,
    plugins: [
      ApolloServerPluginLandingPageDisabled(),
      ApolloServerPluginInlineTraceDisabled(),
      internalErrorPlugin(deps.onInternalError ?? logInternalErrorToStderr(module.name)),
    ],
  });
  registerContextFactory(server, contextFactory);
  await server.start();
  return server;
}

/**
 * Runs one operation on the server without HTTP, verifying `credentials.actorHeader` exactly as
 * the HTTP path does. A refused header yields `{errors: [AUTH_REQUIRED]}`, as over HTTP.
 */
export async function executeInProcess(
  server: ApolloServer<SubgraphContext>,
  request: InProcessRequest,
  credentials: RequestCredentials = {},
): Promise<FormattedExecutionResult> {
  return (await answerOperation(server, request, credentials)).result;
}
