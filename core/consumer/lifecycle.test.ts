// The consumer-intent lifecycle: the code table is DECISIONS' table (written out again here, by
// hand, from DECISIONS.md), illegal moves are 409 ILLEGAL_STATE_TRANSITION, terminal states are
// final, and every state is reachable from CREATED and can still reach an end.
import fc from 'fast-check';
import { AppError } from '../errors';
import {
  assertTransition,
  canTransition,
  CONSUMER_INTENT_STATES,
  type ConsumerIntentState,
  isConsumerIntentState,
  isTerminal,
  lifecycleEdges,
  lifecycleSqlRows,
  STATES_BEFORE_FUNDING,
  TRANSITIONS,
} from './lifecycle';

// DECISIONS.md, "Consumer intents", the lifecycle table, one line per row.
const DECISIONS_TABLE: Record<string, string> = {
  CREATED: 'DISCOVERING, QUOTED, FAILED_BEFORE_PAYMENT, CANCELLED, EXPIRED',
  DISCOVERING: 'QUOTED, FAILED_BEFORE_PAYMENT, CANCELLED, EXPIRED',
  QUOTED: 'POLICY_CHECKING, FAILED_BEFORE_PAYMENT, CANCELLED, EXPIRED',
  POLICY_CHECKING:
    'BLOCKED, AWAITING_APPROVAL, APPROVED, FAILED_BEFORE_PAYMENT, CANCELLED, EXPIRED',
  AWAITING_APPROVAL: 'APPROVED, BLOCKED, FAILED_BEFORE_PAYMENT, CANCELLED, EXPIRED',
  APPROVED: 'AWAITING_FUNDING, FAILED_BEFORE_PAYMENT, CANCELLED, EXPIRED',
  AWAITING_FUNDING: 'FUNDED, FAILED_BEFORE_PAYMENT, CANCELLED, EXPIRED',
  FUNDED: 'EXECUTION_QUEUED, AWAITING_FUNDING, FAILED_BEFORE_PAYMENT, REFUND_PENDING',
  EXECUTION_QUEUED: 'PROVIDER_PAYMENT_PENDING, FAILED_BEFORE_PAYMENT, MANUAL_REVIEW',
  PROVIDER_PAYMENT_PENDING: 'PROVIDER_PAID, FAILED_AFTER_PAYMENT, MANUAL_REVIEW',
  PROVIDER_PAID: 'PROVIDER_ACKNOWLEDGED, FAILED_AFTER_PAYMENT, MANUAL_REVIEW',
  PROVIDER_ACKNOWLEDGED: 'DELIVERY_PENDING, DELIVERY_VERIFIED, FAILED_AFTER_PAYMENT, MANUAL_REVIEW',
  DELIVERY_PENDING: 'DELIVERY_VERIFIED, FAILED_AFTER_PAYMENT, MANUAL_REVIEW',
  DELIVERY_VERIFIED: 'COMPLETED, MANUAL_REVIEW',
  FAILED_BEFORE_PAYMENT: 'REFUND_PENDING, MANUAL_REVIEW',
  FAILED_AFTER_PAYMENT: 'REFUND_PENDING, MANUAL_REVIEW',
  REFUND_PENDING: 'REFUNDED, MANUAL_REVIEW',
  MANUAL_REVIEW: 'COMPLETED, DELIVERY_PENDING, REFUND_PENDING, FAILED_AFTER_PAYMENT',
};
const DECISIONS_TERMINAL = ['BLOCKED', 'COMPLETED', 'REFUNDED', 'EXPIRED', 'CANCELLED'];

const state = fc.constantFrom(...CONSUMER_INTENT_STATES);

function reachableFrom(
  start: ConsumerIntentState,
  next: (s: ConsumerIntentState) => readonly ConsumerIntentState[],
): Set<ConsumerIntentState> {
  const seen = new Set<ConsumerIntentState>([start]);
  const queue = [start];
  while (queue.length > 0) {
    for (const to of next(queue.shift()!)) {
      if (!seen.has(to)) {
        seen.add(to);
        queue.push(to);
      }
    }
  }
  return seen;
}

