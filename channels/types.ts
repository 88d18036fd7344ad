// The contract between escalations and the channels that carry them: what every notice must say,
// where it goes, and what a reply means. Types and the kind list; the one error adapters throw is
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
}

export type ReplyDecision = 'APPROVE' | 'DENY';

export interface ParsedReply {
  decision: ReplyDecision;
  /** 24 lowercase hex. */
  code: string;
}
