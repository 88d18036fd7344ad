// Runs one operation through a subgraph's Apollo Server request pipeline (persisted queries, the
// parsed-and-validated document cache, plugins, formatError) without Apollo's HTTP layer, after
// verifying the signed actor with the server's context factory. In-process calls and the HTTP hop
// both come through here, so both admit exactly the same actors and answer the same errors.
import type { ApolloServer } from '@apollo/server';
import type { DocumentNode, FormattedExecutionResult } from 'graphql';
import { contextFactoryFor, isContextRefusal, type RequestCredentials } from './context';
import { formatSubgraphError } from './errors';
import type { SubgraphContext } from './types';

/** What the HTTP path hands the pipeline: the query may be absent when a persisted hash names it. */
export interface OperationRequest {
  readonly query?: string | DocumentNode;
  readonly variables?: Record<string, unknown>;
  readonly operationName?: string;
  readonly extensions?: Record<string, unknown>;
}

/** One operation's answer with the HTTP head Apollo's pipeline decided (status, cache-control). */
export interface OperationAnswer {
  readonly status: number;
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly result: FormattedExecutionResult;
}

/** The caller's context, or the 401 answer when its signed actor header is refused. */
export function verifyCaller(
  server: ApolloServer<SubgraphContext>,
  credentials: RequestCredentials,
): { context: SubgraphContext } | { refused: OperationAnswer } {
  try {
    return { context: contextFactoryFor(server)(credentials) };
  } catch (error) {
    if (!isContextRefusal(error)) throw error;
    const status = (error.extensions.http as { status?: number } | undefined)?.status ?? 401;
    const result = { errors: [formatSubgraphError(error.toJSON(), error)] };
    return { refused: { status, headers: [], result } };
  }
}

/** Runs one operation for a verified caller through Apollo's request pipeline. */
export async function runOperation(
  server: ApolloServer<SubgraphContext>,
  request: OperationRequest,
  contextValue: SubgraphContext,
): Promise<OperationAnswer> {
  const response = await server.executeOperation(
    {
      query: request.query,
      variables: request.variables,
      operationName: request.operationName,
      extensions: request.extensions,
    },
    { contextValue },
  );
  if (response.body.kind !== 'single')
    throw new Error('incremental delivery is not supported by subgraphs');
  return {
    status: response.http.status ?? 200,
    headers: [...response.http.headers],
    result: response.body.singleResult,
  };
}

/**
 * Runs one operation on the server through Apollo's request pipeline (persisted queries, the
 * parsed-and-validated document cache, plugins, formatError) without its HTTP layer, verifying
 * `credentials.actorHeader` first: a refused header yields `{errors: [AUTH_REQUIRED]}` and 401.
 */
export async function answerOperation(
  server: ApolloServer<SubgraphContext>,
  request: OperationRequest,
  credentials: RequestCredentials = {},
): Promise<OperationAnswer> {
  const caller = verifyCaller(server, credentials);
  if ('refused' in caller) return caller.refused;
  return runOperation(server, request, caller.context);
}
