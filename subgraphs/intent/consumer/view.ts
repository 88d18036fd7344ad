// A consumer intent as its owner and its consumer session see it (REST bodies and the GraphQL
// JSON fields): ids, state and why, the quote, the decision, both payment legs, the merchant's
// answer. Amounts stay atomic decimal strings; nothing of the session or the request is echoed
// beyond the params the consumer sent.
import type { ConsumerIntentRow } from './store';

export interface ConsumerIntentView {
  readonly intentId: string;
  readonly policyId: string;
  readonly capability: string;
  readonly provider: string;
  readonly category: string;
  readonly params: Record<string, unknown>;
  readonly state: string;
  readonly stateVersion: number;
  readonly stateReason: string | null;
  readonly quote: Record<string, unknown> | null;
  readonly fundingAmount: string | null;
  readonly intentHash: string | null;
  readonly decision: Record<string, unknown> | null;
  readonly pollRef: string | null;
  readonly reservationId: string | null;
  readonly funding: Record<string, unknown> | null;
  readonly settlement: Record<string, unknown> | null;
  readonly providerAttested: Record<string, unknown> | null;
  readonly refund: Record<string, unknown> | null;
  readonly resolution: Record<string, unknown> | null;
  /** The service's own delivery finding; the merchant's word stays in providerAttested. */
  readonly serviceVerified: Record<string, unknown> | null;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export function consumerIntentView(row: ConsumerIntentRow): ConsumerIntentView {
  return {
    intentId: row.intentId,
    policyId: row.policyId,
    capability: row.capability,
    provider: row.provider,
    category: row.category,
    params: row.params,
    state: row.state,
    stateVersion: row.stateVersion,
    stateReason: row.stateReason,
    quote: row.quote,
    fundingAmount: row.fundingAmount === null ? null : row.fundingAmount.toString(),
    intentHash: row.intentHash,
    decision: row.decision,
    pollRef: row.pollRef,
    reservationId: row.reservationId,
    funding: row.funding,
    settlement: row.settlement,
    providerAttested: row.providerAttested,
    refund: row.refund,
    resolution: row.resolution,
    serviceVerified: row.serviceVerified,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
