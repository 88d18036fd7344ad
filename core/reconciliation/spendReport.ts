// The spend and waste sections of a reconciliation report, from a policy's consumer intents and
// preflight decisions of one period: what was spent (funded and not refunded) by category,
// provider and agent; the fees and spread inside it; duplicates the policy blocked; deliveries
// that failed or were not verified; refunds paid; ambiguous outcomes still open. Amounts are
// bigint atomic units in, decimal strings out. Pure.

/** One consumer intent as the report needs it (amounts in the funding asset). */
export interface IntentFacts {
  readonly intentId: string;
  readonly state: string;
  readonly stateReason: string | null;
  readonly category: string;
  readonly provider: string;
  readonly agentId: string | null;
  /** The funding leg's amount; null when the intent was never funded. */
  readonly fundedAtomic: bigint | null;
  readonly feeAtomic: bigint;
  readonly spreadAtomic: bigint;
  /** A refund that left the treasury; null when none was paid. */
  readonly refundedAtomic: bigint | null;
  /** The service's delivery finding; null when none was made. */
  readonly deliveryVerified: boolean | null;
}

export interface BlockedDuplicate {
  readonly intentHash: string;
  readonly agentId: string | null;
  readonly amountAtomic: bigint;
  readonly evaluatedAt: Date;
}

export interface SpendLine {
  readonly key: string;
  readonly amountAtomic: string;
  readonly count: number;
}

export interface IntentLine {
  readonly intentId: string;
  readonly state: string;
  readonly reason: string | null;
  readonly amountAtomic: string;
}

export interface SpendReport {
  readonly spend: {
    readonly totalAtomic: string;
    readonly purchases: number;
    readonly byCategory: SpendLine[];
    readonly byProvider: SpendLine[];
    readonly byAgent: SpendLine[];
  };
  readonly fees: { readonly serviceFeeAtomic: string; readonly spreadAtomic: string };
  readonly duplicatesBlocked: {
    readonly count: number;
    readonly amountAtomic: string;
    readonly intentHashes: string[];
  };
  readonly failedDeliveries: { readonly count: number; readonly intents: IntentLine[] };
  readonly refunds: {
    readonly count: number;
    readonly amountAtomic: string;
    readonly intents: IntentLine[];
  };
  readonly ambiguousOpen: {
    readonly count: number;
    readonly amountAtomic: string;
    readonly intents: IntentLine[];
  };
}

/** The purchase was paid for and its money kept: funded, no refund paid. */
function isSpend(facts: IntentFacts): boolean {
  return facts.fundedAtomic !== null && facts.refundedAtomic === null;
}

/** States a purchase reaches only when it was not delivered (failed, then refunded or not). */
const FAILED_STATES = new Set([
  'FAILED_BEFORE_PAYMENT',
  'FAILED_AFTER_PAYMENT',
  'REFUND_PENDING',
  'REFUNDED',
]);

/** Purchases that failed, and deliveries the service checked and could not verify. */
function isFailedDelivery(facts: IntentFacts): boolean {
  return FAILED_STATES.has(facts.state) || facts.deliveryVerified === false;
}

/** A paid request whose outcome is unknown: waiting for a human, the money in SUSPENSE. */
function isAmbiguousOpen(facts: IntentFacts): boolean {
  return facts.state === 'MANUAL_REVIEW';
}

const sum = (values: readonly bigint[]) => values.reduce((total, value) => total + value, 0n);

function linesBy(intents: readonly IntentFacts[], keyOf: (f: IntentFacts) => string): SpendLine[] {
  const lines = new Map<string, { amount: bigint; count: number }>();
  for (const facts of intents) {
    const key = keyOf(facts);
    const line = lines.get(key) ?? { amount: 0n, count: 0 };
    lines.set(key, { amount: line.amount + facts.fundedAtomic!, count: line.count + 1 });
  }
  return [...lines.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, line]) => ({ key, amountAtomic: line.amount.toString(), count: line.count }));
}

function lineOf(facts: IntentFacts, amount: bigint | null): IntentLine {
  return {
    intentId: facts.intentId,
    state: facts.state,
    reason: facts.stateReason,
    amountAtomic: (amount ?? 0n).toString(),
  };
}

export function buildSpendReport(
  intents: readonly IntentFacts[],
  duplicates: readonly BlockedDuplicate[],
): SpendReport {
  const spent = intents.filter(isSpend);
  const refunded = intents.filter((facts) => facts.refundedAtomic !== null);
  const failed = intents.filter(isFailedDelivery);
  const ambiguous = intents.filter(isAmbiguousOpen);
  return {
    spend: {
      totalAtomic: sum(spent.map((f) => f.fundedAtomic!)).toString(),
      purchases: spent.length,
      byCategory: linesBy(spent, (f) => f.category),
      byProvider: linesBy(spent, (f) => f.provider),
      byAgent: linesBy(spent, (f) => f.agentId ?? '(none)'),
    },
    fees: {
      serviceFeeAtomic: sum(spent.map((f) => f.feeAtomic)).toString(),
      spreadAtomic: sum(spent.map((f) => f.spreadAtomic)).toString(),
    },
    duplicatesBlocked: {
      count: duplicates.length,
      amountAtomic: sum(duplicates.map((d) => d.amountAtomic)).toString(),
      intentHashes: duplicates.map((d) => d.intentHash),
    },
    failedDeliveries: {
      count: failed.length,
      intents: failed.map((f) => lineOf(f, f.fundedAtomic)),
    },
    refunds: {
      count: refunded.length,
      amountAtomic: sum(refunded.map((f) => f.refundedAtomic!)).toString(),
      intents: refunded.map((f) => lineOf(f, f.refundedAtomic)),
    },
    ambiguousOpen: {
      count: ambiguous.length,
      amountAtomic: sum(ambiguous.map((f) => f.fundedAtomic ?? 0n)).toString(),
      intents: ambiguous.map((f) => lineOf(f, f.fundedAtomic)),
    },
  };
}
