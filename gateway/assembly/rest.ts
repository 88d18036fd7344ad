// The REST layer as the gateway mounts it, after GraphQL: the JSON guards (media type, body size,
// wire-safe JSON), the MCP endpoint and the route table's router (one paywall behind both), then the answers for an unmatched
// request and for every error, in the one error body.
import express, { type Express } from 'express';
import { newCorrelationId } from '../../core/canon/ids';
import type { Logger } from '../../platform/log';
import type { IssuedSession, SessionClaims } from '../auth/sessions';
import { restErrorHandler, unmatchedRequest } from '../rest/errorHandler';
import { checkWireBody, requireJsonMediaType } from '../rest/requestGuards';
import { AppError } from '../../core/errors';
import { mcpHandler } from '../mcp/server';
import { createRestRouter, type RestRouterDeps } from '../rest/router';
import type { RestServiceInfo, RouteDefinition } from '../rest/types';
import type { X402Extensions } from '../x402/extensions';
import type { IdempotencyKeys } from '../rest/idempotency';
import type { Paywall } from '../x402/paywall';
import type { ActorContexts } from './actors';
import type { GatewayGraphQL } from './graphql';

export interface RestMountDeps {
  readonly routes: readonly RouteDefinition[];
  readonly service: RestServiceInfo;
  readonly documents: ReadonlyMap<string, string>;
  readonly graphql: GatewayGraphQL;
  readonly contexts: ActorContexts;
  readonly consumerAuthRequired: boolean;
  readonly issueSession: (claims: SessionClaims) => Promise<IssuedSession>;
  readonly paywall: Paywall | null;
  readonly extensions: X402Extensions | null;
  readonly idempotency: IdempotencyKeys | null;
  readonly bodyLimitBytes: number;
  readonly now: () => Date;
  readonly log: Logger;
}

export function mountRest(app: Express, deps: RestMountDeps): void {
  const { graphql, contexts } = deps;
  app.use(
    requireJsonMediaType,
    express.json({ limit: deps.bodyLimitBytes, type: () => true }),
    checkWireBody,
  );
  const router: RestRouterDeps = {
    routes: deps.routes,
    service: deps.service,
    documents: deps.documents,
    contextFor: (authorization, correlationId) =>
      contexts.forRequest(authorization, correlationId || newCorrelationId()),
    paidContext: contexts.paid,
    consumerAuthRequired: deps.consumerAuthRequired,
    edge: { issueSession: deps.issueSession },
    paywall: deps.paywall,
    extensions: deps.extensions,
    idempotency: deps.idempotency,
    now: deps.now,
    execute: (query, operationName, variables, contextValue) =>
      graphql.run({ query, operationName, variables }, contextValue, 'by REST routes'),
  };
  // MCP: a second transport over the same route table, paywall and ledger (docs/mcp.md).
  app.post(
    '/mcp',
    mcpHandler({
      router,
      serviceName: deps.service.serviceName,
      version: deps.service.version,
      log: deps.log,
    }),
  );
  app.all('/mcp', (_req, _res, next) => {
    next(
      new AppError('METHOD_NOT_ALLOWED', 'The MCP endpoint is stateless: POST only.', {
        allow: ['POST'],
      }),
    );
  });
  app.use(createRestRouter(router));
  app.use(unmatchedRequest(deps.routes));
  app.use(
    restErrorHandler({
      log: deps.log,
      bodyLimitBytes: deps.bodyLimitBytes,
      docsBaseUrl: deps.service.docsBaseUrl,
    }),
  );
}
