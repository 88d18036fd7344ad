// The gateway's own subscription schema (@apollo/gateway carries no subscriptions) and the feeds
// behind it. A notification becomes events on keyed topics (an escalation's owner, an anchor's
// receipt and policy), so it costs only the subscribers of that key; each field picks its topic
// from the connection's actor and arguments when it subscribes. State reads go through one bounded
// ReadQueue, so subscribers cannot take the database pool.
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
  ANCHOR_CHANNEL,
  type AnchorNotification,
  type AnchorObject,
  AnchorReads,
  anchorNotification,
  anchorsUpdatedField,
  anchorTopics,
  anchorUpdatedField,
  publishAnchorResync,
} from './anchors';
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
  type EscalationEvent,
  type EscalationNotification,
  type EscalationUpdate,
  escalationFeed,
  escalationNotification,
  escalationUpdateType,
  type GatewayExecutor,
} from './escalations';
import { EscalationRouter } from './escalationRouting';
import type { Fanout } from './fanout';
import { ReadQueue } from './readQueue';
import { principalOf } from './socketSessions';

export type SubscriptionEvent =
  | { topic: 'catalogChanged'; event: CatalogChangeEvent }
  | { topic: 'escalationUpdated'; event: EscalationNotification }
  /** Keyed topics: `anchorUpdated:<receiptId>`, `anchorsUpdated:<policyId>`. */
  | { topic: string; event: AnchorNotification };

export interface SubscriptionContext {
  actor: Actor;
}

/**
 * What a Subscription field's resolver is given: the value its own subscribe iterator yielded
 * (graphql-js passes each event as the field's source). Every field resolves to its source as is.
 */
type SubscriptionPayload = CatalogChangeEvent | EscalationUpdate | AnchorObject;

export const TOPICS = {
  catalogChanged: CATALOG_TOPIC,
  escalationUpdated: ESCALATION_TOPIC,
} as const;
/** The subscription fields (the anchor ones on keyed topics, so not in TOPICS). */
const FIELDS = [...Object.keys(TOPICS), 'anchorUpdated', 'anchorsUpdated'];
/** The NOTIFY channels the gateway LISTENs on. */
export const NOTIFY_CHANNELS = [CATALOG_CHANNEL, ESCALATION_CHANNEL, ANCHOR_CHANNEL] as const;

/** Turns a NOTIFY on a channel into topic events; unknown or malformed payloads are dropped. */
export function eventsFromNotification(channel: string, payload: unknown): SubscriptionEvent[] {
  if (channel === ESCALATION_CHANNEL) {
    const event = escalationNotification(payload);
    return event === null ? [] : [{ topic: 'escalationUpdated', event }];
  }
  if (channel === ANCHOR_CHANNEL) {
    // One object on both topics: its subscribers share one read of it (AnchorReads.after).
    const event = anchorNotification(payload);
    return event === null ? [] : anchorTopics(event).map((topic) => ({ topic, event }));
  }
  if (channel !== CATALOG_CHANNEL) return [];
  const event = catalogNotification(payload);
  return event === null ? [] : [{ topic: 'catalogChanged', event }];
}

/** After a lost LISTEN connection: every topic hears RESYNC (the keyed topics included). */
export function publishResync(fanout: Fanout<unknown>, now: Date): void {
  const catalog: CatalogChangeEvent = {
    kind: 'RESYNC',
    id: null,
    maturity: null,
    changedAt: now.toISOString(),
  };
  fanout.publish(CATALOG_TOPIC, catalog);
  fanout.publishUnder(`${ESCALATION_TOPIC}:`, { kind: 'RESYNC' } satisfies EscalationEvent);
  publishAnchorResync(fanout);
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

/**
 * What the LISTEN bridge feeds and the schema serves: the fan-out, the bounded state reads and the
 * escalation router (reads each change once, publishes it on its owner's topic). Without `execute`
 * nothing is read and the fields that need reads refuse every subscriber.
 */
export class SubscriptionFeeds {
  readonly reads: ReadQueue;
  readonly execute: GatewayExecutor | undefined;
  /** execute() shared by identical reads waiting together (the same actor, query and variables). */
  readonly executeShared: GatewayExecutor | undefined;
  readonly anchors: AnchorReads | undefined;
  readonly escalations: EscalationRouter | undefined;

  constructor(
    readonly fanout: Fanout<unknown>,
    execute: GatewayExecutor | undefined,
    limits: SubscriptionReadLimits,
  ) {
    const reads = new ReadQueue(limits.readConcurrency, limits.readQueueLength);
    this.reads = reads;
    this.execute =
      execute && ((actor, query, variables) => reads.run(() => execute(actor, query, variables)));
    this.executeShared =
      execute &&
      ((actor, query, variables) => {
        const key = readKey(actor, query, variables);
        const read = () => execute(actor, query, variables);
        return key === null ? reads.run(read) : reads.runShared(key, read);
      });
    this.anchors = this.execute && new AnchorReads(this.execute);
    this.escalations =
      execute &&
      new EscalationRouter(fanout, (actor, query, variables) =>
        reads.runInTurn(() => execute(actor, query, variables)),
      );
  }

  /** A NOTIFY from the bridge: escalations to the router, the rest straight to their topics. */
  notify(channel: string, payload: unknown): void {
    if (channel === ESCALATION_CHANNEL) {
      const change = escalationNotification(payload);
      if (change?.kind === 'CHANGED') this.escalations?.route(change);
      return;
    }
    for (const event of eventsFromNotification(channel, payload))
      this.fanout.publish(event.topic, event.event);
  }

  resync(now: Date): void {
    publishResync(this.fanout, now);
  }
}

/**
 * Who reads what: one signed-in principal's identical reads are one, whichever socket asks (the
 * principal of socketSessions: an owner, one consumer session's policy, the admins). A caller with
 * no principal never shares.
 */
function readKey(actor: Actor, query: string, variables: Record<string, unknown>): string | null {
  const principal = principalOf(actor);
  return principal === null ? null : `${principal}\n${query}\n${JSON.stringify(variables)}`;
}

/** The schema over new feeds (`execute` reads current state; without it, no reads are served). */
export function buildSubscriptionSchema(
  fanout: Fanout<unknown>,
  execute: GatewayExecutor | undefined,
  limits: SubscriptionReadLimits,
): GraphQLSchema {
  return subscriptionSchema(new SubscriptionFeeds(fanout, execute, limits));
}

export function subscriptionSchema(feeds: SubscriptionFeeds): GraphQLSchema {
  const { fanout } = feeds;
  return new GraphQLSchema({
    query: new GraphQLObjectType({
      name: 'Query',
      fields: {
        subscriptionTopics: {
          type: new GraphQLNonNull(GraphQLString),
          description:
            'Subscriptions are served here over graphql-ws; queries go to POST /graphql.',
          resolve: () => FIELDS.join(','),
        },
      },
    }),
    subscription: new GraphQLObjectType<SubscriptionPayload, SubscriptionContext>({
      name: 'Subscription',
      fields: {
        catalogChanged: catalogChangedField(fanout),
        escalationUpdated: escalationUpdatedField(fanout, feeds.executeShared),
        anchorUpdated: anchorUpdatedField(fanout, feeds.anchors) as SubscriptionField<{
          receiptId: string;
        }>,
        anchorsUpdated: anchorsUpdatedField(fanout, feeds.anchors) as SubscriptionField<{
          policyId: string;
        }>,
      },
    }),
  });
}
