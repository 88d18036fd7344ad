// anchorUpdated and anchorsUpdated: a receipt's anchor state live over graphql-ws. NOTIFY
// `receipt_anchor` (sent by the intent subgraph's triggers on commit, migration intent 0018) says
// which receipt changed, its policy and that policy's owner; each notification is published on two
// keyed topics, the receipt's and the policy's, so a change costs only the subscribers of that
// receipt or policy. The anchor object itself is never taken from the payload: it is read afresh
// through the gateway's own GraphQL (`receiptAnchor`, the read of GET /receipt_status), once per
// notification however many subscribers it has (the read is public, so its answer is the same for
// all). anchorUpdated is public and starts with the current state; anchorsUpdated is the owner's
// (or an admin's): refused for anyone else, and another owner's events are dropped per event; it
// starts with a snapshot of the policy's receipts not settled yet (intent policyPendingAnchors).
import { GraphQLError, GraphQLID, GraphQLNonNull, type GraphQLFieldConfig } from 'graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import { isIdOfKind, isIdOfKindAnyHexCase, isPolicyId } from '../../core/canon/id-shapes';
import { ANONYMOUS, type Actor } from '../../platform/actor';
import { checkSubscriber, dataOf, type GatewayExecutor } from './escalations';
import type { Fanout } from './fanout';
import { stepIterator } from './stepIterator';

export const ANCHOR_CHANNEL = 'receipt_anchor';
/** Topic prefixes: `anchorUpdated:<receiptId>` and `anchorsUpdated:<policyId>`. */
export const ANCHOR_RECEIPT_TOPIC = 'anchorUpdated:';
export const ANCHOR_POLICY_TOPIC = 'anchorsUpdated:';
export const anchorReceiptTopic = (receiptId: string): string => ANCHOR_RECEIPT_TOPIC + receiptId;
export const anchorPolicyTopic = (policyId: string): string => ANCHOR_POLICY_TOPIC + policyId;

const STATES = new Set(['PENDING', 'ANCHORED', 'ANCHOR_FAILED']);
/** States after which a receipt's anchor never changes again (a settled batch is never re-batched). */
const FINAL_STATES = new Set(['ANCHORED', 'ANCHOR_FAILED']);
const OWNER_ADDRESS = /^0x[0-9a-f]{40}$/;

/** What the NOTIFY payload carries; RESYNC after a lost LISTEN connection. */
export type AnchorNotification =
  | {
      readonly kind: 'CHANGED';
      readonly receiptId: string;
      readonly policyId: string | null;
      readonly owner: string | null;
      readonly state: string;
    }
  | { readonly kind: 'RESYNC' };
type AnchorChange = Extract<AnchorNotification, { kind: 'CHANGED' }>;

export type AnchorObject = Record<string, unknown>;

/** A receipt_anchor payload as a change; anything malformed is dropped (null). */
export function anchorNotification(payload: unknown): AnchorChange | null {
  if (typeof payload !== 'object' || payload === null) return null;
  const { receiptId, policyId, owner, state } = payload as Record<string, unknown>;
  if (!isIdOfKind('receipt', receiptId)) return null;
  if (typeof state !== 'string' || !STATES.has(state)) return null;
  const policy = isPolicyId(policyId) ? policyId : null;
  const ownerAddress = typeof owner === 'string' && OWNER_ADDRESS.test(owner) ? owner : null;
  return { kind: 'CHANGED', receiptId, policyId: policy, owner: ownerAddress, state };
}

/** The topics one change is published on: its receipt's, and its policy's when it has one. */
export function anchorTopics(change: AnchorChange): string[] {
  const topics = [anchorReceiptTopic(change.receiptId)];
  if (change.policyId !== null) topics.push(anchorPolicyTopic(change.policyId));
  return topics;
}

/** Tells every anchor subscriber that notifications may have been missed. */
export function publishAnchorResync(fanout: Fanout<unknown>): void {
  const resync: AnchorNotification = { kind: 'RESYNC' };
  fanout.publishUnder(ANCHOR_RECEIPT_TOPIC, resync);
  fanout.publishUnder(ANCHOR_POLICY_TOPIC, resync);
}

const READ = `query AnchorUpdated($receiptId: String!) { receiptAnchor(receiptId: $receiptId) }`;
const POLICY = `query AnchorsUpdatedPolicy($policyId: ID!) { policy(id: $policyId) { id } }`;
const PENDING = `query AnchorsUpdatedPending($policyId: ID!) { policyPendingAnchors(policyId: $policyId) }`;

/**
 * The anchor reads of all subscriptions: the current state when a subscription starts (its own
 * read), and one shared read per notification (the same notification object reaches every
 * subscriber of it, and each of them reads after it committed).
 */
export class AnchorReads {
  private readonly byNotification = new WeakMap<AnchorChange, Promise<AnchorObject>>();

  constructor(private readonly execute: GatewayExecutor) {}

  async current(receiptId: string): Promise<AnchorObject> {
    const data = await dataOf(this.execute(ANONYMOUS, READ, { receiptId }));
    return data.receiptAnchor as AnchorObject;
  }

  after(change: AnchorChange): Promise<AnchorObject> {
    let read = this.byNotification.get(change);
    if (read === undefined) {
      read = this.current(change.receiptId);
      this.byNotification.set(change, read);
    }
    return read;
  }

