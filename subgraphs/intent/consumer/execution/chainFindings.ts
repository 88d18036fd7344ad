// The reconciler: for every MANUAL_REVIEW intent parked as PAYMENT_AMBIGUOUS with a signed
// authorization, it reads chain truth on the settlement rail and records it as
// `resolution.chainFinding`: PAID {txHash, blockNumber} when the authorization's nonce was used
// by the expected transfer, NOT_PAID {checkedAt} once the chain's clock is past validBefore with
// the nonce unused (it can never pay), OPEN otherwise. It decides nothing: an admin resolves
// (resolve.ts), checked against the same reading.
import type { DbPool } from '../../../../platform/db';
import type { ConsumerRails } from '../../../kit';
import { type ConsumerIntentRow } from '../store';
import { updateConsumerIntent } from '../transition';
import { type AuthorizationToCheck, type ChainFinding, findAuthorization } from './chainTruth';
import { AMBIGUOUS_REASON } from './failures';
import { quoteOf } from './quoteFields';

/** SQL condition (no parameters) of an intent the reconciler still has to read. */
export const RECONCILE_WHERE = `state_reason_code = '${AMBIGUOUS_REASON}'
  AND settlement ? 'authorization'
  AND coalesce(resolution->'chainFinding'->>'status', 'OPEN') = 'OPEN'`;

/** The authorization an ambiguous intent signed, as the chain check needs it; null without one. */
export function authorizationToCheck(
  row: ConsumerIntentRow,
  rails: ConsumerRails,
): AuthorizationToCheck | null {
  const { nonce, validBefore } = row.settlement?.authorization ?? {};
  // A uint64 deadline at most (the schema allows any atomic decimal).
  if (nonce === undefined || validBefore === undefined || validBefore.length > 20) return null;
  const quote = quoteOf(row);
  return {
    from: rails.settlement.treasury,
    to: quote.payTo,
    value: quote.providerCost,
    nonce,
    validBefore: BigInt(validBefore),
    fromBlock: BigInt(row.settlement?.fromBlock ?? '0'),
  };
}

/** Reads the chain for one intent and records the finding; returns it (null: nothing to read). */
export async function reconcileIntent(
  db: DbPool,
  row: ConsumerIntentRow,
  rails: ConsumerRails,
  now: Date,
): Promise<ChainFinding | null> {
  if (row.state !== 'MANUAL_REVIEW') return null;
  const authorization = authorizationToCheck(row, rails);
  if (authorization === null) return null;
  const finding = await findAuthorization(rails.settlement, authorization, now);
  // Still OPEN as recorded: nothing changed, so neither the intent nor its receipt is rewritten
  // (its checkedAt stays the first reading that found it open).
  const recorded = row.resolution?.chainFinding as ChainFinding | undefined;
  if (finding.status === 'OPEN' && recorded?.status === 'OPEN') return recorded;
  await updateConsumerIntent(
    db,
    row.intentId,
    'MANUAL_REVIEW',
    { resolution: { ...(row.resolution ?? {}), chainFinding: finding } },
    now,
  );
  return finding;
}
