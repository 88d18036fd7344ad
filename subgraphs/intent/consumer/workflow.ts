// The purchase as one workflow you can read in one file (issue #30): a table of steps, each naming
// the job or route that runs it, the lifecycle moves it makes (core/consumer/lifecycle.ts), what it
// does to money and rows, and what undoes it when a later step fails: the compensation. In the
// manner of Medusa's core-flows payment workflows, with the step's code kept where it lives; this
// file is data and one pure check (checkPurchaseWorkflow, run by workflow.test.ts), so the table
// and the lifecycle cannot drift apart: every lifecycle edge has a step, no step moves an edge the
// lifecycle does not list. A move the lifecycle allows but no job takes yet is a step with
// `runBy: null` (reserved by DECISIONS.md), so the gap is written down, not hidden.
import {
  CONSUMER_INTENT_STATES,
  type ConsumerIntentState,
  STATES_BEFORE_FUNDING,
  TRANSITIONS,
} from '../../../core/consumer/lifecycle';

type State = ConsumerIntentState;
export type Move = readonly [from: State, to: State];

export interface PurchaseStep {
  /** The step's name, as docs/architecture.md and docs/consumer.md cite it. */
  readonly name: string;
  /** The job or route that runs it; null when the lifecycle allows the move and no job takes it. */
  readonly runBy: string | null;
  /** The module (under subgraphs/intent/consumer/) that holds the step's code; null with runBy. */
  readonly module: string | null;
  readonly moves: readonly Move[];
  /** What the step books or stores along with the move. */
  readonly effect: string;
  /** What undoes the step's effect when the purchase cannot go on. */
  readonly compensation: string;
}

const from = (states: readonly State[], to: State): Move[] => states.map((s) => [s, to] as const);

/** A move DECISIONS' lifecycle allows and no job takes yet. */
function reserved(name: string, moves: Move[], effect: string): PurchaseStep {
  return {
    name,
    runBy: null,
    module: null,
    moves,
    effect,
    compensation: 'as the state it leaves from',
  };
}

/** The reserved moves, grouped by why they exist. */
const RESERVED_STEPS: readonly PurchaseStep[] = [
  reserved(
    'discover',
    [
      ['CREATED', 'DISCOVERING'],
      ['DISCOVERING', 'QUOTED'],
    ],
    'provider discovery',
  ),
  reserved(
    'failBeforeFunding',
    from(
      [
        'CREATED',
        'DISCOVERING',
        'QUOTED',
        'AWAITING_APPROVAL',
        'APPROVED',
        'AWAITING_FUNDING',
        'FUNDED',
      ],
      'FAILED_BEFORE_PAYMENT',
    ),
    'a failure before any payment left',
  ),
  reserved('cancel', from(STATES_BEFORE_FUNDING, 'CANCELLED'), 'the buyer cancels before funding'),
  reserved(
    'expireBeforeDecision',
    from(['CREATED', 'DISCOVERING', 'QUOTED', 'POLICY_CHECKING'], 'EXPIRED'),
    'a quote that expires before the decision',
  ),
  reserved('reorgUnfund', [['FUNDED', 'AWAITING_FUNDING']], 'a reorg removed the funding transfer'),
  reserved(
    'failAfterPayment',
    from(
      [
        'PROVIDER_PAYMENT_PENDING',
        'PROVIDER_PAID',
        'PROVIDER_ACKNOWLEDGED',
        'DELIVERY_PENDING',
        'MANUAL_REVIEW',
      ],
      'FAILED_AFTER_PAYMENT',
    ),
    'a paid purchase that failed',
  ),
  reserved(
    'escalate',
    [
      ['PROVIDER_ACKNOWLEDGED', 'DELIVERY_VERIFIED'],
      ['PROVIDER_ACKNOWLEDGED', 'MANUAL_REVIEW'],
      ['DELIVERY_VERIFIED', 'MANUAL_REVIEW'],
      ['FAILED_BEFORE_PAYMENT', 'MANUAL_REVIEW'],
      ['REFUND_PENDING', 'MANUAL_REVIEW'],
    ],
    'a state a human must look at',
  ),
  reserved(
    'refundAfterPayment',
    [
      ['FAILED_AFTER_PAYMENT', 'REFUND_PENDING'],
      ['FAILED_AFTER_PAYMENT', 'MANUAL_REVIEW'],
    ],
    'the refund of a failed paid purchase',
  ),
];

