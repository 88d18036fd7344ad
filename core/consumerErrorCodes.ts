// The error codes of consumer intents and their execution (issue #17), kept beside the registry
// in core/errors.ts, which spreads them into ERROR_CODES (and checks their shape there).
export const CONSUMER_ERROR_CODES = {
  ILLEGAL_STATE_TRANSITION: {
    status: 409,
    retryable: false,
    message: 'This state change is not allowed from the current state.',
  },
  APPROVAL_HASH_MISMATCH: {
    status: 409,
    retryable: false,
    message: 'The approval was for a different intent hash; execution refuses.',
  },
  PAYMENT_AMBIGUOUS: {
    status: 409,
    retryable: false,
    message: 'The outcome of a payment is unknown; a human reviews it and nothing is re-sent.',
  },
  QUOTE_EXPIRED: {
    status: 409,
    retryable: false,
    message: 'The quote has expired; create the intent again for a fresh quote.',
  },
  TREASURY_FLOAT_INSUFFICIENT: {
    status: 409,
    retryable: true,
    message: 'The settlement treasury cannot cover this payment now; nothing was paid.',
  },
  CONSUMER_INTENT_NOT_FOUND: {
    status: 404,
    retryable: false,
    message: 'No consumer intent with this id on this policy.',
  },
  CONSUMER_INTENT_LEG_INVALID: {
    status: 500,
    retryable: false,
    message:
      'A stored leg of this consumer intent does not fit its schema; an operator looks at it.',
  },
  RECEIPT_NOT_FOUND: {
    status: 404,
    retryable: false,
    message: 'No receipt for this consumer intent (unknown id, or not funded yet).',
  },
  PROVIDER_UNAVAILABLE: {
    status: 502,
    retryable: true,
    message:
      'The merchant did not give a usable quote (no x402 v2 challenge we can pay); nothing was charged.',
  },
  INTENT_NOT_FUNDABLE: {
    status: 409,
    retryable: false,
    message: 'This consumer intent is not waiting for funding.',
  },
  CONSUMER_INTENT_NOT_EXECUTABLE: {
    status: 409,
    retryable: false,
    message: 'This consumer intent is not funded, so there is nothing to execute.',
  },
  CONSUMER_INTENT_NOT_RESOLVABLE: {
    status: 409,
    retryable: false,
    message: 'Only a consumer intent in MANUAL_REVIEW with an ambiguous payment can be resolved.',
  },
  DELIVERY_NOT_READY: {
    status: 409,
    retryable: true,
    message:
      'This consumer intent has no merchant answer yet, so there is no delivery to verify; ask again once it is delivered.',
  },
  RESOLUTION_CONTRADICTS_CHAIN: {
    status: 409,
    retryable: true,
    message: 'The chain does not show what this resolution claims; nothing was changed.',
  },
  RESERVATION_SETTLEMENT_INVALID: {
    status: 409,
    retryable: false,
    message:
      'A reservation is settled by exactly one ledger group, in its asset, for at most the reserved amount.',
  },
} as const;
