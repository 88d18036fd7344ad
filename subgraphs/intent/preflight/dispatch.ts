// create_spend_intent and preflight_payment's entry: validation, the policyId's one spelling, the
// stored-intent lookup, then the batch queue (preflightBatch.ts) on this thread or the decision
// thread (decisionThread.ts). A preflight is one transaction under a per-policy advisory lock:
// read the policy and its LedgerWindow (preflightWindow.ts), run the pure engine at the clock read
// once the lock is held, and write decision, trace and receipt, plus a reservation and an
// approved-call record on APPROVED. Concurrent preflights of one policy are serialised by the
// lock, so they can never approve more than the budget; a repeat of an intent whose approval still
// holds its reservation is answered with that approval and never reserves twice.
import type { PoolClient } from 'pg';
import { AppError } from '../../core/errors';
import {
  spendIntentToWire,
  validateSpendIntent,
  type SpendIntent,
} from '../../core/validation/intent';
import type { SubgraphContext } from '../kit';
import { decisionThreadOf } from './decisionThread';
import { preflightQueue } from './preflightBatch';
import { currentPolicy, type Json } from './preflightWindow';
import { INTENT_HASH } from './store';

export { dollarQuoted, PREFLIGHT_BATCH_OPTIONS, preflightQueue } from './preflightBatch';
export {
  currentPolicy,
  lockAndReadPreflight,
  readToolWindow,
  recentApprovals,
  RULES_CACHE_MAX_ENTRIES,
  utcDay,
  type Json,
} from './preflightWindow';

type Db = Pick<PoolClient, 'query'>;

/** Advisory lock class of intent decisions (the policy subgraph's write lock uses its own). */
export const INTENT_DECISION_LOCK_CLASS = 0x1a7e;
const POLICY_ID = /^[0-9]{1,78}$/;

export function requirePolicyId(policyId: unknown): string {
  if (policyId === undefined || policyId === null || policyId === '')
    throw new AppError('POLICY_ID_REQUIRED');
  if (typeof policyId !== 'string' || !POLICY_ID.test(policyId)) {
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

export async function lockPolicyDecisions(client: Db, policyId: string): Promise<void> {
  await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [
    INTENT_DECISION_LOCK_CLASS,
    policyId,
  ]);
}

// ---------------------------------------------------------------------------------------------
// create_spend_intent

interface StoredIntent {
  intent_hash: string;
  policy_id: string;
  policy_version: number;
  canonical: Json;
  created_at: Date;
}

async function storeIntent(
  db: Db,
  intent: SpendIntent,
  policyId: string,
  policyVersion: number,
  now: Date,
): Promise<StoredIntent> {
  await db.query(
    `INSERT INTO intent.spend_intents (intent_hash, policy_id, policy_version, agent_id, amount, canonical, created_at)
     VALUES ($1, $2::numeric, $3, $4, $5::numeric, $6, $7)
     ON CONFLICT (intent_hash) DO NOTHING`,
    [
      intent.intentHash,
      policyId,
      policyVersion,
      intent.agentId,
      intent.amountAtomic.toString(),
      JSON.stringify(spendIntentToWire(intent)),
      now,
    ],
  );
  const stored = await readStoredIntent(db, intent.intentHash);
  return stored!;
}

async function readStoredIntent(db: Db, intentHash: string): Promise<StoredIntent | null> {
  const result = await db.query<StoredIntent>(
    `SELECT intent_hash, policy_id::text AS policy_id, policy_version, canonical, created_at FROM intent.spend_intents WHERE intent_hash = $1`,
    [intentHash],
  );
  return result.rows[0] ?? null;
}

export async function createSpendIntent(
  ctx: SubgraphContext,
  policyIdRaw: unknown,
  raw: unknown,
): Promise<Json> {
  const now = ctx.now();
  const intent = validIntent(raw, now);
  const policyId = requirePolicyId(policyIdRaw);
  const policy = await currentPolicy(ctx.db, policyId);
  if (policy === null) throw new AppError('POLICY_NOT_FOUND', undefined, { policyId });
  const stored = await storeIntent(ctx.db, intent, policy.policyId, policy.version, now);
  return {
    intentHash: stored.intent_hash,
    canonicalIntent: stored.canonical,
    policyId: stored.policy_id,
    policyVersion: stored.policy_version,
    onchain: null,
  };
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

// ---------------------------------------------------------------------------------------------
// preflight_payment

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