/** The steps in the order a purchase meets them. */
export const PURCHASE_STEPS: readonly PurchaseStep[] = [
  {
    name: 'quote',
    runBy: 'POST /consumer/intents',
    module: 'create/create.ts',
    moves: [
      ['CREATED', 'QUOTED'],
      ['QUOTED', 'POLICY_CHECKING'],
    ],
    effect: 'stores the merchant quote, its expiry, the funding amount and the signed SpendIntent',
    compensation: 'none needed: nothing is reserved or paid yet',
  },
  {
    name: 'decide',
    runBy: 'POST /consumer/intents; the consumer worker for a crash-left POLICY_CHECKING',
    module: 'policyCheck.ts',
    moves: [
      ['POLICY_CHECKING', 'APPROVED'],
      ['POLICY_CHECKING', 'AWAITING_APPROVAL'],
      ['POLICY_CHECKING', 'BLOCKED'],
      ['POLICY_CHECKING', 'FAILED_BEFORE_PAYMENT'],
      ['APPROVED', 'AWAITING_FUNDING'],
    ],
    effect: "runs the policy's preflight: a reservation on APPROVED, an escalation poll otherwise",
    compensation: 'the reservation is released when the intent ends unfunded (refunds.ts sweep)',
  },
  {
    name: 'approve',
    runBy: "POST /consumer/intents/{id}/approve; the escalation's reply or timeout",
    module: 'approval/advance.ts',
    moves: [
      ['AWAITING_APPROVAL', 'APPROVED'],
      ['AWAITING_APPROVAL', 'BLOCKED'],
      ['AWAITING_APPROVAL', 'EXPIRED'],
    ],
    effect: "applies the owner's answer: the reservation and the decision on approval",
    compensation: 'the reservation is released when the intent ends unfunded (refunds.ts sweep)',
  },
  {
    name: 'expireUnfunded',
    runBy: 'the consumer expiry job',
    module: 'approval/jobs.ts',
    moves: from(['AWAITING_APPROVAL', 'APPROVED', 'AWAITING_FUNDING'], 'EXPIRED'),
    effect: 'ends an intent whose quote expired before funding',
    compensation: 'the reservation is released (refunds.ts sweep); no money moved',
  },
  {
    name: 'fund',
    runBy: 'POST /consumer/intents/{id}/fund (x402)',
    module: 'funding/booking.ts',
    moves: [['AWAITING_FUNDING', 'FUNDED']],
    effect: 'books FUNDING (consumes the reservation) and stores the funding leg',
    compensation: 'refundOwed: REFUND owed then sent (failures.ts oweRefund, refunds.ts)',
  },
  {
    name: 'queue',
    runBy: 'POST /consumer/intents/{id}/execute',
    module: 'execution/queue.ts',
    moves: [['FUNDED', 'EXECUTION_QUEUED']],
    effect: 'hands the intent to the execute job',
    compensation: 'none of its own: a later failure owes the refund',
  },
  {
    name: 'refundExpiredFunded',
    runBy: 'the consumer expiry job',
    module: 'execution/expiredFunded.ts',
    moves: [['FUNDED', 'REFUND_PENDING']],
    effect: 'books the REFUND owed for a funded intent whose quote expired unexecuted',
    compensation: 'is itself the compensation of fund',
  },
  {
    name: 'pay',
    runBy: 'the execute job (executeQueued)',
    module: 'execution/executor.ts',
    moves: [
      ['EXECUTION_QUEUED', 'PROVIDER_PAYMENT_PENDING'],
      ['EXECUTION_QUEUED', 'FAILED_BEFORE_PAYMENT'],
      ['EXECUTION_QUEUED', 'MANUAL_REVIEW'],
      ['PROVIDER_PAYMENT_PENDING', 'MANUAL_REVIEW'],
    ],
    effect: 'gates, mints a capability, signs the EIP-3009 authorization, pays the merchant',
    compensation:
      'before signing: FAILED_BEFORE_PAYMENT and the refund; after: PAYMENT_AMBIGUOUS, the cost parked in SUSPENSE',
  },
  {
    name: 'settle',
    runBy: 'the execute job (executeQueued)',
    module: 'execution/providerPaid.ts',
    moves: [
      ['PROVIDER_PAYMENT_PENDING', 'PROVIDER_PAID'],
      ['PROVIDER_PAID', 'PROVIDER_ACKNOWLEDGED'],
      ['PROVIDER_PAID', 'MANUAL_REVIEW'],
      ['PROVIDER_ACKNOWLEDGED', 'DELIVERY_PENDING'],
    ],
    effect: 'books SERVICE_PAYMENT from the confirmed transfer and recognises the revenue',
    compensation: 'a paid purchase is never unpaid: MANUAL_REVIEW decides a refund',
  },
  {
    name: 'verifyDelivery',
    runBy: 'the delivery job',
    module: 'delivery/job.ts',
    moves: [
      ['DELIVERY_PENDING', 'DELIVERY_VERIFIED'],
      ['DELIVERY_VERIFIED', 'COMPLETED'],
      ['DELIVERY_PENDING', 'MANUAL_REVIEW'],
    ],
    effect: "checks the merchant's delivery against the registry (serviceVerified)",
    compensation: 'DELIVERY_CONTRADICTED / DELIVERY_UNVERIFIED go to MANUAL_REVIEW, nothing posted',
  },
  {
    name: 'oweRefund',
    runBy: 'the step that failed (pay, resolve)',
    module: 'execution/failures.ts',
    moves: [['FAILED_BEFORE_PAYMENT', 'REFUND_PENDING']],
    effect: 'books the REFUND owed to the funding wallet',
    compensation: 'is itself the compensation of fund',
  },
  {
    name: 'sendRefund',
    runBy: 'the refund job',
    module: 'execution/refunds.ts',
    moves: [['REFUND_PENDING', 'REFUNDED']],
    effect: 'sends the refund on chain and books it sent',
    compensation: 'none: the refund is the last money move',
  },
  {
    name: 'resolve',
    runBy: 'resolveConsumerIntent (admin), checked against the reconciler',
    module: 'execution/resolve.ts',
    moves: [
      ['MANUAL_REVIEW', 'DELIVERY_PENDING'],
      ['MANUAL_REVIEW', 'COMPLETED'],
      ['MANUAL_REVIEW', 'REFUND_PENDING'],
    ],
    effect: 'PAID / NOT_PAID / ACCEPT_DELIVERY / REFUND: releases SUSPENSE and books what follows',
    compensation: 'NOT_PAID and REFUND owe the refund (oweRefund)',
  },
  ...RESERVED_STEPS,
];

const key = ([a, b]: Move): string => `${a} → ${b}`;

/**
 * Every way `steps` and the lifecycle `transitions` disagree, as sentences; empty when they agree.
 * Pure, so a test can run it on a mutated copy of the table.
 */
export function checkPurchaseWorkflow(
  steps: readonly PurchaseStep[],
  transitions: Readonly<Record<State, readonly State[]>> = TRANSITIONS,
): string[] {
  const problems: string[] = [];
  const taken = new Set<string>();
  for (const step of steps)
    for (const move of step.moves) {
      taken.add(key(move));
      if (!(transitions[move[0]] ?? []).includes(move[1]))
        problems.push(`step ${step.name} moves ${key(move)}, which the lifecycle does not allow`);
    }
  for (const state of CONSUMER_INTENT_STATES)
    for (const to of transitions[state] ?? [])
      if (!taken.has(key([state, to]))) problems.push(`no step moves ${key([state, to])}`);
  return problems;
}

/** The steps that move an intent out of `state` (docs/consumer.md lists them per state). */
export function stepsLeaving(state: State, steps = PURCHASE_STEPS): PurchaseStep[] {
  return steps.filter((step) => step.moves.some(([a]) => a === state));
}
