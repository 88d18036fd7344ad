// escalationUpdated: an owner's live view of their escalations over graphql-ws. NOTIFY
// `escalation_updated` (sent by the policy subgraph's trigger on commit) says which escalation
// changed and whose it is; the feed drops other owners' events at once and reads the current state
// through the gateway's own GraphQL with the subscriber's actor, so the policy subgraph checks
// ownership again. The first messages are the current state: the named escalation, or the open ones.
// A read that fails ends the subscription with an error message (never silence): the subscriber
// must not believe it holds the current state when it does not.
import {
  GraphQLEnumType,
  GraphQLError,
  GraphQLID,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLString,
} from 'graphql';
import { isEscalationPollRef, isPolicyId } from '../../core/canon/id-shapes';
import type { Actor } from '../../platform/actor';
import type { Fanout } from './fanout';
import { stepIterator } from './stepIterator';

export const ESCALATION_TOPIC = 'escalationUpdated';
export const ESCALATION_CHANNEL = 'escalation_updated';

/** What the NOTIFY payload carries; RESYNC after a lost LISTEN connection. */
export type EscalationNotification =
  | {
      readonly kind: 'CHANGED';
      readonly pollRef: string;
      readonly policyId: string;
      readonly owner: string;
      readonly state: string;
    }
  | { readonly kind: 'RESYNC' };

/** Runs a GraphQL operation on the gateway as `actor`; the subscription reads current state with it. */
export type GatewayExecutor = (
  actor: Actor,
  query: string,
  variables: Record<string, unknown>,
) => Promise<{ data?: Record<string, unknown> | null; errors?: readonly { message: string }[] }>;

export interface EscalationUpdate {
  pollRef: string;
  state: string;
  outcome: string | null;
  reason: string | null;
  intentHash: string;
  policyId: string;
  decision: string;
  amountAtomic: string;
  recipient: string;
  createdAt: string;
  expiresAt: string;
  resolvedAt: string | null;
  resolvedVia: string | null;
}

