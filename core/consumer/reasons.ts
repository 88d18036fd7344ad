// Why a consumer intent stands where it does: a machine code (the column state_reason_code,
// migration 0024) and the text a person reads beside it (state_reason, `CODE: detail`, which the
// API shows unchanged). The codes the purchase writes itself are constants here; a decision or an
// error code (upper snake case, as AppError and the preflight name them) may stand as one too.
// Pure: the transition stores both columns; readers compare codes, never parse the text.

/** The codes the purchase's own steps write (workflow.ts names the steps). */
export const STATE_REASON = {
  /** A signed authorization may have left: the cost is parked in SUSPENSE for review. */
  PAYMENT_AMBIGUOUS: 'PAYMENT_AMBIGUOUS',
  DELIVERY_CONTRADICTED: 'DELIVERY_CONTRADICTED',
  DELIVERY_UNVERIFIED: 'DELIVERY_UNVERIFIED',
  PROVIDER_ATTESTATION_ONLY: 'PROVIDER_ATTESTATION_ONLY',
  PROVIDER_DELIVERED_NOTHING: 'PROVIDER_DELIVERED_NOTHING',
  PROVIDER_ANSWER_INVALID: 'PROVIDER_ANSWER_INVALID',
  QUOTE_EXPIRED: 'QUOTE_EXPIRED',
  MERCHANT_REFUSED_BEFORE_PAYMENT: 'MERCHANT_REFUSED_BEFORE_PAYMENT',
  ESCALATION_DENIED: 'ESCALATION_DENIED',
  ESCALATION_EXPIRED_DEFAULT_DENY: 'ESCALATION_EXPIRED_DEFAULT_DENY',
  INTERNAL_ERROR: 'INTERNAL_ERROR',
} as const;

/** The longest reason text the column takes (migration 0014's CHECK). */
export const MAX_REASON_CHARS = 1000;

/** A code as the column's CHECK allows it: upper snake case, 3 to 64 characters. */
const CODE = /^[A-Z][A-Z0-9_]{2,63}$/;

export interface StateReason {
  /** The machine code; null for a reason that is free text only (an operator's resolution). */
  readonly code: string | null;
  readonly text: string;
}

/** True for a word that may stand as a code. */
export function isStateReasonCode(word: string): boolean {
  return CODE.test(word);
}

function checkedCode(code: string): string {
  if (!isStateReasonCode(code)) throw new Error(`not a state reason code: ${code}`);
  return code;
}

/** `CODE` alone, or `CODE: detail`, cut at MAX_REASON_CHARS. */
export function stateReason(code: string, detail?: string): StateReason {
  const text = detail === undefined ? code : `${code}: ${detail}`;
  return { code: checkedCode(code), text: text.slice(0, MAX_REASON_CHARS) };
}

/**
 * A coded reason whose text the caller words itself (`CODE (503): …`, or cut with an ellipsis);
 * the text must open with the code, as every stored reason does.
 */
export function codedReason(code: string, text: string): StateReason {
  if (!text.startsWith(checkedCode(code)))
    throw new Error(`reason text must open with its code ${code}`);
  return { code, text: text.slice(0, MAX_REASON_CHARS) };
}

/** Free text with no code: what an operator's resolution says. */
export function textReason(text: string): StateReason {
  return { code: null, text: text.slice(0, MAX_REASON_CHARS) };
}

/** The reason a row already carries, to keep it across a further move (e.g. into REFUND_PENDING). */
export function carriedReason(row: {
  readonly stateReasonCode: string | null;
  readonly stateReason: string | null;
}): StateReason | null {
  return row.stateReason === null ? null : { code: row.stateReasonCode, text: row.stateReason };
}
