// escalationUpdated: an owner's live view of their escalations over graphql-ws. NOTIFY
// `escalation_updated` (sent by the policy subgraph's trigger on commit) says which escalation
// changed, whose it is and the state it committed; EscalationRouter (escalationRouting.ts) publishes
// that state (or, when a notification carries none, reads it once) on its owner's topic only, which
// is the one topic an owner's feed listens on. The
// first messages are the current state, read with the subscriber's own actor through the gateway's
// GraphQL: the named escalation, or the open ones. A read that fails ends the subscription with an
// error message (never silence): the subscriber must not believe it holds the current state when
// it does not.
import {
  GraphQLEnumType,
  GraphQLError,
  GraphQLID,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLString,
} from 'graphql';
import { isEscalationPollRef, isPolicyId } from '../../core/canon/id-shapes';
import { isEscalationState, outcomeOf, reasonOf } from '../../core/escalations/outcome';
import type { Actor } from '../../platform/actor';
import type { Fanout } from './fanout';
import { stepIterator } from './stepIterator';

export const ESCALATION_TOPIC = 'escalationUpdated';
export const ESCALATION_CHANNEL = 'escalation_updated';
/** Keyed topics: each owner's sockets hear `escalationUpdated:<owner>`, admins' `escalationUpdated:admin`. */
export const ESCALATION_ADMIN_TOPIC = `${ESCALATION_TOPIC}:admin`;
export const escalationOwnerTopic = (owner: string): string => `${ESCALATION_TOPIC}:${owner}`;

/** What the NOTIFY payload carries; RESYNC after a lost LISTEN connection. */
export type EscalationNotification =
  | {
      readonly kind: 'CHANGED';
      readonly pollRef: string;
      readonly policyId: string;
      readonly owner: string;
      readonly state: string;
      /** The state the change committed, as its owner sees it (migration 0014); absent: read it. */
      readonly update?: EscalationUpdate;
    }
  | { readonly kind: 'RESYNC' };

/** Runs a GraphQL operation on the gateway as `actor`; the subscription reads current state with it. */
export type GatewayExecutor = (
  actor: Actor,
  query: string,
  variables: Record<string, unknown>,
) => Promise<{ data?: Record<string, unknown> | null; errors?: readonly { message: string }[] }>;

/** What an escalationUpdated feed hears on its topic (published by EscalationRouter). */
export type EscalationEvent =
  | { readonly kind: 'STATE'; readonly update: EscalationUpdate }
  /** The read of these changes failed: their subscribers get the error, never silence. */
  | { readonly kind: 'FAILED'; readonly pollRefs: readonly string[]; readonly error: GraphQLError }
  | { readonly kind: 'RESYNC' };

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

export const ESCALATION_UPDATE_FIELDS =
  'pollRef state outcome reason intentHash policyId decision amountAtomic recipient createdAt expiresAt resolvedAt resolvedVia';
const ONE = `query EscalationUpdateOne($pollRef: ID!) { escalation(pollRef: $pollRef) { ${ESCALATION_UPDATE_FIELDS} } }`;
const OPEN = `query EscalationUpdateOpen($policyId: ID, $first: Int) { escalations(policyId: $policyId, state: PENDING, first: $first) { nodes { ${ESCALATION_UPDATE_FIELDS} } } }`;
/** The snapshot of open escalations a subscription starts with. */
export const MAX_SNAPSHOT_ESCALATIONS = 100;

