// The x402 payment record's shapes: one authorization (network, asset, payer, nonce) is one
// record, and its row in ledger.service_payments maps to a ServicePayment here. Also the lease
// SQL and the fee stream naming that reads, writes and bookings share. No statement runs here.
import { assetId } from '../accounts/names';

export type ServicePaymentState = 'SETTLING' | 'PENDING' | 'SETTLED' | 'ANSWERED' | 'FAILED';

/** What a payment pays for (migration 0008): a priced route's fee, or the funding of a consumer intent. */
export type PaymentPurpose = 'FEE' | 'FUNDING';

/** The consumer intent a FUNDING payment funds. */
export interface FundingTarget {
  readonly policyId: string;
  /** `ci_` + 24 hex. */
  readonly intentRef: string;
}

/** One authorization: EIP-3009 makes (token, authorizer, nonce) single use on chain. */
export interface AuthorizationKey {
  /** CAIP-2, e.g. eip155:196. */
  readonly network: string;
  /** Lowercase 0x-address of the token. */
  readonly asset: string;
  /** Lowercase 0x-address of the authorizer. */
  readonly payer: string;
  /** Lowercase 0x + 64 hex. */
  readonly nonce: string;
}

export interface PaymentClaim extends AuthorizationKey {
  readonly payTo: string;
  readonly amountAtomic: bigint;
  readonly validBefore: bigint;
  /** `METHOD /path` of the paid route as the table writes it. */
  readonly route: string;
  /** sha256 hex of the request (method, path, body): an authorization answers one request only. */
  readonly requestDigest: string;
}

export interface ServicePayment extends PaymentClaim {
  readonly paymentId: string;
  readonly purpose: PaymentPurpose;
  /** Set for FUNDING payments only. */
  readonly funding: FundingTarget | null;
  /** FUNDING payments: the FUNDING group, and the REFUND owed when the intent could no longer be funded. */
  readonly fundingGroupId: string | null;
  readonly refundGroupId: string | null;
  readonly state: ServicePaymentState;
  readonly leaseUntil: Date | null;
  /** The transaction that paid (or, while PENDING, the one sent and not yet confirmed). */
  readonly txHash: string | null;
  /** A settlement of ours that did not pay: it reverted, or another transaction used the authorization first. */
  readonly unpaidTxHash: string | null;
  readonly feeGroupId: string | null;
  readonly clearGroupId: string | null;
  readonly reversalGroupId: string | null;
  readonly failureReason: string | null;
  /** The chain facts a FAILED record was decided on (see FailureEvidence). */
  readonly evidenceBlock: bigint | null;
  readonly evidenceChainTimeS: bigint | null;
  readonly evidenceTxHash: string | null;
  readonly answerStatus: number | null;
  readonly answerBody: unknown;
  readonly createdAt: Date;
  readonly settledAt: Date | null;
}

export interface Row {
  payment_id: string;
  network: string;
  asset: string;
  payer: string;
  nonce: string;
  pay_to: string;
  amount: string;
  valid_before: string;
  route: string;
  request_digest: string;
  state: ServicePaymentState;
  lease_until: Date | null;
  tx_hash: string | null;
  unpaid_tx_hash: string | null;
  fee_group_id: string | null;
  clear_group_id: string | null;
  reversal_group_id: string | null;
  failure_reason: string | null;
  evidence_block: string | null;
  evidence_chain_time: string | null;
  evidence_tx_hash: string | null;
  answer_status: number | null;
  answer_body: unknown;
  created_at: Date;
  settled_at: Date | null;
  purpose: PaymentPurpose;
  policy_id: string | null;
  intent_ref: string | null;
  funding_group_id: string | null;
  refund_group_id: string | null;
}

export function fromRow(row: Row): ServicePayment {
  return {
    paymentId: row.payment_id,
    purpose: row.purpose,
    funding:
      row.purpose === 'FUNDING' ? { policyId: row.policy_id!, intentRef: row.intent_ref! } : null,
    fundingGroupId: row.funding_group_id,
    refundGroupId: row.refund_group_id,
    network: row.network,
    asset: row.asset,
    payer: row.payer,
    nonce: row.nonce,
    payTo: row.pay_to,
    amountAtomic: BigInt(row.amount),
    validBefore: BigInt(row.valid_before),
    route: row.route,
    requestDigest: row.request_digest,
    state: row.state,
    leaseUntil: row.lease_until,
    txHash: row.tx_hash,
    unpaidTxHash: row.unpaid_tx_hash,
    feeGroupId: row.fee_group_id,
    clearGroupId: row.clear_group_id,
    reversalGroupId: row.reversal_group_id,
    failureReason: row.failure_reason,
    evidenceBlock: row.evidence_block === null ? null : BigInt(row.evidence_block),
    evidenceChainTimeS: row.evidence_chain_time === null ? null : BigInt(row.evidence_chain_time),
    evidenceTxHash: row.evidence_tx_hash,
    answerStatus: row.answer_status,
    answerBody: row.answer_body,
    createdAt: row.created_at,
    settledAt: row.settled_at,
  };
}

/** What a settlement attempt left: sent with outcome unknown (txHash; null if even that is unknown), or reverted. */
export interface UnconfirmedSettlement {
  readonly txHash: string | null;
  /** Mined without paying (reverted): it moved nothing, but the authorization may still be used. */
  readonly unpaidTxHash?: string | null;
}

/**
 * The chain facts, read at one block, that prove an authorization can no longer move money: unused
 * at a block whose time is at or past validBefore, or its nonce used by a transaction that does not
 * pay this payment. The database refuses FAILED without them.
 */
export type FailureEvidence =
  | {
      readonly reason: 'invalid_exact_evm_payload_authorization_valid_before';
      readonly blockNumber: bigint;
      readonly chainTimeS: bigint;
    }
  | {
      readonly reason: 'invalid_exact_evm_nonce_already_used';
      readonly blockNumber: bigint;
      readonly usedByTxHash: string;
    };

export type ClaimOutcome =
  | { readonly claimed: true; readonly payment: ServicePayment }
  | { readonly claimed: false; readonly payment: ServicePayment };

/** The fee revenue stream of a route: `GET /cafe/order/latte` -> `cafe.order.latte`. */
export function feeStreamOf(route: string): string {
  const path = route.slice(route.indexOf(' ') + 1);
  return path.replace(/^\//, '').replace(/\//g, '.');
}

export function ledgerAsset(payment: AuthorizationKey): string {
  return assetId(payment.network, payment.asset);
}

export const LEASE_SQL = `now() + make_interval(secs => $LEASE::double precision / 1000)`;

export function withLease(sql: string, leaseIndex: number): string {
  return sql.replace(/\$LEASE/g, `$${leaseIndex}`);
}
