// A FUNDED intent nobody executed: once its quote has expired it can never execute (the gate
// refuses a stale quote), so the worker gives the money back on its own (DECISIONS "Human exits"):
// FUNDED → REFUND_PENDING with the REFUND owed group, reason QUOTE_EXPIRED, one transaction; the
// refund job sends it and moves it to REFUNDED (the owner's REFUNDED notice and the receipt follow
// from those state changes).
import { STATE_REASON, stateReason } from '../../../../core/consumer/reasons';
import { isQuoteFresh } from '../../../../core/consumer/quote';
import { withTransaction } from '../../../../platform/db';
import type { Logger } from '../../../../platform/log';
import type { ConsumerRails } from '../../../kit';
import type { DbPool } from '../../../../platform/db';
import { getConsumerIntent } from '../store';
import { oweRefund } from './failures';
import { quoteOf } from './quoteFields';

/** FUNDED intents whose quote expired by the database's clock (the job checks its own again). */
export const EXPIRED_FUNDED_CLAIM = {
  states: ['FUNDED'],
  where: `quote_expires_at IS NOT NULL AND quote_expires_at <= now()`,
} as const;

export interface ExpiredFundedDeps {
  readonly db: DbPool;
  readonly rails: ConsumerRails;
  readonly log: Logger;
  now(): Date;
}

/** Moves one claimed FUNDED intent whose quote expired to REFUND_PENDING; a no-op otherwise. */
export async function refundExpiredFunded(
  deps: ExpiredFundedDeps,
  intentId: string,
): Promise<void> {
  const now = deps.now();
  const moved = await withTransaction(deps.db, async (client) => {
    const row = await getConsumerIntent(client, intentId, { forUpdate: true });
    if (row === null || row.state !== 'FUNDED' || row.funding === null) return null;
    const quote = quoteOf(row);
    if (isQuoteFresh(quote.expiresAt, now)) return null;
    const detail = `funded, never executed, and quote ${quote.quoteId} expired at ${quote.expiresAt.toISOString()}; refund owed`;
    const reason = stateReason(STATE_REASON.QUOTE_EXPIRED, detail);
    return oweRefund(client, row, deps.rails, now, {}, reason);
  });
  if (moved !== null)
    deps.log.info({ intentId }, 'funded intent never executed: quote expired, refund owed');
}
