// The body of POST /generate_dispute_packet (DECISIONS "Wave-2 route shapes"), checked before any
// payment: exactly one of `{intentId}` (a consumer intent, ci_ + 24 hex) or `{intentHash}` (the
// EIP-712 hash of its SpendIntent, 0x + 64 hex, any case). Every problem is one `{field, reason}` of
// a 400 REQUEST_INVALID. Pure.
import { z } from 'zod';
import { isConsumerIntentId } from '../canon/id-shapes';
import { AppError } from '../errors';
import { fieldDetails, requiredOr } from './zodDetails';

export type DisputePacketRequest =
  | { readonly kind: 'intentId'; readonly intentId: string }
  | { readonly kind: 'intentHash'; readonly intentHash: string };

const INTENT_ID_REASON = 'must be a consumer intent id (ci_ + 24 hex)';
const INTENT_HASH_REASON = 'must be an intent hash (0x + 64 hex)';
const INTENT_HASH = /^0x[0-9a-fA-F]{64}$/;

const byId = z.strictObject({
  intentId: z.string(requiredOr(INTENT_ID_REASON)).refine(isConsumerIntentId, {
    error: INTENT_ID_REASON,
  }),
});
const byHash = z.strictObject({
  intentHash: z.string(requiredOr(INTENT_HASH_REASON)).regex(INTENT_HASH, {
    error: INTENT_HASH_REASON,
  }),
});

function invalid(details: { field: string; reason: string }[]): AppError {
  return new AppError(
    'REQUEST_INVALID',
    'The generate_dispute_packet request is invalid.',
    details,
  );
}

export function parseDisputePacketRequest(raw: unknown): DisputePacketRequest {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new AppError('REQUEST_INVALID', 'The body must be a JSON object.');
  const hasId = Object.hasOwn(raw, 'intentId');
  const hasHash = Object.hasOwn(raw, 'intentHash');
  if (hasId === hasHash)
    throw invalid([
      {
        field: hasId ? 'intentHash' : 'intentId',
        reason: 'give exactly one of intentId or intentHash',
      },
    ]);
  if (hasId) {
    const parsed = byId.safeParse(raw);
    if (!parsed.success) throw invalid(fieldDetails(parsed.error.issues));
    return { kind: 'intentId', intentId: parsed.data.intentId };
  }
  const parsed = byHash.safeParse(raw);
  if (!parsed.success) throw invalid(fieldDetails(parsed.error.issues));
  return { kind: 'intentHash', intentHash: parsed.data.intentHash.toLowerCase() };
}
