// The shape of every identifier the service mints (prefix + lowercase hex) or is given (a policy id:
// a uint256 in decimal), and the validators for them. Pure: the engine may import this file;
// generation lives in ids.ts because it needs randomness, which the engine must never reach.

export interface IdShape {
  readonly prefix: string;
  readonly hexChars: number;
}

export const ID_SHAPES = {
  consumerIntent: { prefix: 'ci_', hexChars: 24 },
  escalationPollRef: { prefix: 'esc_', hexChars: 24 },
  channelBinding: { prefix: 'chb_', hexChars: 24 },
  reservation: { prefix: 'rsv_', hexChars: 24 },
  ledgerGroup: { prefix: 'lg_', hexChars: 24 },
  quote: { prefix: 'cq_', hexChars: 18 },
  capability: { prefix: 'cap_', hexChars: 24 },
  receipt: { prefix: '0x', hexChars: 64 },
  correlation: { prefix: 'cor_', hexChars: 16 },
  servicePayment: { prefix: 'pay_', hexChars: 24 },
  cafeOrder: { prefix: 'ord_', hexChars: 24 },
  webhookEndpoint: { prefix: 'whe_', hexChars: 24 },
  webhookDelivery: { prefix: 'whd_', hexChars: 24 },
  ownerEvent: { prefix: 'evt_', hexChars: 24 },
} as const satisfies Record<string, IdShape>;

export type IdKind = keyof typeof ID_SHAPES;

const PATTERNS: Record<IdKind, RegExp> = Object.fromEntries(
  Object.entries(ID_SHAPES).map(([kind, shape]) => [
    kind,
    new RegExp(`^${shape.prefix}[0-9a-f]{${shape.hexChars}}$`),
  ]),
) as Record<IdKind, RegExp>;

/** Exact match: the prefix, then exactly the right number of lowercase hex characters. */
export function isIdOfKind(kind: IdKind, value: unknown): value is string {
  return typeof value === 'string' && PATTERNS[kind].test(value);
}

/**
 * The prefix exactly, then the right number of hex characters in either case: for ids a caller may
 * write in uppercase hex and the owning subgraph lowercases before its lookup (a receipt id).
 */
export function isIdOfKindAnyHexCase(kind: IdKind, value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const { prefix } = ID_SHAPES[kind];
  return (
    value.startsWith(prefix) && isIdOfKind(kind, prefix + value.slice(prefix.length).toLowerCase())
  );
}

/** A policy id is its uint256 in decimal, as the policy subgraph stores it: 1 to 78 digits. */
export const POLICY_ID_PATTERN = /^[0-9]{1,78}$/;
export const isPolicyId = (value: unknown): value is string =>
  typeof value === 'string' && POLICY_ID_PATTERN.test(value);

export const isConsumerIntentId = (value: unknown): value is string =>
  isIdOfKind('consumerIntent', value);
export const isEscalationPollRef = (value: unknown): value is string =>
  isIdOfKind('escalationPollRef', value);
export const isChannelBindingId = (value: unknown): value is string =>
  isIdOfKind('channelBinding', value);
export const isReservationId = (value: unknown): value is string =>
  isIdOfKind('reservation', value);
export const isLedgerGroupId = (value: unknown): value is string =>
  isIdOfKind('ledgerGroup', value);
export const isQuoteId = (value: unknown): value is string => isIdOfKind('quote', value);
export const isCapabilityId = (value: unknown): value is string => isIdOfKind('capability', value);
export const isReceiptId = (value: unknown): value is string => isIdOfKind('receipt', value);
export const isCorrelationId = (value: unknown): value is string =>
  isIdOfKind('correlation', value);
export const isServicePaymentId = (value: unknown): value is string =>
  isIdOfKind('servicePayment', value);
export const isCafeOrderId = (value: unknown): value is string => isIdOfKind('cafeOrder', value);
export const isWebhookEndpointId = (value: unknown): value is string =>
  isIdOfKind('webhookEndpoint', value);
export const isWebhookDeliveryId = (value: unknown): value is string =>
  isIdOfKind('webhookDelivery', value);
export const isOwnerEventId = (value: unknown): value is string => isIdOfKind('ownerEvent', value);
