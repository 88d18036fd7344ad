// escalationUpdated's events, routed in memory by owner. Each owner's sockets listen on the owner's
// own keyed topic (`escalationUpdated:<owner>`, admins on `escalationUpdated:admin`), chosen from the
// socket's session when it subscribes: that is where the authorisation is decided, once per socket
// (and again when its session ends: the socket is closed then). A notification reaches only the
// topics that have a socket on this replica. It carries the state it announces (the trigger's
// `update`, taken from the row in the committing transaction, migration 0014), which is published
// as is: no read, and every state in commit order. A notification without it (an older database
// function, a payload too long for NOTIFY, anything malformed) is read once for all the topic's
// sockets: through the gateway's own GraphQL as that owner (so the policy subgraph confirms the
// escalation is theirs; a NOTIFY naming another owner reads null and reaches nobody), in batches of
// the changes that queued up meanwhile. One topic's reads run one after another, and while a topic
// has reads to do its carried states join them, so its subscribers receive the states in commit
// order; topics read side by side in the subscription reads' shared slots (ReadQueue).
import { GraphQLError } from 'graphql';
import type { Actor } from '../../platform/actor';
import {
  dataOf,
  ESCALATION_ADMIN_TOPIC,
  ESCALATION_UPDATE_FIELDS,
  type EscalationEvent,
  type EscalationNotification,
  type EscalationUpdate,
  escalationOwnerTopic,
  type GatewayExecutor,
} from './escalations';
import type { Fanout } from './fanout';

/** The escalation changes one read takes at most (aliases of Query.escalation in one operation). */
export const MAX_READ_BATCH = 10;
/** Changes waiting to be read, over all topics; past it a topic is told RESYNC instead. */
export const MAX_PENDING_CHANGES = 20_000;

type Change = Extract<EscalationNotification, { kind: 'CHANGED' }>;

interface TopicReads {
  readonly actor: Actor;
  /** Changed escalations not read yet, in notification order; a repeated one keeps its place. */
  readonly pending: Set<string>;
}

const ADMIN: Actor = Object.freeze({ kind: 'admin' });

/** One operation reading `pollRefs` as `actor`: `e0: escalation(pollRef: $p0) { … }`, … */
function batchQuery(count: number): string {
  const variables = Array.from({ length: count }, (_, index) => `$p${index}: ID!`).join(', ');
  const fields = Array.from(
    { length: count },
    (_, index) => `e${index}: escalation(pollRef: $p${index}) { ${ESCALATION_UPDATE_FIELDS} }`,
  ).join(' ');
  return `query EscalationUpdates(${variables}) { ${fields} }`;
}

export class EscalationRouter {
  private readonly topics = new Map<string, TopicReads>();
  private pendingChanges = 0;
  private readonly queries = Array.from({ length: MAX_READ_BATCH + 1 }, (_, count) =>
    batchQuery(count),
  );

  /** `read` runs a read as an actor when a slot is free (ReadQueue.runInTurn around the gateway). */
  constructor(
    private readonly fanout: Fanout<unknown>,
    private readonly read: GatewayExecutor,
  ) {}

  /** A committed change: queued for a read on its owner's topic and the admins', where anyone listens. */
  route(change: Change): void {
    this.enqueue(
      escalationOwnerTopic(change.owner),
      { kind: 'owner', address: change.owner },
      change,
    );
    this.enqueue(ESCALATION_ADMIN_TOPIC, ADMIN, change);
  }

  /** Changes waiting for their read (for tests and metrics). */
  get pending(): number {
    return this.pendingChanges;
  }

  private enqueue(topic: string, actor: Actor, change: Change): void {
    if (this.fanout.listenerCount(topic) === 0) return;
    let reads = this.topics.get(topic);
    if (change.update !== undefined && reads === undefined) {
      // Nothing of this topic's is still to be read: the carried state is the next in commit order.
      this.fanout.publish(topic, {
        kind: 'STATE',
        update: change.update,
      } satisfies EscalationEvent);
      return;
    }
    if (reads?.pending.has(change.pollRef)) return; // its read, still to come, sees this change too
    if (this.pendingChanges >= MAX_PENDING_CHANGES) {
      // Too far behind to keep every change in memory: the subscribers re-read their snapshots.
      this.fanout.publish(topic, { kind: 'RESYNC' } satisfies EscalationEvent);
      return;
    }
    this.pendingChanges += 1;
    if (reads !== undefined) {
      reads.pending.add(change.pollRef);
      return;
    }
    reads = { actor, pending: new Set([change.pollRef]) };
    this.topics.set(topic, reads);
    void this.drain(topic, reads);
  }

  /** Reads the topic's changes, a batch at a time, until none is left; then forgets the topic. */
  private async drain(topic: string, reads: TopicReads): Promise<void> {
    while (reads.pending.size > 0) {
      const batch = [...reads.pending].slice(0, MAX_READ_BATCH);
      for (const pollRef of batch) reads.pending.delete(pollRef);
      this.pendingChanges -= batch.length;
      // Nobody listens any more: the rest is not worth a read.
      if (this.fanout.listenerCount(topic) === 0) continue;
      for (const event of await this.readBatch(reads.actor, batch))
        this.fanout.publish(topic, event);
    }
    this.topics.delete(topic);
  }

  private async readBatch(actor: Actor, pollRefs: string[]): Promise<EscalationEvent[]> {
    const variables = Object.fromEntries(pollRefs.map((pollRef, index) => [`p${index}`, pollRef]));
    try {
      const data = await dataOf(this.read(actor, this.queries[pollRefs.length], variables));
      return pollRefs.flatMap((_, index) => {
        const update = data[`e${index}`] as EscalationUpdate | null | undefined;
        return update ? [{ kind: 'STATE' as const, update }] : [];
      });
    } catch (error) {
      const failure =
        error instanceof GraphQLError
          ? error
          : new GraphQLError('The current state could not be read.', {
              extensions: { code: 'INTERNAL_ERROR' },
            });
      return [{ kind: 'FAILED', pollRefs, error: failure }];
    }
  }
}
