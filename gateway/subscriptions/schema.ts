// The gateway's own subscription schema (@apollo/gateway carries no subscriptions). Each field
// reads one topic of the fan-out and checks, per event, that the connection's actor may see it.
import {
  GraphQLEnumType,
  GraphQLID,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
} from 'graphql';
import type { Actor } from '../../platform/actor';
import type { Fanout } from './fanout';

export interface CatalogChangeEvent {
  kind: 'PROVIDER' | 'CAPABILITY' | 'RESYNC';
  id: string | null;
  maturity: 'EXPERIMENTAL' | 'SANDBOX' | 'VERIFIED' | null;
  changedAt: string;
}

export type SubscriptionEvent = { topic: 'catalogChanged'; event: CatalogChangeEvent };

export interface SubscriptionContext {
  actor: Actor;
}

export const TOPICS = { catalogChanged: 'catalogChanged' } as const;

/** Turns a NOTIFY on a channel into a topic event; unknown or malformed payloads are dropped. */
export function eventFromNotification(channel: string, payload: unknown): SubscriptionEvent | null {
  if (channel !== 'catalog_changed' || typeof payload !== 'object' || payload === null) return null;
  const record = payload as Record<string, unknown>;
  const kind = typeof record.kind === 'string' ? record.kind.toUpperCase() : '';
  const maturity = typeof record.maturity === 'string' ? record.maturity.toUpperCase() : '';
  if ((kind !== 'PROVIDER' && kind !== 'CAPABILITY') || typeof record.id !== 'string') return null;
  if (maturity !== 'EXPERIMENTAL' && maturity !== 'SANDBOX' && maturity !== 'VERIFIED') return null;
  return {
    topic: 'catalogChanged',
    event: {
      kind,
      id: record.id,
      maturity,
      changedAt: typeof record.changedAt === 'string' ? record.changedAt : new Date().toISOString(),
    },
  };
}

export function resyncEvents(now: Date): SubscriptionEvent[] {
  return [{ topic: 'catalogChanged', event: { kind: 'RESYNC', id: null, maturity: null, changedAt: now.toISOString() } }];
}

export function buildSubscriptionSchema(fanout: Fanout<unknown>): GraphQLSchema {
  const catalogChange = new GraphQLObjectType({
    name: 'CatalogChange',
    description: 'A maturity change in the catalog. RESYNC means events may have been missed: re-read the catalog.',
    fields: {
      kind: {
        type: new GraphQLNonNull(
          new GraphQLEnumType({ name: 'CatalogChangeKind', values: { PROVIDER: {}, CAPABILITY: {}, RESYNC: {} } }),
        ),
      },
      id: { type: GraphQLID },
      maturity: {
        type: new GraphQLEnumType({ name: 'Maturity', values: { EXPERIMENTAL: {}, SANDBOX: {}, VERIFIED: {} } }),
      },
      changedAt: { type: new GraphQLNonNull(GraphQLString) },
    },
  });
  return new GraphQLSchema({
    query: new GraphQLObjectType({
      name: 'Query',
      fields: {
        subscriptionTopics: {
          type: new GraphQLNonNull(GraphQLString),
          description: 'Subscriptions are served here over graphql-ws; queries go to POST /graphql.',
          resolve: () => Object.keys(TOPICS).join(','),
        },
      },
    }),
    subscription: new GraphQLObjectType({
      name: 'Subscription',
      fields: {
        catalogChanged: {
          type: new GraphQLNonNull(catalogChange),
          description: 'Every provider or capability maturity change, public to every connection.',
          subscribe: () => fanout.subscribe(TOPICS.catalogChanged),
          resolve: (event: CatalogChangeEvent) => event,
        },
      },
    }),
  });
}
