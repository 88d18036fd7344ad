// preflight_payment's entry: validation, the policyId's one spelling, the stored-intent lookup,
// then the batch queue (batch.ts) on this thread or on the pool's decision thread
// (decisionThread.ts). A preflight is one transaction under a per-policy advisory lock: read the
// policy and its LedgerWindow (window.ts), run the pure engine at the clock read once the lock is
// held (decide.ts), and write decision, trace and receipt, plus a reservation and an approved-call
// record on APPROVED. Concurrent preflights of one policy are serialised by the lock, so they can
// never approve more than the budget; a repeat of an intent whose approval still holds its
// reservation is answered with that approval and never reserves twice.
import type { SubgraphContext } from '../../kit';
import type { Json } from '../views';
import { preflightQueue } from './batch';
import { decisionThreadOf } from './decisionThread';
import { requirePolicyId, resolveIntent, validIntent } from './input';

/** What a preflight needs of its context: the pool, the clock, the key escalation codes are sealed with. */
export type PreflightDeps = Pick<SubgraphContext, 'db' | 'now' | 'sealingKey'>;

/**
 * preflight_payment: on the pool's decision thread when one is attached (the raw arguments cross
 * and the thread runs preflightPaymentHere), else here.
 */
export async function preflightPayment(
  ctx: PreflightDeps,
  policyIdRaw: unknown,
  raw: unknown,
  intentHashRaw: unknown,
): Promise<Json> {
  const thread = decisionThreadOf(ctx.db);
  if (thread === undefined) return preflightPaymentHere(ctx, policyIdRaw, raw, intentHashRaw);
  return thread.submit(
    { policyId: policyIdRaw, intent: raw, intentHash: intentHashRaw },
    ctx.now,
    ctx.sealingKey,
  );
}

/**
 * Validates, looks the intent up if need be, and queues the preflight for its batch on this thread.
 * The clock is read here for validation only; the decision reads it again once the lock is held.
 */
export async function preflightPaymentHere(
  ctx: PreflightDeps,
  policyIdRaw: unknown,
  raw: unknown,
  intentHashRaw: unknown,
): Promise<Json> {
  // Validation first (INTENT_MALFORMED before anything else), then the policyId, then the lookup.
  const given = raw !== undefined && raw !== null ? validIntent(raw, ctx.now()) : null;
  const policyId = requirePolicyId(policyIdRaw);
  const intent = given ?? (await resolveIntent(ctx, null, intentHashRaw));
  return preflightQueue(ctx.db).submit({
    policyId,
    intent,
    given: given !== null,
    clock: () => ctx.now(),
    sealingKey: ctx.sealingKey,
  });
}
