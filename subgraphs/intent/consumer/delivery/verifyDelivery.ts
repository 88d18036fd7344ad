// POST /verify_delivery ($0.10, x402), the intent subgraph's side: `{intentId}` answers the intent's
// stored serviceVerified (the delivery job's finding), or checks it now when none is stored yet
// (answered, not stored: the job owns the intent's moves); `{capability, params, providerAttested}`
// checks an outside purchase the same way. The answer is the service's finding only: the
// merchant's claim is never echoed, let alone as verified. Before any 402 the gateway asks
// verifyDeliveryTerms whether `{intentId}` can be answered (see there), so a request that cannot
// is refused and never charged; the paid call still enforces the same rules itself.
import { AppError } from '../../../../core/errors';
import { parseVerifyDeliveryRequest } from '../../../../core/validation/deliveryRequest';
import type { SubgraphContext } from '../../../kit';
import { requireReadableConsumerIntent } from '../reads';
import type { ConsumerIntentRow } from '../store';
import { deliverySubjectOf } from './job';
import { checkDelivery } from './verification';

export interface VerifyDeliveryInput {
  readonly intentId?: string | null;
  readonly capability?: string | null;
  readonly params?: Record<string, unknown> | null;
  readonly providerAttested?: Record<string, unknown> | null;
}

/** Who vouches for an outside purchase's attestation: the caller brought it, so it is named so. */
export const CALLER_SUPPLIED_ATTESTATION = 'the provider, as the caller reported it';

/** The GraphQL arguments back into the REST body, so one parser judges both. */
function bodyOf(input: VerifyDeliveryInput): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(input).filter(([, value]) => value !== null && value !== undefined),
  );
}

/** Why `{intentId}` cannot be answered now: no stored finding and no merchant answer to check yet. */
function notReady(row: ConsumerIntentRow): AppError | null {
  if (row.serviceVerified !== null || row.providerAttested !== null) return null;
  return new AppError('DELIVERY_NOT_READY', undefined, {
    intentId: row.intentId,
    state: row.state,
  });
}

/**
 * The x402 check of `{intentId}`, free, before any 402: the same access as the paid call (a
 * missing intent and one the caller may not read are the same 404 CONSUMER_INTENT_NOT_FOUND), and
 * the refusal as data ({code, message, details}, or null when the paid call can answer).
 */
export async function verifyDeliveryTerms(
  ctx: SubgraphContext,
  intentId: string,
): Promise<Record<string, unknown>> {
  const row = await requireReadableConsumerIntent(ctx, intentId);
  const refusal = notReady(row);
  return {
    intentId: row.intentId,
    refusal: refusal && { code: refusal.code, message: refusal.message, details: refusal.details },
  };
}

export async function verifyDelivery(
  ctx: SubgraphContext,
  input: VerifyDeliveryInput,
): Promise<Record<string, unknown>> {
  const request = parseVerifyDeliveryRequest(bodyOf(input));
  const rdap = ctx.rdap ?? null;
  const now = () => ctx.now();
  if (request.kind === 'claim') {
    const check = await checkDelivery(
      { ...request, attestedBy: CALLER_SUPPLIED_ATTESTATION },
      rdap,
      now,
    );
    return { serviceVerified: check.serviceVerified };
  }
  const row = await requireReadableConsumerIntent(ctx, request.intentId);
  if (row.serviceVerified !== null)
    return { intentId: row.intentId, state: row.state, serviceVerified: row.serviceVerified };
  const refusal = notReady(row);
  if (refusal) throw refusal;
  const check = await checkDelivery(deliverySubjectOf(row), rdap, now);
  return { intentId: row.intentId, state: row.state, serviceVerified: check.serviceVerified };
}
