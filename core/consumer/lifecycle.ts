// The consumer-intent lifecycle of DECISIONS.md ("Consumer intents") as one typed table: which
// state may follow which. Pure data and checks; the compare-and-set, the outbox row and the
// database copy of the table (rendered by lifecycleSqlRows) belong to the intent subgraph.
import { AppError } from '../errors';

/** Every state, in the order DECISIONS lists them (the terminal five last). */
export const CONSUMER_INTENT_STATES = [
  'CREATED',
  'DISCOVERING',
  'QUOTED',
  'POLICY_CHECKING',
  'AWAITING_APPROVAL',
  'APPROVED',
  'AWAITING_FUNDING',
  'FUNDED',
  'EXECUTION_QUEUED',
  'PROVIDER_PAYMENT_PENDING',
  'PROVIDER_PAID',
  'PROVIDER_ACKNOWLEDGED',
  'DELIVERY_PENDING',
  'DELIVERY_VERIFIED',
  'FAILED_BEFORE_PAYMENT',
  'FAILED_AFTER_PAYMENT',
  'REFUND_PENDING',
  'MANUAL_REVIEW',
  'BLOCKED',
  'COMPLETED',
  'REFUNDED',
  'EXPIRED',
  'CANCELLED',
] as const;

export type ConsumerIntentState = (typeof CONSUMER_INTENT_STATES)[number];

type TransitionTable = Readonly<Record<ConsumerIntentState, readonly ConsumerIntentState[]>>;

/**
 * DECISIONS' table, row for row, with issue #27's exits: MANUAL_REVIEW → DELIVERY_PENDING (a payment
 * resolved PAID still needs its delivery checked), and no edge from a funded state to CANCELLED or
 * REFUNDED that skips REFUND_PENDING (where the refund is booked owed and then sent). FUNDED → AWAITING_FUNDING is legal only when a reorg removed the
 * funding transfer; the table cannot say why a move happens, so the caller that detects the reorg
 * is the only one that may take it.
 */
export const TRANSITIONS: TransitionTable = freezeTable({
  CREATED: ['DISCOVERING', 'QUOTED', 'FAILED_BEFORE_PAYMENT', 'CANCELLED', 'EXPIRED'],
  DISCOVERING: ['QUOTED', 'FAILED_BEFORE_PAYMENT', 'CANCELLED', 'EXPIRED'],
  QUOTED: ['POLICY_CHECKING', 'FAILED_BEFORE_PAYMENT', 'CANCELLED', 'EXPIRED'],
  POLICY_CHECKING: [
    'BLOCKED',
    'AWAITING_APPROVAL',
    'APPROVED',
    'FAILED_BEFORE_PAYMENT',
    'CANCELLED',
    'EXPIRED',
  ],
  AWAITING_APPROVAL: ['APPROVED', 'BLOCKED', 'FAILED_BEFORE_PAYMENT', 'CANCELLED', 'EXPIRED'],
  APPROVED: ['AWAITING_FUNDING', 'FAILED_BEFORE_PAYMENT', 'CANCELLED', 'EXPIRED'],
  AWAITING_FUNDING: ['FUNDED', 'FAILED_BEFORE_PAYMENT', 'CANCELLED', 'EXPIRED'],
  FUNDED: ['EXECUTION_QUEUED', 'AWAITING_FUNDING', 'FAILED_BEFORE_PAYMENT', 'REFUND_PENDING'],
  EXECUTION_QUEUED: ['PROVIDER_PAYMENT_PENDING', 'FAILED_BEFORE_PAYMENT', 'MANUAL_REVIEW'],
  PROVIDER_PAYMENT_PENDING: ['PROVIDER_PAID', 'FAILED_AFTER_PAYMENT', 'MANUAL_REVIEW'],
  PROVIDER_PAID: ['PROVIDER_ACKNOWLEDGED', 'FAILED_AFTER_PAYMENT', 'MANUAL_REVIEW'],
  PROVIDER_ACKNOWLEDGED: [
    'DELIVERY_PENDING',
    'DELIVERY_VERIFIED',
    'FAILED_AFTER_PAYMENT',
    'MANUAL_REVIEW',
  ],
  DELIVERY_PENDING: ['DELIVERY_VERIFIED', 'FAILED_AFTER_PAYMENT', 'MANUAL_REVIEW'],
  DELIVERY_VERIFIED: ['COMPLETED', 'MANUAL_REVIEW'],
  FAILED_BEFORE_PAYMENT: ['REFUND_PENDING', 'MANUAL_REVIEW'],
  FAILED_AFTER_PAYMENT: ['REFUND_PENDING', 'MANUAL_REVIEW'],
  REFUND_PENDING: ['REFUNDED', 'MANUAL_REVIEW'],
  MANUAL_REVIEW: ['COMPLETED', 'DELIVERY_PENDING', 'REFUND_PENDING', 'FAILED_AFTER_PAYMENT'],
  BLOCKED: [],
  COMPLETED: [],
  REFUNDED: [],
  EXPIRED: [],
  CANCELLED: [],
});

