// The gateway's own subscription schema (@apollo/gateway carries no subscriptions). Each field
// reads one topic of the fan-out and checks, per event, that the connection's actor may see it.
// State reads go through one bounded ReadQueue, so subscribers cannot take the database pool.
import {
  GraphQLEnumType,
  type GraphQLFieldConfig,
  GraphQLID,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
} from 'graphql';
import type { Actor } from '../../platform/actor';
import {
  ESCALATION_CHANNEL,
  ESCALATION_TOPIC,
  type EscalationNotification,
  type EscalationUpdate,
  escalationFeed,
  escalationNotification,
  type GatewayExecutor,
} from './escalations';
import type { Fanout } from './fanout';
import { ReadQueue } from './readQueue';

export interface CatalogChangeEvent {
  kind: 'PROVIDER' | 'CAPABILITY' | 'RESYNC';
  id: string | null;
  maturity: 'EXPERIMENTAL' | 'SANDBOX' | 'VERIFIED' | null;
  changedAt: string;
}

export type SubscriptionEvent =
  | { topic: 'catalogChanged'; event: CatalogChangeEvent }
  | { topic: 'escalationUpdated'; event: EscalationNotification };

export interface SubscriptionContext {
  actor: Actor;
}

export const TOPICS = {
  catalogChanged: 'catalogChanged',
  escalationUpdated: ESCALATION_TOPIC,
} as const;
/** The NOTIFY channels the gateway LISTENs on. */
export const NOTIFY_CHANNELS = ['catalog_changed', ESCALATION_CHANNEL] as const;

/** Turns a NOTIFY on a channel into a topic event; unknown or malformed payloads are dropped. */
export function eventFromNotification(channel: string, payload: unknown): SubscriptionEvent | null {
  if (channel === ESCALATION_CHANNEL) {
    const event = escalationNotification(payload);
    return event === null ? null : { topic: 'escalationUpdated', event };
  }
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

/** `execute` reads current state for escalationUpdated; without it the field refuses every subscriber. */
export function buildSubscriptionSchema(
  fanout: Fanout<unknown>,
  execute: GatewayExecutor | undefined,
  limits: SubscriptionReadLimits,
): GraphQLSchema {
  const reads = new ReadQueue(limits.readConcurrency, limits.readQueueLength);
  const queuedExecute: GatewayExecutor | undefined =
    execute && ((actor, query, variables) => reads.run(() => execute(actor, query, variables)));
  const escalationUpdate = new GraphQLObjectType({
    name: 'EscalationUpdate',
    description: 'The current state of one escalation, as its owner sees it (Query.escalation).',
    fields: {
      pollRef: { type: new GraphQLNonNull(GraphQLID) },
      state: {
        type: new GraphQLNonNull(
          new GraphQLEnumType({
            name: 'EscalationState',
            values: { PENDING: {}, APPROVED: {}, DENIED: {}, EXPIRED: {} },
          }),
        ),
      },
      outcome: {
        type: GraphQLString,
        description: 'APPROVED or DENIED once resolved (EXPIRED reports DENIED).',
      },
      reason: { type: GraphQLString },
      intentHash: { type: new GraphQLNonNull(GraphQLString) },
      policyId: { type: new GraphQLNonNull(GraphQLID) },
      decision: { type: new GraphQLNonNull(GraphQLString) },
      amountAtomic: { type: new GraphQLNonNull(GraphQLString) },
      recipient: { type: new GraphQLNonNull(GraphQLString) },
      createdAt: { type: new GraphQLNonNull(GraphQLString) },
      expiresAt: { type: new GraphQLNonNull(GraphQLString) },
      resolvedAt: { type: GraphQLString },
      resolvedVia: {
        type: GraphQLString,
        description: 'The deciding channel (owners only see their own).',
      },
    },
  });
  const catalogChange = new GraphQLObjectType({
    name: 'CatalogChange',
    description:
      'A maturity change in the catalog. RESYNC means events may have been missed: re-read the catalog.',
    fields: {
      kind: {
        type: new GraphQLNonNull(
          new GraphQLEnumType({
            name: 'CatalogChangeKind',
            values: { PROVIDER: {}, CAPABILITY: {}, RESYNC: {} },
          }),
        ),
      },
      id: { type: GraphQLID },
      maturity: {
        type: new GraphQLEnumType({
          name: 'Maturity',
          values: { EXPERIMENTAL: {}, SANDBOX: {}, VERIFIED: {} },
        }),
      },
      changedAt: { type: new GraphQLNonNull(GraphQLString) },
    },
  });
  const escalationUpdatedField: GraphQLFieldConfig<
    EscalationUpdate,
    SubscriptionContext,
    { pollRef?: string | null; policyId?: string | null }
  > = {
    type: new GraphQLNonNull(escalationUpdate),
    description:
      'The signed-in owner’s escalations (an admin’s: all). First the current state (the named escalation, or every open one), ' +
      'then each change as it commits.',
    args: { pollRef: { type: GraphQLID }, policyId: { type: GraphQLID } },
    subscribe: (_root, args, context) => {
      if (queuedExecute === undefined)
        throw new Error('escalation subscriptions are not wired on this gateway');
      return escalationFeed(fanout, queuedExecute, context.actor, {
        pollRef: args.pollRef ?? null,
        policyId: args.policyId ?? null,
      });
    },
    resolve: (update) => update,
  };
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
    // Each field's source is its own topic's event, so the root's source type is per field.
    subscription: new GraphQLObjectType<CatalogChangeEvent & EscalationUpdate, SubscriptionContext>({
      name: 'Subscription',
      fields: {
        catalogChanged: {
          type: new GraphQLNonNull(catalogChange),
          description: 'Every provider or capability maturity change, public to every connection.',
          subscribe: () => fanout.subscribe(TOPICS.catalogChanged),
          resolve: (event: CatalogChangeEvent) => event,
        },
        escalationUpdated: escalationUpdatedField,
      },
    }),
  });
}
