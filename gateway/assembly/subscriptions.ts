// Subscriptions as the gateway assembles them: one LISTEN connection feeding the in-process
// fan-out (RESYNC events after a lost connection), and graphql-ws on /graphql over the gateway's
// own subscription schema. Without a LISTEN database the schema is served but nothing is fed.
import type { Server } from 'node:http';
import type { SubscriptionLimits } from '../../platform/config';
import type { Logger } from '../../platform/log';
import type { Authenticator } from '../auth/credentials';
import { sessionExpiresAt } from '../auth/sessions';
import type { GatewayExecutor } from '../subscriptions/escalations';
import type { Fanout } from '../subscriptions/fanout';
import { PgNotifyBridge } from '../subscriptions/pgBridge';
import {
  buildSubscriptionSchema,
  eventsFromNotification,
  NOTIFY_CHANNELS,
  publishResync,
} from '../subscriptions/schema';
import { attachSubscriptionServer } from '../subscriptions/server';

/** LISTEN → fan-out; null when no direct connection string is configured. */
export async function startNotifyBridge(
  listenDatabaseUrl: string | null,
  fanout: Fanout<unknown>,
  now: () => Date,
  log: Logger,
): Promise<PgNotifyBridge | null> {
  if (!listenDatabaseUrl) return null;
  const bridge = new PgNotifyBridge({
    connectionString: listenDatabaseUrl,
    channels: NOTIFY_CHANNELS,
    onNotification: (channel, payload) => {
      for (const event of eventsFromNotification(channel, payload))
        fanout.publish(event.topic, event.event);
    },
    onResync: () => publishResync(fanout, now()),
    log,
  });
  await bridge.start();
  return bridge;
}

/** graphql-ws on /graphql: fan-out → each socket, only what its actor may see. */
export function serveSubscriptions(deps: {
  readonly httpServer: Server;
  readonly fanout: Fanout<unknown>;
  readonly execute: GatewayExecutor;
  readonly authenticator: Authenticator;
  readonly limits: SubscriptionLimits;
  readonly now: () => Date;
  readonly log: Logger;
}): ReturnType<typeof attachSubscriptionServer> {
  return attachSubscriptionServer({
    httpServer: deps.httpServer,
    path: '/graphql',
    schema: buildSubscriptionSchema(deps.fanout, deps.execute, deps.limits),
    authenticator: deps.authenticator,
    sessionExpiresAt,
    limits: deps.limits,
    now: deps.now,
    log: deps.log,
  });
}