/**
 * The states before funding: nothing of the buyer's has moved yet, so the buyer may still cancel.
 * Read off the table (the states with an edge to CANCELLED), so the two cannot disagree.
 */
export const STATES_BEFORE_FUNDING: readonly ConsumerIntentState[] = Object.freeze(
  CONSUMER_INTENT_STATES.filter((state) => TRANSITIONS[state].includes('CANCELLED')),
);

function freezeTable(table: Record<ConsumerIntentState, ConsumerIntentState[]>): TransitionTable {
  for (const targets of Object.values(table)) Object.freeze(targets);
  return Object.freeze(table);
}

/** States come back from the database and from requests as plain strings; check before trusting. */
export function isConsumerIntentState(value: unknown): value is ConsumerIntentState {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(TRANSITIONS, value);
}

/** True only for a move the table lists; unknown names and staying put are never moves. */
export function canTransition(from: string, to: string): boolean {
  return isConsumerIntentState(from) && isConsumerIntentState(to) && TRANSITIONS[from].includes(to);
}

/** Throws 409 ILLEGAL_STATE_TRANSITION, naming both states and what `from` allows, unless listed. */
export function assertTransition(from: string, to: string): void {
  if (canTransition(from, to)) return;
  const allowed = isConsumerIntentState(from) ? TRANSITIONS[from] : [];
  throw new AppError(
    'ILLEGAL_STATE_TRANSITION',
    `A consumer intent cannot move from ${from} to ${to}.`,
    { from, to, allowed },
  );
}

/** A terminal state has no way out: BLOCKED, COMPLETED, REFUNDED, EXPIRED, CANCELLED. */
export function isTerminal(state: ConsumerIntentState): boolean {
  return TRANSITIONS[state].length === 0;
}

/** Every legal move as a `[from, to]` pair, in table order. */
export function lifecycleEdges(): Array<readonly [ConsumerIntentState, ConsumerIntentState]> {
  return CONSUMER_INTENT_STATES.flatMap((from) =>
    TRANSITIONS[from].map((to) => [from, to] as const),
  );
}

/**
 * The table as SQL VALUES rows, `('CREATED','DISCOVERING'), ('CREATED','QUOTED'), …`, so a
 * migration can seed its transition table from this text and a test can compare the two. State
 * names are upper snake case constants, so they need no escaping; the check keeps it that way.
 */
export function lifecycleSqlRows(): string {
  return lifecycleEdges()
    .map(([from, to]) => {
      if (!/^[A-Z_]+$/.test(from) || !/^[A-Z_]+$/.test(to))
        throw new Error(`state name unsafe for SQL: ${from} ${to}`);
      return `('${from}','${to}')`;
    })
    .join(', ');
}
