// The contract between the policy side and the channels that carry its notices: what an
// escalation notice must say (and what a reply means), what a consumer intent's outcome notice
// says, and where either goes. Types and the kind list; the one error adapters throw is
// in errors.ts (which imports from here, never the other way). The adapters beside this file know
// nothing about databases, configuration or an escalation's state.

export const CHANNEL_KINDS = ['webhook', 'telegram', 'slack', 'email', 'dashboard'] as const;
export type ChannelKind = (typeof CHANNEL_KINDS)[number];

/** What every message must say. Built by the escalation side; adapters only render and send it. */
export interface EscalationNotice {
  /** esc_ + 24 lowercase hex. */
  pollRef: string;
  /** 24 lowercase hex, single use. Goes into the message only; never logged, never mailed. */
  code: string;
  policyId: string;
  policyName: string | null;
  /** Display units, e.g. "12.50". */
  amountDisplay: string;
  /** e.g. "USDC". */
  assetSymbol: string;
  /** CAIP-2, e.g. "eip155:8453". */
  network: string;
  /** Payee address or merchant. */
  recipient: string;
  /** What is bought. */
  item: string;
  /** The deciding rule: id (e.g. escalate.aboveThreshold), a name, and its reason (an ESCALATED_* code or a sentence). */
  ruleId: string;
  ruleName: string;
  ruleReason: string;
  expiresAt: Date;
  /** Link to the escalation in the dashboard. */
  dashboardUrl: string;
}

/** The outcomes of a consumer intent its policy's owner is told about. */
export const OUTCOME_KINDS = ['COMPLETED', 'MANUAL_REVIEW', 'REFUNDED'] as const;
export type OutcomeKind = (typeof OUTCOME_KINDS)[number];

/**
 * A consumer intent reached an outcome (built by the notice job from what the intent subgraph
 * queued). Information only: no code, nothing to answer, nothing secret (no session, no payment
 * signature), every field already visible to the owner on the intent's own view.
 */
export interface OutcomeNotice {
  /** ci_ + 24 lowercase hex. */
  intentId: string;
  outcome: OutcomeKind;
  policyId: string;
  policyName: string | null;
  /** e.g. "domains.check". */
  capability: string;
  /** The purchase's scalar params as `key=value`, e.g. "domain=taken.test"; empty when none. */
  params: string;
  /** What the policy spent (the funding amount), display units, e.g. "0.050250". */
  amountDisplay: string;
  assetSymbol: string;
  /** CAIP-2 of the policy's asset. */
  network: string;
  /** The machine reason of the outcome (DELIVERY_CONTRADICTED, PAYMENT_AMBIGUOUS…), or null. */
  reasonCode: string | null;
  /** The service's own finding (a registry's answer), never the merchant's word; null when none. */
  detail: string | null;
  /** How the delivery was checked, when it was: RDAP at a registry URL, or the provider's word. */
  verification: { verified: boolean; method: string; source: string } | null;
  /** REFUNDED: the amount returned, display units. */
  refundDisplay: string | null;
  occurredAt: Date;
  /** Link to the intent in the dashboard. */
  dashboardUrl: string;
}

/** An escalation was resolved: the short notice every bound channel the policy lists gets. */
export interface ResolutionNotice {
  pollRef: string;
  outcome: 'APPROVED' | 'DENIED' | 'EXPIRED';
  policyId: string;
  policyName: string | null;
  amountDisplay: string;
  assetSymbol: string;
  item: string;
  resolvedAt: Date;
  /** The channel the owner answered through; null when it expired. */
  resolvedVia: string | null;
  dashboardUrl: string;
}

/** One bound destination of an owner. */
export interface ChannelTarget {
  kind: ChannelKind;
  /** telegram chat id | slack channel or user id | webhook http(s) URL | email address. */
  address: string;
  /** webhook: the HMAC key shared with the owner. */
  secret?: string;
}

/** The peer's id for what was sent (Telegram message_id, Slack ts, SMTP Message-ID), when it has one. */
export interface DeliveryResult {
  externalId: string | null;
}

export interface ChannelAdapter {
  readonly kind: ChannelKind;
  /** Throws ChannelDeliveryError (with its retryable flag) on every failure, and only that. */
  send(target: ChannelTarget, notice: EscalationNotice): Promise<DeliveryResult>;
  /** A consumer intent's outcome: plain information, no code, no buttons; same errors as send. */
  sendOutcome(target: ChannelTarget, notice: OutcomeNotice): Promise<DeliveryResult>;
  /** An escalation was resolved: plain information, no code; same errors as send. */
  sendResolution(target: ChannelTarget, notice: ResolutionNotice): Promise<DeliveryResult>;
  /** Email only: the single-use confirmation link of a new binding; same errors as send. */
  sendConfirmation?(
    target: ChannelTarget,
    confirmUrl: string,
    expiresAt: Date,
  ): Promise<DeliveryResult>;
}

export type ReplyDecision = 'APPROVE' | 'DENY';

export interface ParsedReply {
  decision: ReplyDecision;
  /** 24 lowercase hex. */
  code: string;
}
