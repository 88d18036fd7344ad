// The delivery job of the consumer worker: a DELIVERY_PENDING intent (the merchant paid, its answer
// recorded as providerAttested, the RECOGNITION pair booked) is checked against a source other
// than the merchant (verification.ts), and the finding is stored as serviceVerified, beside the
// merchant's word and never merged with it:
//   CONFIRMED / ATTESTED_ONLY → DELIVERY_VERIFIED → COMPLETED, one transaction, nothing posted;
//   REGISTRY_ONLY             → the same, reason PROVIDER_DELIVERED_NOTHING (paid, no answer: the
//                               registry answered; serviceVerified says verified: false, which
//                               counts against the vendor);
//   CONTRADICTED              → MANUAL_REVIEW `DELIVERY_CONTRADICTED: …`, nothing posted (a human decides);
//   UNVERIFIED                → stays DELIVERY_PENDING with verified: false and the reason, retried
//                               with backoff; after the bound → MANUAL_REVIEW `DELIVERY_UNVERIFIED: …`.
// Every move goes through the store's compare-and-set, so the outbox row `consumer_intent.state_changed`
// (with the reason) is written in the same transaction. The caller holds the intent's claim.
import {
  carriedReason,
  codedReason,
  MAX_REASON_CHARS,
  STATE_REASON,
  type StateReason,
  stateReason,
} from '../../../../core/consumer/reasons';
import { crashPoint } from '../../../../platform/crashSeam';
import type { DbPool } from '../../../../platform/db';
import { withTransaction } from '../../../../platform/db';
import type { Logger } from '../../../../platform/log';
import type { RdapClient } from '../../../../platform/rdap';
import { type ConsumerIntentRow, getConsumerIntent } from '../store';
import { transitionConsumerIntent, updateConsumerIntent } from '../transition';
import { afterUnverified, type DeliveryRetryPolicy } from './retry';
import { checkDelivery, type DeliveryCheck, type DeliverySubject } from './verification';

export const DELIVERY_CONTRADICTED = STATE_REASON.DELIVERY_CONTRADICTED;
export const DELIVERY_UNVERIFIED = STATE_REASON.DELIVERY_UNVERIFIED;
/** The reason COMPLETED carries when nothing but the provider vouches for the delivery. */
export const PROVIDER_ATTESTATION_ONLY = STATE_REASON.PROVIDER_ATTESTATION_ONLY;
/** The reason COMPLETED carries when the merchant was paid, delivered nothing and the registry answered. */
export const PROVIDER_DELIVERED_NOTHING = STATE_REASON.PROVIDER_DELIVERED_NOTHING;

/** The job's claim: DELIVERY_PENDING intents whose next check is due, and DELIVERY_VERIFIED ones to finish. */
export const DELIVERY_CLAIM = {
  states: ['DELIVERY_PENDING', 'DELIVERY_VERIFIED'],
  where: `state = 'DELIVERY_VERIFIED' OR delivery_next_attempt_at IS NULL OR delivery_next_attempt_at <= now()`,
} as const;

export interface DeliveryDeps {
  readonly db: DbPool;
  readonly rdap: RdapClient;
  readonly retry: DeliveryRetryPolicy;
  readonly log: Logger;
  now(): Date;
}

export function deliverySubjectOf(row: ConsumerIntentRow): DeliverySubject {
  return {
    capability: row.capability,
    params: row.params,
    providerAttested: row.providerAttested,
    attestedBy: row.provider,
    paidWithoutAnswer: row.providerAttested === null && row.settlement?.txHash !== undefined,
  };
}

function reasonOf(code: string, detail: string): StateReason {
  const reason = `${code}: ${detail}`;
  const text =
    reason.length <= MAX_REASON_CHARS ? reason : `${reason.slice(0, MAX_REASON_CHARS - 1)}…`;
  return codedReason(code, text);
}