describe('consumer intent lifecycle table', () => {
  it('is exactly the table in DECISIONS.md, row for row, terminal states with no way out', () => {
    const expected: Record<string, string[]> = Object.fromEntries(
      Object.entries(DECISIONS_TABLE).map(([from, to]) => [from, to.split(', ')]),
    );
    for (const terminal of DECISIONS_TERMINAL) expected[terminal] = [];
    expect(
      Object.fromEntries(Object.entries(TRANSITIONS).map(([from, to]) => [from, [...to]])),
    ).toEqual(expected);
    expect([...CONSUMER_INTENT_STATES].sort()).toEqual(Object.keys(expected).sort());
    expect(CONSUMER_INTENT_STATES.filter(isTerminal)).toEqual(DECISIONS_TERMINAL);
  });

  it('every path from FUNDED to CANCELLED or REFUNDED passes the refund leg (REFUND_PENDING)', () => {
    // FUNDED → AWAITING_FUNDING is taken only when a reorg removed the funding: no money is held
    // after it, so what follows it needs no refund.
    const withoutRefundLeg = reachableFrom('FUNDED', (from) =>
      from === 'REFUND_PENDING'
        ? []
        : TRANSITIONS[from].filter(
            (to) => to !== 'REFUND_PENDING' && !(from === 'FUNDED' && to === 'AWAITING_FUNDING'),
          ),
    );
    expect(withoutRefundLeg.has('CANCELLED')).toBe(false);
    expect(withoutRefundLeg.has('REFUNDED')).toBe(false);
    // … and both are still reachable through it, as is a delivery check after a human's review.
    expect(reachableFrom('FUNDED', (from) => TRANSITIONS[from]).has('REFUNDED')).toBe(true);
    expect(canTransition('MANUAL_REVIEW', 'DELIVERY_PENDING')).toBe(true);
  });

  it('names the seven states before funding (DECISIONS: the buyer may cancel until funded)', () => {
    expect(STATES_BEFORE_FUNDING).toEqual([
      'CREATED',
      'DISCOVERING',
      'QUOTED',
      'POLICY_CHECKING',
      'AWAITING_APPROVAL',
      'APPROVED',
      'AWAITING_FUNDING',
    ]);
  });

  it('cannot be changed at run time', () => {
    expect(Object.isFrozen(TRANSITIONS)).toBe(true);
    for (const targets of Object.values(TRANSITIONS)) expect(Object.isFrozen(targets)).toBe(true);
    expect(() => (TRANSITIONS.COMPLETED as ConsumerIntentState[]).push('CREATED')).toThrow(
      TypeError,
    );
  });

  it('allows a listed move and refuses others with 409 ILLEGAL_STATE_TRANSITION naming both states', () => {
    expect(canTransition('CREATED', 'QUOTED')).toBe(true);
    expect(() => assertTransition('FUNDED', 'AWAITING_FUNDING')).not.toThrow();
    expect(canTransition('EXECUTION_QUEUED', 'CANCELLED')).toBe(false);
    let thrown: unknown;
    try {
      assertTransition('PROVIDER_PAID', 'FUNDED');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AppError);
    const appError = thrown as AppError;
    expect([appError.code, appError.status, appError.retryable]).toEqual([
      'ILLEGAL_STATE_TRANSITION',
      409,
      false,
    ]);
    expect(appError.details).toEqual({
      from: 'PROVIDER_PAID',
      to: 'FUNDED',
      allowed: ['PROVIDER_ACKNOWLEDGED', 'FAILED_AFTER_PAYMENT', 'MANUAL_REVIEW'],
    });
  });

  it('refuses unknown state names on either side, including prototype keys', () => {
    for (const [from, to] of [
      ['CREATED', 'NOPE'],
      ['NOPE', 'CREATED'],
      ['created', 'quoted'],
      ['toString', 'CREATED'],
      ['CREATED', 'constructor'],
    ]) {
      expect(canTransition(from, to)).toBe(false);
      expect(() => assertTransition(from, to)).toThrow(AppError);
    }
    expect(isConsumerIntentState('__proto__')).toBe(false);
  });

  it('never lets a state move to itself', () => {
    for (const s of CONSUMER_INTENT_STATES) expect(canTransition(s, s)).toBe(false);
  });

  it('reaches every state from CREATED', () => {
    expect([...reachableFrom('CREATED', (s) => TRANSITIONS[s])].sort()).toEqual(
      [...CONSUMER_INTENT_STATES].sort(),
    );
  });

  it('lets every state reach a terminal state (no state where an intent is stuck for good)', () => {
    for (const s of CONSUMER_INTENT_STATES) {
      expect([...reachableFrom(s, (x) => TRANSITIONS[x])].some(isTerminal)).toBe(true);
    }
  });

  it('property: canTransition and assertTransition agree with the table for every pair', () => {
    fc.assert(
      fc.property(state, state, (from, to) => {
        const listed = TRANSITIONS[from].includes(to);
        expect(canTransition(from, to)).toBe(listed);
        if (listed) expect(() => assertTransition(from, to)).not.toThrow();
        else expect(() => assertTransition(from, to)).toThrow(AppError);
      }),
      { numRuns: 1000 },
    );
  });

  it('property: nothing leaves a terminal state', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...CONSUMER_INTENT_STATES.filter(isTerminal)),
        state,
        (from, to) => {
          expect(canTransition(from, to)).toBe(false);
          expect(() => assertTransition(from, to)).toThrow(AppError);
        },
      ),
    );
  });

  it('property: a random walk of legal moves from CREATED stays in the table and stops only at a terminal state', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { minLength: 1, maxLength: 60 }), (choices) => {
        let current: ConsumerIntentState = 'CREATED';
        for (const choice of choices) {
          const options: readonly ConsumerIntentState[] = TRANSITIONS[current];
          if (options.length === 0) {
            expect(isTerminal(current)).toBe(true);
            return;
          }
          const next: ConsumerIntentState = options[choice % options.length];
          assertTransition(current, next);
          current = next;
        }
        expect(isConsumerIntentState(current)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('renders the table as SQL VALUES rows, one per edge, in table order', () => {
    const rows = lifecycleSqlRows();
    expect(rows.startsWith("('CREATED','DISCOVERING'), ('CREATED','QUOTED'), ")).toBe(true);
    expect(rows.endsWith("('MANUAL_REVIEW','FAILED_AFTER_PAYMENT')")).toBe(true);
    const parsed = [...rows.matchAll(/\('([A-Z_]+)','([A-Z_]+)'\)/g)].map((m) => [m[1], m[2]]);
    expect(parsed).toEqual(lifecycleEdges().map(([from, to]) => [from, to]));
    expect(rows).toBe(parsed.map(([from, to]) => `('${from}','${to}')`).join(', '));
    const edgeCount = Object.values(DECISIONS_TABLE).reduce(
      (sum, to) => sum + to.split(', ').length,
      0,
    );
    expect(parsed).toHaveLength(edgeCount);
  });
});
