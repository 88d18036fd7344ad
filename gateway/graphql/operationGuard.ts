// The gateway's check of every resolved operation before any subgraph runs, REST's persisted
// documents included: an operation must exist under the operationName, subscriptions go to the
// websocket, the size/depth/cost limits hold, and priced fields run only as their route's paid call.
import type { ApolloServerPlugin } from '@apollo/server';
import type { GatewayContext } from './context';
import { gatewayGraphQLError } from './errors';
import { limitRefusal, measureOperation, type OperationLimits } from './limits';
import { assertPaidFieldsAllowed, type PaidFields } from './paidFields';

export interface OperationGuardOptions {
  readonly limits: OperationLimits;
  readonly paidFields: PaidFields;
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
        },
      };
    },
  };
}