/** DELIVERY_PENDING → DELIVERY_VERIFIED → COMPLETED (or only the second move), one transaction. */
async function complete(
  deps: DeliveryDeps,
  row: ConsumerIntentRow,
  check: DeliveryCheck | null,
): Promise<void> {
  const now = deps.now();
  await withTransaction(deps.db, async (client) => {
    let reason = carriedReason(row);
    if (check !== null) {
      reason =
        check.outcome === 'ATTESTED_ONLY'
          ? stateReason(PROVIDER_ATTESTATION_ONLY)
          : check.outcome === 'REGISTRY_ONLY'
            ? reasonOf(PROVIDER_DELIVERED_NOTHING, check.serviceVerified.detail)
            : null;
      const verified = await transitionConsumerIntent(
        client,
        row.intentId,
        'DELIVERY_PENDING',
        'DELIVERY_VERIFIED',
        {
          now,
          reason,
          changes: {
            serviceVerified: { ...check.serviceVerified },
            deliveryNextAttemptAt: null,
          },
        },
      );
      if (verified === null) return;
    }
    await transitionConsumerIntent(client, row.intentId, 'DELIVERY_VERIFIED', 'COMPLETED', {
      now,
      reason,
    });
  });
}

async function toManualReview(
  deps: DeliveryDeps,
  row: ConsumerIntentRow,
  reason: StateReason,
  changes: Parameters<typeof transitionConsumerIntent>[4]['changes'],
): Promise<void> {
  const moved = await transitionConsumerIntent(
    deps.db,
    row.intentId,
    'DELIVERY_PENDING',
    'MANUAL_REVIEW',
    {
      now: deps.now(),
      reason,
      changes,
    },
  );
  if (moved !== null)
    deps.log.warn(
      { intentId: row.intentId, reason: reason.text },
      'consumer delivery needs a human',
    );
}

async function recordUnverified(
  deps: DeliveryDeps,
  row: ConsumerIntentRow,
  check: DeliveryCheck,
): Promise<void> {
  const now = deps.now();
  const next = afterUnverified(row.deliveryAttempts, deps.retry, now);
  const serviceVerified = { ...check.serviceVerified };
  if (next.giveUp) {
    const detail = `no usable answer after ${next.attempts} attempts; last: ${check.serviceVerified.detail}`;
    await toManualReview(deps, row, reasonOf(DELIVERY_UNVERIFIED, detail), {
      serviceVerified,
      deliveryAttempts: next.attempts,
      deliveryNextAttemptAt: null,
    });
    return;
  }
  await updateConsumerIntent(
    deps.db,
    row.intentId,
    'DELIVERY_PENDING',
    { serviceVerified, deliveryAttempts: next.attempts, deliveryNextAttemptAt: next.retryAt },
    now,
  );
}

/** Checks one claimed intent's delivery and moves it; a no-op for any other state or before its next attempt is due. */
export async function advanceDelivery(deps: DeliveryDeps, intentId: string): Promise<void> {
  const row = await getConsumerIntent(deps.db, intentId);
  if (row === null) return;
  if (row.state === 'DELIVERY_VERIFIED') return complete(deps, row, null);
  if (row.state !== 'DELIVERY_PENDING') return;
  const due = row.deliveryNextAttemptAt;
  if (due !== null && due.getTime() > deps.now().getTime()) return;
  const check = await checkDelivery(deliverySubjectOf(row), deps.rdap, () => deps.now());
  crashPoint('after-delivery-check');
  switch (check.outcome) {
    case 'CONFIRMED':
    case 'ATTESTED_ONLY':
    case 'REGISTRY_ONLY':
      return complete(deps, row, check);
    case 'CONTRADICTED':
      return toManualReview(
        deps,
        row,
        reasonOf(DELIVERY_CONTRADICTED, check.serviceVerified.detail),
        {
          serviceVerified: { ...check.serviceVerified },
          deliveryNextAttemptAt: null,
        },
      );
    case 'UNVERIFIED':
      return recordUnverified(deps, row, check);
  }
}
