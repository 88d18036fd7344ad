// The short notice every bound channel gets when an escalation is resolved (approved, denied or
// expired): what was asked, the outcome and when. Information only: no code, nothing to answer.
// Also the email confirmation mail's text (the one mail an unconfirmed address receives).
import { NOTICE_FIELD_LIMITS, plainField } from './message';
import type { ResolutionNotice } from './types';

const OUTCOME_WORDS: Record<ResolutionNotice['outcome'], string> = {
  APPROVED: 'approved',
  DENIED: 'denied',
  EXPIRED: 'expired without a decision (denied by default)',
};

export function renderResolutionHeadline(notice: ResolutionNotice): string {
  const amount = `${plainField(notice.amountDisplay, NOTICE_FIELD_LIMITS.short)} ${plainField(notice.assetSymbol, NOTICE_FIELD_LIMITS.short)}`;
  return plainField(
    `Spend request ${OUTCOME_WORDS[notice.outcome]}: ${amount} for ${plainField(notice.item, NOTICE_FIELD_LIMITS.text)}`,
    160,
  );
}

export function renderResolutionText(notice: ResolutionNotice): string {
  return [
    renderResolutionHeadline(notice),
    `Escalation ${notice.pollRef}${notice.policyName === null ? '' : ` on policy "${plainField(notice.policyName, NOTICE_FIELD_LIMITS.name)}"`}, resolved ${notice.resolvedAt.toISOString().replace('.000Z', 'Z')}${notice.resolvedVia === null ? '' : ` via ${plainField(notice.resolvedVia, NOTICE_FIELD_LIMITS.short)}`}.`,
    `Details: ${plainField(notice.dashboardUrl, NOTICE_FIELD_LIMITS.url)}`,
  ].join('\n');
}

/** The confirmation mail: the single-use link and its expiry, and nothing else. */
export function renderEmailConfirmationText(confirmUrl: string, expiresAt: Date): string {
  return [
    'Confirm that this address should receive Spend Control notices:',
    '',
    confirmUrl,
    '',
    `The link works once, until ${expiresAt.toISOString().replace('.000Z', 'Z')}. If you did not ask for this, ignore this mail: nothing will be sent here.`,
  ].join('\n');
}
