// The owner's notice of a consumer intent's outcome. store.ts calls `queueOutcomeNotice` after every
// compare-and-set that lands an intent in COMPLETED, MANUAL_REVIEW or REFUNDED, on the same
// connection and so in the same transaction as the move: the notice is queued exactly when the
// move commits. The intent subgraph never writes the policy's tables: it hands a summary to the
// policy's published function `policy.enqueue_outcome_notice` (policy migration 0012), which
// queues one delivery per bound channel of the policy's owner for the notice job to send.
//
// The summary holds only what the owner may read on the intent's own view, and never anything
// secret: no session, no payment signature or authorization, no merchant URL. The reason is its
// machine code; a finding (`detail`) is the service's own (the delivery check), never a transport
// error's text (PAYMENT_AMBIGUOUS carries its code only).
import { STATE_REASON } from '../../../../core/consumer/reasons';
import type { ConsumerIntentState } from '../../../../core/consumer/lifecycle';
import type { Db } from '../../../../platform/db';
import type { QuoteLeg, ServiceVerifiedLeg } from '../legs';

export const OWNER_OUTCOMES = ['COMPLETED', 'MANUAL_REVIEW', 'REFUNDED'] as const;
export type OwnerOutcome = (typeof OWNER_OUTCOMES)[number];

export function isOwnerOutcome(state: ConsumerIntentState): state is OwnerOutcome {
  return (OWNER_OUTCOMES as readonly string[]).includes(state);
}

/** What transition.ts hands over: its ConsumerIntentRow, typed structurally (no import cycle). */
export interface OutcomeSourceRow {
  readonly intentId: string;
  readonly policyId: string;
  readonly capability: string;
  readonly params: Record<string, unknown>;
  readonly state: ConsumerIntentState;
  readonly stateVersion: number;
  readonly stateReason: string | null;
  readonly stateReasonCode: string | null;
  readonly quote: QuoteLeg | null;
  readonly fundingAmount: bigint | null;
  readonly refund: Record<string, unknown> | null;
  readonly serviceVerified: ServiceVerifiedLeg | null;
  readonly updatedAt: Date;
}

/** The JSON the policy function stores (and the notice job renders). Add fields, never rename. */
export interface OutcomeSummary {
  readonly intentId: string;
  readonly stateVersion: number;
  readonly capability: string;
  /** Scalar params as `key=value`, comma-separated, e.g. "domain=taken.test". */
  readonly params: string;
  /** The funding amount (what the policy spent), atomic units, decimal string. */
  readonly amount: string | null;
  /** The funding asset the amount is in, from the quote. */
  readonly asset: { readonly network: string; readonly token: string } | null;
  readonly reasonCode: string | null;
  readonly detail: string | null;
  readonly verification: {
    readonly verified: boolean;
    readonly method: string;
    readonly source: string;
  } | null;
  /** REFUNDED: the refunded amount, atomic units, decimal string. */
  readonly refundAmount: string | null;
  readonly occurredAt: string;
}

/** Reasons whose detail is the service's own delivery finding, safe and useful to show. */
const FINDING_REASONS = new Set<string>([
  STATE_REASON.DELIVERY_CONTRADICTED,
  STATE_REASON.DELIVERY_UNVERIFIED,
]);
const MAX_PARAMS = 5;
const MAX_PARAM_CHARS = 100;
const MAX_DETAIL_CHARS = 600;

function paramsText(params: Record<string, unknown>): string {
  return Object.entries(params)
    .filter(([, value]) => ['string', 'number', 'boolean'].includes(typeof value))
    .slice(0, MAX_PARAMS)
    .map(([key, value]) => `${key}=${String(value)}`.slice(0, MAX_PARAM_CHARS))
    .join(', ');
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

function verificationOf(row: OutcomeSourceRow): OutcomeSummary['verification'] {
  const found = row.serviceVerified;
  if (found === null || found.verified === undefined) return null;
  const method = text(found.method);
  const source = text(found.source);
  if (method === null || source === null) return null;
  return { verified: found.verified, method, source };
}

function fundingAssetOf(row: OutcomeSourceRow): OutcomeSummary['asset'] {
  const funding = row.quote?.funding;
  const network = text(funding?.network);
  const token = text(funding?.asset);
  return network === null || token === null ? null : { network, token };
}

/** The owner's summary of the intent as it now stands (pure). */
export function outcomeSummaryOf(row: OutcomeSourceRow): OutcomeSummary {
  const reasonCode = row.stateReasonCode;
  const finding = text(row.serviceVerified?.detail);
  const showFinding =
    (row.state === 'COMPLETED' && row.serviceVerified !== null) ||
    (row.state === 'MANUAL_REVIEW' && reasonCode !== null && FINDING_REASONS.has(reasonCode));
  return {
    intentId: row.intentId,
    stateVersion: row.stateVersion,
    capability: row.capability,
    params: paramsText(row.params),
    amount: row.fundingAmount === null ? null : row.fundingAmount.toString(),
    asset: fundingAssetOf(row),
    reasonCode,
    detail: showFinding && finding !== null ? finding.slice(0, MAX_DETAIL_CHARS) : null,
    verification: verificationOf(row),
    refundAmount: row.state === 'REFUNDED' ? text(row.refund?.amount) : null,
    occurredAt: row.updatedAt.toISOString(),
  };
}

/**
 * Queues the owner's notice of `row`'s outcome through the policy's function, on the caller's
 * connection (inside the move's transaction); the number of deliveries queued (0 when the owner
 * has no bound channel the policy lists). Nothing for a state that is not an owner outcome.
 */
export async function queueOutcomeNotice(db: Db, row: OutcomeSourceRow): Promise<number> {
  if (!isOwnerOutcome(row.state)) return 0;
  const result = await db.query<{ queued: number }>(
    'SELECT policy.enqueue_outcome_notice($1, $2, $3, $4, $5, $6) AS queued',
    [row.policyId, row.intentId, row.stateVersion, row.state, outcomeSummaryOf(row), row.updatedAt],
  );
  return result.rows[0]?.queued ?? 0;
}
