// Subscriptions as the gateway assembles them: one LISTEN connection feeding the subscription
// feeds (escalations routed by owner, RESYNC events after a lost connection), and graphql-ws on
// /graphql over the gateway's own subscription schema. Without a LISTEN database the schema is
// served but nothing is fed.
import type { Server } from 'node:http';
import type { SubscriptionLimits } from '../../platform/config';
import type { Logger } from '../../platform/log';
import type { Authenticator } from '../auth/credentials';
import { sessionExpiresAt } from '../auth/sessions';
import { PgNotifyBridge } from '../subscriptions/pgBridge';
import {
  NOTIFY_CHANNELS,
  type SubscriptionFeeds,
  subscriptionSchema,
} from '../subscriptions/schema';
import { attachSubscriptionServer } from '../subscriptions/server';

/** LISTEN → the feeds; null when no direct connection string is configured. */
export async function startNotifyBridge(
  listenDatabaseUrl: string | null,
  feeds: SubscriptionFeeds,
  now: () => Date,
  log: Logger,
): Promise<PgNotifyBridge | null> {
  if (!listenDatabaseUrl) return null;
  const bridge = new PgNotifyBridge({
    connectionString: listenDatabaseUrl,
    channels: NOTIFY_CHANNELS,
    onNotification: (channel, payload) => feeds.notify(channel, payload),
    onResync: () => feeds.resync(now()),
    log,
  });
  await bridge.start();
  return bridge;
}

/** graphql-ws on /graphql: each socket hears only its actor's topics. */
export function serveSubscriptions(deps: {
  readonly httpServer: Server;
  readonly feeds: SubscriptionFeeds;
  readonly authenticator: Authenticator;
  readonly limits: SubscriptionLimits;
  readonly now: () => Date;
  readonly log: Logger;
}): ReturnType<typeof attachSubscriptionServer> {
  return attachSubscriptionServer({
    httpServer: deps.httpServer,
    path: '/graphql',
    schema: subscriptionSchema(deps.feeds),
    authenticator: deps.authenticator,
    sessionExpiresAt,
    limits: deps.limits,
    now: deps.now,
    log: deps.log,
  });
}