  /**
   * anchorsUpdated's first message: `{snapshot: {policyId, asOf, pendingTotal, pending}}`, the
   * policy's receipts not settled yet, read as the subscriber (the owner's or an admin's read).
   */
  async policySnapshot(actor: Actor, policyId: string): Promise<AnchorObject> {
    const data = await dataOf(this.execute(actor, PENDING, { policyId }));
    return { snapshot: data.policyPendingAnchors as AnchorObject };
  }

  /** Whether `actor` may read the policy (its owner, or an admin): Query.policy answers it. */
  async policyReadable(actor: Actor, policyId: string): Promise<boolean> {
    const data = await dataOf(this.execute(actor, POLICY, { policyId }));
    return data.policy !== null && data.policy !== undefined;
  }
}

interface FeedPlan {
  /** Read and sent first, and again after a RESYNC (notifications may have been missed). */
  readonly current: () => Promise<AnchorObject>;
  readonly visible: (change: AnchorChange) => boolean;
  /** End the subscription once a final state was sent. */
  readonly endWhenFinal: boolean;
}

/**
 * The subscription's iterator: the current state first (when planned), then each visible change
 * read afresh. Written by hand, as escalationFeed is, so return() frees the listener at once.
 */
function anchorFeed(
  events: AsyncIterableIterator<AnchorNotification>,
  reads: AnchorReads,
  plan: FeedPlan,
): AsyncIterableIterator<AnchorObject> {
  let currentDue = true;
  let ended = false;
  const sent = (anchor: AnchorObject): IteratorResult<AnchorObject> => {
    if (plan.endWhenFinal && FINAL_STATES.has(String(anchor.state))) ended = true;
    return { done: false, value: anchor };
  };
  const step = async (): Promise<IteratorResult<AnchorObject>> => {
    for (;;) {
      if (ended) {
        await events.return?.();
        return { done: true, value: undefined };
      }
      if (currentDue) {
        currentDue = false;
        return sent(await plan.current());
      }
      const event = await events.next();
      if (event.done) return { done: true, value: undefined };
      if (event.value.kind === 'RESYNC') {
        currentDue = true;
        continue;
      }
      if (plan.visible(event.value)) return sent(await reads.after(event.value));
    }
  };
  return stepIterator(step, events);
}

function refuse(code: string, message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code } });
}

type AnchorField<TArgs> = GraphQLFieldConfig<unknown, { actor: Actor }, TArgs>;

function notWired(): never {
  throw new Error('anchor subscriptions are not wired on this gateway');
}

/** anchorUpdated(receiptId): public; the current anchor object, then each change, until final. */
export function anchorUpdatedField(
  fanout: Fanout<unknown>,
  reads: AnchorReads | undefined,
): AnchorField<{ receiptId: string }> {
  return {
    type: new GraphQLNonNull(GraphQLJSONObject),
    description:
      'One receipt’s anchor object (the five states of docs/receipts.md), public like GET /receipt_status: ' +
      'first the current state, then each change as it commits; complete once ANCHORED or ANCHOR_FAILED.',
    args: { receiptId: { type: new GraphQLNonNull(GraphQLID) } },
    subscribe: (_root, args) => {
      if (reads === undefined) notWired();
      if (!isIdOfKindAnyHexCase('receipt', args.receiptId))
        throw refuse('RECEIPT_ID_INVALID', 'receiptId is 0x + 64 hex.');
      const receiptId = args.receiptId.toLowerCase();
      // Subscribed before the current state is read, so no change between the two is lost.
      const events = fanout.subscribe(
        anchorReceiptTopic(receiptId),
      ) as AsyncIterableIterator<AnchorNotification>;
      return anchorFeed(events, reads, {
        current: () => reads.current(receiptId),
        visible: (change) => change.receiptId === receiptId,
        endWhenFinal: true,
      });
    },
    resolve: (anchor) => anchor,
  };
}

/** anchorsUpdated(policyId): the owner's (an admin's); each change of the policy's receipts. */
export function anchorsUpdatedField(
  fanout: Fanout<unknown>,
  reads: AnchorReads | undefined,
): AnchorField<{ policyId: string }> {
  return {
    type: new GraphQLNonNull(GraphQLJSONObject),
    description:
      'First the current state, {snapshot: {policyId, asOf, pendingTotal, pending: [anchor objects]}} (the policy’s ' +
      'receipts not settled yet, oldest first, at most 100; again after a reconnect of the service’s listener), then ' +
      'the anchor object of each receipt of the policy (decision and consumer receipts) as its state changes: ' +
      'queued (PENDING), ANCHORED or ANCHOR_FAILED. The policy’s owner or an admin only.',
    args: { policyId: { type: new GraphQLNonNull(GraphQLID) } },
    subscribe: async (_root, args, context) => {
      if (reads === undefined) notWired();
      const { actor } = context;
      checkSubscriber(
        actor,
        { pollRef: null, policyId: args.policyId },
        'follow a policy’s anchors',
      );
      const { policyId } = args;
      const events = fanout.subscribe(
        anchorPolicyTopic(policyId),
      ) as AsyncIterableIterator<AnchorNotification>;
      try {
        if (!(await reads.policyReadable(actor, policyId)))
          throw refuse('POLICY_NOT_FOUND', 'No policy with this id.');
      } catch (error) {
        await events.return?.();
        throw error;
      }
      return anchorFeed(events, reads, {
        current: () => reads.policySnapshot(actor, policyId),
        visible: (change) =>
          change.policyId === policyId &&
          (actor.kind === 'admin' || (actor.kind === 'owner' && change.owner === actor.address)),
        endWhenFinal: false,
      });
    },
    resolve: (anchor) => anchor,
  };
}
