// The gateway's own subscription schema (@apollo/gateway carries no subscriptions). Each field
// reads one topic of the fan-out and checks, per event, that the connection's actor may see it.
// State reads go through one bounded ReadQueue, so subscribers cannot take the database pool.
import {
  type GraphQLFieldConfig,
  GraphQLID,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
} from 'graphql';
import type { Actor } from '../../platform/actor';
import {
  CATALOG_CHANNEL,
  CATALOG_TOPIC,
  type CatalogChangeEvent,
  catalogChangeType,
  catalogNotification,
} from './catalog';
import {
  ESCALATION_CHANNEL,
  ESCALATION_TOPIC,
  type EscalationNotification,
  type EscalationUpdate,
  escalationFeed,
  escalationNotification,
  escalationUpdateType,
  type GatewayExecutor,
} from './escalations';
import type { Fanout } from './fanout';
import { ReadQueue } from './readQueue';

export type SubscriptionEvent =
  | { topic: 'catalogChanged'; event: CatalogChangeEvent }
  | { topic: 'escalationUpdated'; event: EscalationNotification };

export interface SubscriptionContext {
  actor: Actor;
}

/**
 * What a Subscription field's resolver is given: the value its own subscribe iterator yielded
 * (graphql-js passes each event as the field's source). Every field resolves to its source as is.
 */
type SubscriptionPayload = CatalogChangeEvent | EscalationUpdate;

export const TOPICS = {
  catalogChanged: CATALOG_TOPIC,
  escalationUpdated: ESCALATION_TOPIC,
} as const;
/** The NOTIFY channels the gateway LISTENs on. */
export const NOTIFY_CHANNELS = [CATALOG_CHANNEL, ESCALATION_CHANNEL] as const;

/** Turns a NOTIFY on a channel into a topic event; unknown or malformed payloads are dropped. */
export function eventFromNotification(channel: string, payload: unknown): SubscriptionEvent | null {
  if (channel === ESCALATION_CHANNEL) {
    const event = escalationNotification(payload);
    return event === null ? null : { topic: 'escalationUpdated', event };
  }
  if (channel !== CATALOG_CHANNEL) return null;
  const event = catalogNotification(payload);
  return event === null ? null : { topic: 'catalogChanged', event };
}

export function resyncEvents(now: Date): SubscriptionEvent[] {
  return [
    {
      topic: 'catalogChanged',
      event: { kind: 'RESYNC', id: null, maturity: null, changedAt: now.toISOString() },
    },
    { topic: 'escalationUpdated', event: { kind: 'RESYNC' } },
  ];
}

/** How many state reads run at once and how many may wait (SUBSCRIPTION_READ_CONCURRENCY, SUBSCRIPTION_READ_QUEUE). */
export interface SubscriptionReadLimits {
  readonly readConcurrency: number;
  readonly readQueueLength: number;
}

type SubscriptionField<TArgs = Record<string, never>> = GraphQLFieldConfig<
  SubscriptionPayload,
  SubscriptionContext,
  TArgs
>;

function catalogChangedField(fanout: Fanout<unknown>): SubscriptionField {
  return {
    type: new GraphQLNonNull(catalogChangeType()),
    description: 'Every provider or capability maturity change, public to every connection.',
    subscribe: () => fanout.subscribe(TOPICS.catalogChanged),
    resolve: (event) => event,
  };
}

function escalationUpdatedField(
  fanout: Fanout<unknown>,
  execute: GatewayExecutor | undefined,
): SubscriptionField<{ pollRef?: string | null; policyId?: string | null }> {
  return {
    type: new GraphQLNonNull(escalationUpdateType()),
    description:
      'The signed-in owner’s escalations (an admin’s: all). First the current state (the named escalation, or every open one), ' +
      'then each change as it commits.',
    args: { pollRef: { type: GraphQLID }, policyId: { type: GraphQLID } },
    subscribe: (_root, args, context) => {
      if (execute === undefined)
        throw new Error('escalation subscriptions are not wired on this gateway');
      return escalationFeed(fanout, execute, context.actor, {
        pollRef: args.pollRef ?? null,
        policyId: args.policyId ?? null,
      });
    },
    resolve: (update) => update,
  };
}

/** `execute` reads current state for escalationUpdated; without it the field refuses every subscriber. */
export function buildSubscriptionSchema(
  fanout: Fanout<unknown>,
  execute: GatewayExecutor | undefined,
  limits: SubscriptionReadLimits,
): GraphQLSchema {
  const reads = new ReadQueue(limits.readConcurrency, limits.readQueueLength);
  const queuedExecute: GatewayExecutor | undefined =
    execute && ((actor, query, variables) => reads.run(() => execute(actor, query, variables)));
  return new GraphQLSchema({
    query: new GraphQLObjectType({
      name: 'Query',
      fields: {
        subscriptionTopics: {
          type: new GraphQLNonNull(GraphQLString),
          description:
            'Subscriptions are served here over graphql-ws; queries go to POST /graphql.',
          resolve: () => Object.keys(TOPICS).join(','),
        },
      },
    }),
    subscription: new GraphQLObjectType<SubscriptionPayload, SubscriptionContext>({
      name: 'Subscription',
      fields: {
        catalogChanged: catalogChangedField(fanout),
        escalationUpdated: escalationUpdatedField(fanout, queuedExecute),
      },
    }),
  });
}
