// The gateway's check of every resolved operation before any subgraph runs, REST's persisted
// documents included: an operation must exist under the operationName, subscriptions go to the
// websocket, the size/depth/cost limits hold, and priced fields run only as their route's paid call.
import type { ApolloServerPlugin } from '@apollo/server';
import { AppError } from '../../core/errors';
import type { GatewayContext } from './context';
import { gatewayGraphQLError } from './errors';
import { limitRefusal, measureOperation, type OperationLimits } from './limits';
import { outboundSelections, type OutboundFields } from './outboundFields';
import { assertPaidFieldsAllowed, type PaidFields } from './paidFields';

export interface OperationGuardOptions {
  readonly limits: OperationLimits;
  readonly paidFields: PaidFields;
  /** Root fields that call a third party (outboundFields.ts). */
  readonly outboundFields: OutboundFields;
}

function operationNotFound(operationName: string | undefined): Error {
  const message =
    operationName === undefined
      ? 'The document holds several operations; name the one to run in operationName.'
      : `The document holds no operation named "${operationName}".`;
  return gatewayGraphQLError('GRAPHQL_OPERATION_NOT_FOUND', message, {
    operationName: operationName ?? null,
  });
}

export function operationGuardPlugin(
  options: OperationGuardOptions,
): ApolloServerPlugin<GatewayContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ schema, document, operation, request, contextValue }) {
          if (!operation) throw operationNotFound(request.operationName ?? undefined);
          if (operation.operation === 'subscription') {
            throw gatewayGraphQLError(
              'GRAPHQL_SUBSCRIPTION_NEEDS_WEBSOCKET',
              'Subscriptions are served over a websocket on /graphql (graphql-transport-ws), not over HTTP.',
            );
          }
          const measure = measureOperation(schema, document, operation, request.variables ?? {});
          const refusal = limitRefusal(measure, operation.operation, options.limits);
          if (refusal) throw refusal;
          assertPaidFieldsAllowed(
            options.paidFields,
            operation.operation,
            measure.rootFieldNames,
            contextValue.paidRoute,
          );
          await chargeOutbound(document, operation, options.outboundFields, contextValue);
        },
      };
    },
  };
}

/** A /graphql operation that asks a third party selects that field once and pays an outbound token. */
async function chargeOutbound(
  document: Parameters<typeof outboundSelections>[0],
  operation: Parameters<typeof outboundSelections>[1],
  outboundFields: OutboundFields,
  context: GatewayContext,
): Promise<void> {
  if (context.takeOutboundToken === undefined) return;
  const selections = outboundSelections(document, operation, outboundFields);
  if (selections === 0) return;
  if (selections > 1)
    throw gatewayGraphQLError(
      'REQUEST_INVALID',
      'An operation may select a field that asks a third party (checkDomains) only once; send one request per call.',
      { fields: [...outboundFields].sort() },
    );
  try {
    await context.takeOutboundToken();
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    throw gatewayGraphQLError(error.code, error.message, error.details);
  }
}
