// What an owner reads when a consumer intent of their policy reaches an outcome: COMPLETED (the
// delivery checked), MANUAL_REVIEW (why, and that a person reviews it and nothing is re-sent) or
// REFUNDED. Plain text every channel shares, an email subject, and the sanity check adapters run
// before sending. Information only: no code, no reply instructions. Pure.
import { isConsumerIntentId } from '../core/canon/id-shapes';
import { NOTICE_FIELD_LIMITS, isHttpUrl, plainField } from './message';
import { OUTCOME_KINDS, type OutcomeNotice } from './types';

/** The reasons a MANUAL_REVIEW can carry, in plain words; any other code is named as it is. */
const REVIEW_REASONS: Record<string, string> = {
  DELIVERY_CONTRADICTED:
    'The registry contradicts what the merchant said it delivered: the merchant was paid, but its answer does not match the registry.',
  DELIVERY_UNVERIFIED:
    'The delivery could not be checked: the registry gave no usable answer after every retry.',
  PAYMENT_AMBIGUOUS:
    'It is not known whether the payment to the merchant went through: the signed payment may have left and no clear answer came back.',
  PROVIDER_ANSWER_INVALID:
    'The merchant was paid but its answer could not be read, so what was delivered is unknown.',
};

const HEADLINES: Record<OutcomeNotice['outcome'], string> = {
  COMPLETED: 'Purchase completed',
  MANUAL_REVIEW: 'Purchase held for review',
  REFUNDED: 'Purchase refunded',
};

/** Why an outcome notice cannot be sent (a programming error upstream), or null when it is sound. */
export function outcomeProblem(notice: OutcomeNotice): string | null {
  if (!isConsumerIntentId(notice.intentId)) return 'intentId is not ci_ + 24 lowercase hex';
  if (!(OUTCOME_KINDS as readonly string[]).includes(notice.outcome))
    return `outcome ${String(notice.outcome)} is not one of ${OUTCOME_KINDS.join(', ')}`;
  if (!(notice.occurredAt instanceof Date) || Number.isNaN(notice.occurredAt.getTime()))
    return 'occurredAt is not a valid Date';
  if (!isHttpUrl(notice.dashboardUrl)) return 'dashboardUrl is not an http(s) URL';
  for (const field of [
    'policyId',
    'capability',
    'amountDisplay',
    'assetSymbol',
    'network',
  ] as const) {
    if (typeof notice[field] !== 'string' || notice[field].trim().length === 0)
      return `${field} is empty`;
  }
  return null;
}

function amountOf(notice: OutcomeNotice): string {
  return `${plainField(notice.amountDisplay, NOTICE_FIELD_LIMITS.short)} ${plainField(notice.assetSymbol, NOTICE_FIELD_LIMITS.short)}`;
}

function whatOf(notice: OutcomeNotice): string {
  const capability = plainField(notice.capability, NOTICE_FIELD_LIMITS.short);
  const params = plainField(notice.params, NOTICE_FIELD_LIMITS.text);
  return params === '' ? capability : `${capability} (${params})`;
}

/** The one-line headline, e.g. "Purchase completed: domains.check (domain=taken.test) for 0.050250 USDT0". */
export function renderOutcomeHeadline(notice: OutcomeNotice): string {
  return `${HEADLINES[notice.outcome]}: ${whatOf(notice)} for ${amountOf(notice)}`;
}

/** A MANUAL_REVIEW reason in plain words, with its code. */
export function describeReviewReason(code: string | null): string {
  const reason = code === null ? '' : plainField(code, NOTICE_FIELD_LIMITS.short);
  if (reason === '') return 'The purchase needs a person to look at it.';
  return `${REVIEW_REASONS[reason] ?? 'The purchase needs a person to look at it.'} (${reason})`;
}

function deliveryLines(notice: OutcomeNotice): string[] {
  const lines: string[] = [];
  const check = notice.verification;
  if (check !== null) {
    const method = plainField(check.method, NOTICE_FIELD_LIMITS.short);
    const source = plainField(check.source, NOTICE_FIELD_LIMITS.url);
    lines.push(
      check.verified
        ? `Delivery: verified by ${method} at ${source}`
        : method === 'PROVIDER_ATTESTATION'
          ? `Delivery: not independently verified; it rests on the provider's word (${source})`
          : `Delivery: not verified (${method} at ${source})`,
    );
  }
  if (notice.detail !== null && notice.detail.trim() !== '')
    lines.push(`Finding: ${plainField(notice.detail, NOTICE_FIELD_LIMITS.reason)}`);
  return lines;
}

function outcomeLines(notice: OutcomeNotice): string[] {
  switch (notice.outcome) {
    case 'COMPLETED':
      return deliveryLines(notice);
    case 'MANUAL_REVIEW':
      return [
        `Why: ${describeReviewReason(notice.reasonCode)}`,
        ...deliveryLines(notice),
        '',
        'A person at the service reviews this purchase. Nothing is re-sent to the merchant and nothing more is paid while it is reviewed.',
      ];
    case 'REFUNDED': {
      const refund =
        notice.refundDisplay === null
          ? amountOf(notice)
          : `${plainField(notice.refundDisplay, NOTICE_FIELD_LIMITS.short)} ${plainField(notice.assetSymbol, NOTICE_FIELD_LIMITS.short)}`;
      const reason =
        notice.reasonCode === null
          ? []
          : [`Why: ${plainField(notice.reasonCode, NOTICE_FIELD_LIMITS.short)}`];
      return [`Refund: ${refund} returned to the buyer's wallet`, ...reason];
    }
  }
}

/** The lines every channel shows (email included): what, for how much, what happened, where to look. */
export function renderOutcomeLines(notice: OutcomeNotice): string[] {
  const policy = notice.policyName
    ? `${plainField(notice.policyName, NOTICE_FIELD_LIMITS.name)} (${plainField(notice.policyId, NOTICE_FIELD_LIMITS.name)})`
    : plainField(notice.policyId, NOTICE_FIELD_LIMITS.name);
  return [
    `${renderOutcomeHeadline(notice)}.`,
    '',
    `Intent: ${plainField(notice.intentId, NOTICE_FIELD_LIMITS.short)}`,
    `Capability: ${whatOf(notice)}`,
    `Amount: ${amountOf(notice)} on ${plainField(notice.network, NOTICE_FIELD_LIMITS.short)}`,
    `Policy: ${policy}`,
    `State: ${notice.outcome} at ${notice.occurredAt.toISOString().replace(/\.\d{3}Z$/, 'Z')}`,
    ...outcomeLines(notice),
    '',
    `Dashboard: ${plainField(notice.dashboardUrl, NOTICE_FIELD_LIMITS.url)}`,
  ];
}

/** The chat and webhook text: the lines joined; nothing to answer. */
export function renderOutcomeText(notice: OutcomeNotice): string {
  return renderOutcomeLines(notice).join('\n');
}

export const MAX_OUTCOME_SUBJECT_CHARS = 160;

export function renderOutcomeSubject(notice: OutcomeNotice): string {
  return plainField(renderOutcomeHeadline(notice), MAX_OUTCOME_SUBJECT_CHARS);
}
