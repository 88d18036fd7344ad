// What a preflight, create_spend_intent and the tools take from the caller: the intent
// (validated, INTENT_MALFORMED), the policyId in its one spelling, or a stored intent by its hash
// (INTENT_NOT_FOUND). Checks only; the decision is made under the lock (batch.ts).
import { AppError } from '../../../core/errors';
import { validateSpendIntent, type SpendIntent } from '../../../core/validation/intent';
import type { SubgraphContext } from '../../kit';
import { INTENT_HASH, readStoredIntent } from '../intents/reads';
import { POLICY_ID_PATTERN } from '../../../core/canon/id-shapes';

export function requirePolicyId(policyId: unknown): string {
  if (policyId === undefined || policyId === null || policyId === '')
    throw new AppError('POLICY_ID_REQUIRED');
  if (typeof policyId !== 'string' || !POLICY_ID_PATTERN.test(policyId)) {
    throw new AppError('REQUEST_INVALID', 'policyId must be a uint256 decimal string.', [
      { field: 'policyId', reason: 'must be a uint256 decimal string' },
    ]);
  }
  // One spelling per policy: the lock and the window are keyed by this string, so "007" and "7"
  // must not be two policies (each with its own budget) when current_policy finds the same one.
  return BigInt(policyId).toString();
}

export function validIntent(raw: unknown, now: Date): SpendIntent {
  const result = validateSpendIntent(raw, now);
  if (!result.ok) throw new AppError('INTENT_MALFORMED', undefined, result.errors);
  return result.intent;
}

/** An intent from the body, or one stored earlier by its hash (404 INTENT_NOT_FOUND). */
export async function resolveIntent(
  ctx: Pick<SubgraphContext, 'db' | 'now'>,
  raw: unknown,
  intentHashRaw: unknown,
): Promise<SpendIntent> {
  if (raw !== undefined && raw !== null) return validIntent(raw, ctx.now());
  if (typeof intentHashRaw !== 'string' || intentHashRaw === '') {
    throw new AppError('REQUEST_INVALID', 'Give an intent or an intentHash.', [
      { field: 'intent', reason: 'required (or intentHash)' },
    ]);
  }
  const hash = intentHashRaw.toLowerCase();
  const stored = INTENT_HASH.test(hash) ? await readStoredIntent(ctx.db, hash) : null;
  if (stored === null)
    throw new AppError('INTENT_NOT_FOUND', undefined, { intentHash: intentHashRaw });
  // Re-validated at the instant it was stored, so a deadline that has passed since is the engine's
  // BLOCKED_DEADLINE, not a malformed intent.
  const result = validateSpendIntent(stored.canonical, stored.created_at);
  if (!result.ok) throw new AppError('INTERNAL_ERROR', 'A stored intent no longer validates.');
  return result.intent;
}