export function escalationNotification(payload: unknown): EscalationNotification | null {
  if (typeof payload !== 'object' || payload === null) return null;
  const record = payload as Record<string, unknown>;
  const { pollRef, policyId, owner, state } = record;
  if (!isEscalationPollRef(pollRef) || !isPolicyId(policyId)) return null;
  if (typeof owner !== 'string' || typeof state !== 'string') return null;
  const update = committedUpdate(record.update, pollRef, policyId);
  return update === null
    ? { kind: 'CHANGED', pollRef, policyId, owner, state }
    : { kind: 'CHANGED', pollRef, policyId, owner, state, update };
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const isInstant = (value: unknown): value is string =>
  typeof value === 'string' && ISO_INSTANT.test(value);
const isText = (value: unknown): value is string => typeof value === 'string' && value.length > 0;

/**
 * The state a NOTIFY carries (the trigger's `update`), as Query.escalation would show it, or null
 * when it carries none or anything in it is off: the change is then read instead, never guessed.
 */
function committedUpdate(
  value: unknown,
  pollRef: string,
  policyId: string,
): EscalationUpdate | null {
  if (typeof value !== 'object' || value === null) return null;
  const update = value as Record<string, unknown>;
  const { state, intentHash, decision, amountAtomic, recipient, createdAt, expiresAt } = update;
  const { resolvedAt, resolvedVia } = update;
  if (update.pollRef !== pollRef || update.policyId !== policyId || !isEscalationState(state))
    return null;
  if (!isText(intentHash) || !isText(decision) || !isText(amountAtomic) || !isText(recipient))
    return null;
  if (!isInstant(createdAt) || !isInstant(expiresAt)) return null;
  if (resolvedAt !== null && !isInstant(resolvedAt)) return null;
  if (resolvedVia !== null && !isText(resolvedVia)) return null;
  return {
    pollRef,
    state,
    outcome: outcomeOf(state),
    reason: reasonOf(state),
    intentHash,
    policyId,
    decision,
    amountAtomic,
    recipient,
    createdAt,
    expiresAt,
    resolvedAt,
    resolvedVia,
  };
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

/** The subscriber's first messages: the named escalation, or the open ones oldest first. */
function snapshotReader(execute: GatewayExecutor, actor: Actor, args: EscalationFeedArgs) {
  return async (): Promise<EscalationUpdate[]> => {
    if (args.pollRef !== null) {
      const data = await dataOf(execute(actor, ONE, { pollRef: args.pollRef }));
      const one = (data.escalation ?? null) as EscalationUpdate | null;
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
}

/** The topic a subscriber listens on: its own owner's (an admin's: every owner's). */
function topicOf(actor: Actor): string {
  if (actor.kind === 'owner') return escalationOwnerTopic(actor.address);
  if (actor.kind === 'admin') return ESCALATION_ADMIN_TOPIC;
  throw refuse('FORBIDDEN', 'Only owner sessions and admins follow escalations.');
}

/** Whether a change on the subscriber's topic is one it asked for (the escalation or policy it named). */
function named(args: EscalationFeedArgs): (pollRef: string, policyId: string | null) => boolean {
  return (pollRef, policyId) =>
    (args.pollRef === null || pollRef === args.pollRef) &&
    (args.policyId === null || policyId === null || policyId === args.policyId);
}

/**
 * The subscription's iterator: the snapshot first, then every change on the subscriber's topic
 * that it named. Written by hand rather than as an async generator so that return() ends a
 * pending wait at once (the Fanout's iterator does), freeing the listener as soon as the client leaves.
 */
export function escalationFeed(
  fanout: Fanout<unknown>,
  execute: GatewayExecutor,
  actor: Actor,
  args: EscalationFeedArgs,
): AsyncIterableIterator<EscalationUpdate> {
  checkSubscriber(actor, args);
  // Subscribed before the snapshot is read, so no change between the two is lost.
  const events = fanout.subscribe(topicOf(actor)) as AsyncIterableIterator<EscalationEvent>;
  const readSnapshot = snapshotReader(execute, actor, args);
  const wanted = named(args);
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
      const heard = event.value;
      if (heard.kind === 'RESYNC') snapshotDue = true;
      else if (heard.kind === 'FAILED') {
        if (heard.pollRefs.some((pollRef) => wanted(pollRef, null))) throw heard.error;
      } else if (wanted(heard.update.pollRef, heard.update.policyId))
        return { done: false, value: heard.update };
    }
  };
  return stepIterator(step, events);
}