/** The EscalationUpdate type of the subscription schema: Query.escalation's fields, as the owner sees them. */
export function escalationUpdateType(): GraphQLObjectType<EscalationUpdate> {
  return new GraphQLObjectType<EscalationUpdate>({
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
}

const FIELDS =
  'pollRef state outcome reason intentHash policyId decision amountAtomic recipient createdAt expiresAt resolvedAt resolvedVia';
const ONE = `query EscalationUpdateOne($pollRef: ID!) { escalation(pollRef: $pollRef) { ${FIELDS} } }`;
const OPEN = `query EscalationUpdateOpen($policyId: ID, $first: Int) { escalations(policyId: $policyId, state: PENDING, first: $first) { nodes { ${FIELDS} } } }`;
/** The snapshot of open escalations a subscription starts with. */
export const MAX_SNAPSHOT_ESCALATIONS = 100;

export function escalationNotification(payload: unknown): EscalationNotification | null {
  if (typeof payload !== 'object' || payload === null) return null;
  const record = payload as Record<string, unknown>;
  const { pollRef, policyId, owner, state } = record;
  if (!isEscalationPollRef(pollRef) || !isPolicyId(policyId)) return null;
  if (typeof owner !== 'string' || typeof state !== 'string') return null;
  return { kind: 'CHANGED', pollRef, policyId, owner, state };
}

export interface EscalationFeedArgs {
  readonly pollRef: string | null;
  readonly policyId: string | null;
}

function refuse(
  code: 'AUTH_REQUIRED' | 'FORBIDDEN' | 'REQUEST_INVALID',
  message: string,
): GraphQLError {
  return new GraphQLError(message, { extensions: { code } });
}

/** The data of a state read, or its first error (already formatted for clients) thrown as is. */
export async function dataOf(read: ReturnType<GatewayExecutor>): Promise<Record<string, unknown>> {
  const result = await read;
  const [first] = result.errors ?? [];
  if (first !== undefined || !result.data) {
    const extensions = (first as { extensions?: Record<string, unknown> } | undefined)
      ?.extensions ?? { code: 'INTERNAL_ERROR' };
    throw new GraphQLError(first?.message ?? 'The current state could not be read.', {
      extensions,
    });
  }
  return result.data;
}

/** Who may subscribe: an owner session (their policies) or an admin (all); `what` names the feed. */
export function checkSubscriber(
  actor: Actor,
  args: EscalationFeedArgs,
  what = 'follow escalations',
): void {
  if (actor.kind === 'anonymous')
    throw refuse(
      'AUTH_REQUIRED',
      `Sign in as the owner (connectionParams.authorization) to ${what}.`,
    );
  if (actor.kind !== 'owner' && actor.kind !== 'admin')
    throw refuse('FORBIDDEN', `Only owner sessions and admins ${what}.`);
  if (args.pollRef !== null && !isEscalationPollRef(args.pollRef))
    throw refuse('REQUEST_INVALID', 'pollRef is esc_ + 24 hex.');
  if (args.policyId !== null && !isPolicyId(args.policyId))
    throw refuse('REQUEST_INVALID', 'policyId is a uint256 decimal string.');
}

/** The subscriber's reads of current state, through the gateway with their own actor. */
function escalationReads(execute: GatewayExecutor, actor: Actor, args: EscalationFeedArgs) {
  const readOne = async (pollRef: string): Promise<EscalationUpdate | null> => {
    const data = await dataOf(execute(actor, ONE, { pollRef }));
    return (data.escalation ?? null) as EscalationUpdate | null;
  };
  /** The named escalation, or the open ones oldest first: what a subscription starts with. */
  const readSnapshot = async (): Promise<EscalationUpdate[]> => {
    if (args.pollRef !== null) {
      const one = await readOne(args.pollRef);
      if (one === null)
        throw new GraphQLError('No escalation with this pollRef.', {
          extensions: { code: 'ESCALATION_NOT_FOUND' },
        });
      return [one];
    }
    const data = await dataOf(
      execute(actor, OPEN, { policyId: args.policyId, first: MAX_SNAPSHOT_ESCALATIONS }),
    );
    const nodes = (data.escalations as { nodes?: EscalationUpdate[] } | null)?.nodes ?? [];
    return [...nodes].reverse();
  };
  return { readOne, readSnapshot };
}

/** Whether a change concerns this subscriber: their own (an admin: any), and what they named. */
function visibleTo(
  actor: Actor,
  args: EscalationFeedArgs,
): (event: Extract<EscalationNotification, { kind: 'CHANGED' }>) => boolean {
  return (event) =>
    (actor.kind === 'admin' || (actor.kind === 'owner' && event.owner === actor.address)) &&
    (args.pollRef === null || event.pollRef === args.pollRef) &&
    (args.policyId === null || event.policyId === args.policyId);
}

/**
 * The subscription's iterator: the snapshot first, then every visible change. Written by hand
 * rather than as an async generator so that return() ends a pending wait at once (the Fanout's
 * iterator does), freeing the listener as soon as the client leaves.
 */
export function escalationFeed(
  fanout: Fanout<unknown>,
  execute: GatewayExecutor,
  actor: Actor,
  args: EscalationFeedArgs,
): AsyncIterableIterator<EscalationUpdate> {
  checkSubscriber(actor, args);
  // Subscribed before the snapshot is read, so no change between the two is lost.
  const events = fanout.subscribe(
    ESCALATION_TOPIC,
  ) as AsyncIterableIterator<EscalationNotification>;
  const { readOne, readSnapshot } = escalationReads(execute, actor, args);
  const visible = visibleTo(actor, args);
  const queue: EscalationUpdate[] = [];
  let snapshotDue = true;

  const step = async (): Promise<IteratorResult<EscalationUpdate>> => {
    for (;;) {
      if (snapshotDue) {
        snapshotDue = false;
        queue.push(...(await readSnapshot()));
      }
      const queued = queue.shift();
      if (queued !== undefined) return { done: false, value: queued };
      const event = await events.next();
      if (event.done) return { done: true, value: undefined };
      if (event.value.kind === 'RESYNC') {
        snapshotDue = true;
        continue;
      }
      if (!visible(event.value)) continue;
      const current = await readOne(event.value.pollRef);
      if (current !== null) return { done: false, value: current };
    }
  };
  return stepIterator(step, events);
}
