// The REST layer as the gateway mounts it, after GraphQL: the JSON guards (media type, body size,
// wire-safe JSON), the route table's router with its paywall, then the answers for an unmatched
// request and for every error, in the one error body.
import express, { type Express } from 'express';
import { newCorrelationId } from '../../core/canon/ids';
import type { Logger } from '../../platform/log';
import type { IssuedSession, SessionClaims } from '../auth/sessions';
import { restErrorHandler, unmatchedRequest } from '../rest/errorHandler';
import { checkWireBody, requireJsonMediaType } from '../rest/requestGuards';
import { createRestRouter } from '../rest/router';
import type { RestServiceInfo, RouteDefinition } from '../rest/types';
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
  app.use(
    createRestRouter({
      routes: deps.routes,
      service: deps.service,
      documents: deps.documents,
      contextFor: (req) =>
        contexts.forRequest(
          req.headers.authorization,
          String(req.res?.locals.correlationId ?? newCorrelationId()),
        ),
      paidContext: contexts.paid,
      consumerAuthRequired: deps.consumerAuthRequired,
      edge: { issueSession: deps.issueSession },
      paywall: deps.paywall,
      idempotency: deps.idempotency,
      now: deps.now,
      execute: (query, operationName, variables, contextValue) =>
        graphql.run({ query, operationName, variables }, contextValue, 'by REST routes'),
    }),
  );
  app.use(unmatchedRequest(deps.routes));
  app.use(
    restErrorHandler({
      log: deps.log,
      bodyLimitBytes: deps.bodyLimitBytes,
      docsBaseUrl: deps.service.docsBaseUrl,
    }),
  );
}
