// What an owner reads and what an owner may answer. Renders a notice as plain text every channel
// shares (amount, payee, item, the deciding rule in plain words, the expiry and that silence is a
// denial) and parses the one reply grammar: `APPROVE <code>` / `DENY <code>`. Pure.
import { isEscalationPollRef } from '../core/canon/id-shapes';
import type { EscalationNotice, ParsedReply, ReplyDecision } from './types';

export const REPLY_DECISIONS: readonly ReplyDecision[] = ['APPROVE', 'DENY'];
/** 12 random bytes as lowercase hex (DECISIONS.md, Escalation). */
export const REPLY_CODE_PATTERN = /^[0-9a-f]{24}$/;
/** Longer input is not a reply; bounding it keeps the parser's work bounded. */
export const MAX_REPLY_TEXT_CHARS = 256;

/** Bounds on what a notice may put into a message; longer agent-supplied text is cut with "…". */
export const NOTICE_FIELD_LIMITS = {
  short: 64,
  name: 120,
  text: 200,
  reason: 500,
  url: 500,
} as const;

const REPLY_PATTERN = /^(approve|deny)[ \t]+([0-9a-f]{24})$/i;

/** The reply that approves or denies: also the value of every button. */
export function replyCommand(decision: ReplyDecision, code: string): string {
  return `${decision} ${code}`;
}

/** `APPROVE <code>` or `DENY <code>`, any case, surrounding whitespace ignored; anything else null. */
export function parseReplyText(text: string): ParsedReply | null {
  if (typeof text !== 'string' || text.length > MAX_REPLY_TEXT_CHARS) return null;
  const match = REPLY_PATTERN.exec(text.trim());
  if (!match) return null;
  return { decision: match[1].toUpperCase() as ReplyDecision, code: match[2].toLowerCase() };
}

/** Why a notice cannot be sent (a programming error upstream), or null when it is sound. */
export function noticeProblem(notice: EscalationNotice): string | null {
  if (!isEscalationPollRef(notice.pollRef)) return 'pollRef is not esc_ + 24 lowercase hex';
  if (typeof notice.code !== 'string' || !REPLY_CODE_PATTERN.test(notice.code))
    return 'code is not 24 lowercase hex';
  if (!(notice.expiresAt instanceof Date) || Number.isNaN(notice.expiresAt.getTime()))
    return 'expiresAt is not a valid Date';
  if (!isHttpUrl(notice.dashboardUrl)) return 'dashboardUrl is not an http(s) URL';
  const required = [
    'policyId',
    'amountDisplay',
    'assetSymbol',
    'network',
    'recipient',
    'item',
    'ruleId',
  ] as const;
  for (const field of required) {
    if (typeof notice[field] !== 'string' || notice[field].trim().length === 0)
      return `${field} is empty`;
  }
  return null;
}

