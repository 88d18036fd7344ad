// graphql-ws on the gateway's HTTP server, path /graphql. The credential is checked once at
// connection_init (refused → close 4403) and the actor is kept for per-event checks; only
// subscription operations are accepted here (queries and mutations go to POST /graphql).
import type { Server } from 'node:http';
import { GraphQLError, parse, validate, type ExecutionArgs, type GraphQLSchema } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import type { Actor } from '../../platform/actor';
import type { Logger } from '../../platform/log';
import type { Authenticator } from '../auth/credentials';
import type { SubscriptionContext } from './schema';

export const WS_MAX_PAYLOAD_BYTES = 64 * 1024;

export function attachSubscriptionServer(options: {
  httpServer: Server;
  path: string;
  schema: GraphQLSchema;
  authenticator: Authenticator;
  log: Logger;
}): { close(): Promise<void>; connectionCount(): number } {
  const wss = new WebSocketServer({ server: options.httpServer, path: options.path, maxPayload: WS_MAX_PAYLOAD_BYTES });
  const actors = new WeakMap<object, Actor>();
  const disposable = useServer<Record<string, unknown> | undefined>(
    {
      schema: options.schema,
      onConnect(ctx) {
        const authorization = ctx.connectionParams?.authorization;
        try {
          actors.set(ctx, options.authenticator.authenticate(typeof authorization === 'string' ? authorization : undefined));
          return true;
        } catch {
          options.log.info('websocket connection refused: bad credential');
          return false;
        }
      },
      onSubscribe(ctx, _id, payload): ExecutionArgs | readonly GraphQLError[] {
        let document;
        try {
          document = parse(payload.query);
        } catch (error) {
          return [error instanceof GraphQLError ? error : new GraphQLError('unparseable document')];
        }
        const errors = validate(options.schema, document);
        if (errors.length > 0) return errors;
        const operations = document.definitions.filter((d) => d.kind === 'OperationDefinition');
        if (operations.some((operation) => operation.kind === 'OperationDefinition' && operation.operation !== 'subscription')) {
          return [new GraphQLError('Only subscriptions are served over the websocket; send queries and mutations to POST /graphql.')];
        }
        const contextValue: SubscriptionContext = { actor: actors.get(ctx) ?? { kind: 'anonymous' } };
        return {
          schema: options.schema,
          document,
          operationName: payload.operationName ?? undefined,
          variableValues: payload.variables ?? undefined,
          contextValue,
        };
      },
    },
    wss,
  );
  return {
    async close() {
      await disposable.dispose();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
    connectionCount: () => wss.clients.size,
  };
}