export function isHttpUrl(text: unknown): text is string {
  if (typeof text !== 'string') return false;
  try {
    const url = new URL(text);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

/**
 * Agent-supplied text on one line: control, line-separator and bidi-override characters become a
 * space (so an item cannot fake a second line or reorder a payee address), runs of whitespace
 * collapse, and the result is cut to `maxChars`.
 */
export function plainField(text: string | null | undefined, maxChars: number): string {
  const flat = String(text ?? '')
    .replace(/[\p{Cc}\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  const chars = Array.from(flat);
  return chars.length > maxChars ? `${chars.slice(0, maxChars - 1).join('')}…` : flat;
}

/** ISO 8601 in UTC to the second, e.g. 2025-01-31T12:30:00Z. */
export function formatExpiry(expiresAt: Date): string {
  return expiresAt.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

const ESCALATION_REASONS: Record<string, string> = {
  ESCALATED_THRESHOLD: "The amount is above the policy's approval threshold",
  ESCALATED_PER_CALL_CAP: "The amount is above the policy's per-call cap",
  ESCALATED_VENDOR_RISK: "The provider's vendor score is below the policy's minimum",
  'ESCALATED_VENDOR_RISK:BELOW_FLOOR': "The provider's vendor score is below the policy's minimum",
  'ESCALATED_VENDOR_RISK:SCORE_UNAVAILABLE': 'No vendor score is available for the provider',
};

/** The deciding rule in plain words: a known ESCALATED_* code is translated, a sentence kept. */
export function describeDecidingRule(notice: EscalationNotice): string {
  const name = plainField(notice.ruleName || notice.ruleId, NOTICE_FIELD_LIMITS.name);
  const ruleId = plainField(notice.ruleId, NOTICE_FIELD_LIMITS.name);
  const reasonText = plainField(notice.ruleReason, NOTICE_FIELD_LIMITS.reason);
  const known = ESCALATION_REASONS[reasonText];
  const sentence =
    known ??
    (/\s/.test(reasonText) ? reasonText : `The ${name} rule asks for the owner's approval`);
  const closed = /[.!?]$/.test(sentence) ? sentence : `${sentence}.`;
  return name === ruleId ? `${closed} (rule ${ruleId})` : `${closed} (rule: ${name}, ${ruleId})`;
}

export interface RenderOptions {
  /** The caller's clock; when given, the time left is stated in minutes as well. */
  readonly now?: Date;
}

/**
 * The lines every channel shows, email included: what, to whom, why, until when, and that doing
 * nothing denies the spend. Holds no code and no reply instructions.
 */
export function renderNoticeSummary(
  notice: EscalationNotice,
  options: RenderOptions = {},
): string[] {
  const field = (text: string | null, max: number): string => plainField(text, max);
  const amount = `${field(notice.amountDisplay, NOTICE_FIELD_LIMITS.short)} ${field(notice.assetSymbol, NOTICE_FIELD_LIMITS.short)}`;
  const expiry = formatExpiry(notice.expiresAt);
  const policy = notice.policyName
    ? `${field(notice.policyName, NOTICE_FIELD_LIMITS.name)} (${field(notice.policyId, NOTICE_FIELD_LIMITS.name)})`
    : field(notice.policyId, NOTICE_FIELD_LIMITS.name);
  return [
    `Approval needed: an agent wants to spend ${amount}.`,
    '',
    `Amount: ${amount} on ${field(notice.network, NOTICE_FIELD_LIMITS.short)}`,
    `Recipient: ${field(notice.recipient, NOTICE_FIELD_LIMITS.text)}`,
    `Item: ${field(notice.item, NOTICE_FIELD_LIMITS.text)}`,
    `Policy: ${policy}`,
    `Why you are asked: ${describeDecidingRule(notice)}`,
    `Expires: ${expiry}${minutesLeft(notice.expiresAt, options.now)}`,
    `Reference: ${field(notice.pollRef, NOTICE_FIELD_LIMITS.short)}`,
    '',
    `If nobody answers by ${expiry}, the spend is denied automatically: silence means denial.`,
  ];
}

/** The full chat/webhook text: the summary, how to answer with the code, and the dashboard link. */
export function renderNoticeText(notice: EscalationNotice, options: RenderOptions = {}): string {
  return [
    ...renderNoticeSummary(notice, options),
    '',
    'To answer, reply with exactly one of:',
    `  ${replyCommand('APPROVE', notice.code)}`,
    `  ${replyCommand('DENY', notice.code)}`,
    'The code works once.',
    '',
    `Dashboard: ${plainField(notice.dashboardUrl, NOTICE_FIELD_LIMITS.url)}`,
  ].join('\n');
}

function minutesLeft(expiresAt: Date, now: Date | undefined): string {
  if (now === undefined) return ' (UTC)';
  const minutes = Math.max(0, Math.ceil((expiresAt.getTime() - now.getTime()) / 60_000));
  return ` (UTC, ${minutes === 1 ? '1 minute' : `${minutes} minutes`} from now)`;
}
