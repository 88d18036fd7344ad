// What a decision reads besides the policy: the LedgerWindow under the policy's budget window, an
// owner approval of the intent and the earlier decision a repeated preflight is answered with, one
// row of `intent.preflight_windows` (migration 0011) read under the per-policy decision lock. The
// read-side tools read the same sums without the lock (`intent.window_sums`).
import type { LedgerWindow, PolicySnapshot, RecentApproval } from '../../../core/engine';
import type { SpendIntent } from '../../../core/validation/intent';
import type { Db } from '../../../platform/db';
import { utcDay } from '../day';
import type { Json } from '../views';
import { readingOf, windowOf, type PreflightReading, type PreflightWindowRow } from './decide';
import { policyOf } from './policy';
import { knownRules, type HeldRules } from './rulesCache';

/** The policy's approved calls of the last `windowMinutes` before `now`, newest first (at most 100,000). */
export async function recentApprovals(
  db: Db,
  policyId: string,
  now: Date,
  windowMinutes: number,
): Promise<RecentApproval[]> {
  const recent = await db.query<{
    intent_hash: string;
    capability: string;
    recipient: string;
    amount: string;
    item_hash: string;
    provider: string;
    agent_id: string;
    endpoint: string;
    approved_at: Date;
  }>(
    `SELECT intent_hash, capability, recipient, amount::text AS amount, item_hash, provider, agent_id, endpoint, approved_at
       FROM intent.approved_calls
      WHERE policy_id = $1 AND approved_at > $2::timestamptz - make_interval(mins => $3)
      ORDER BY approved_at DESC, decision_id DESC
      LIMIT 100000`,
    [policyId, now, windowMinutes],
  );
  return recent.rows.map((row) => ({
    intentHash: row.intent_hash,
    capability: row.capability,
    recipient: row.recipient,
    amountAtomic: BigInt(row.amount),
    itemHash: row.item_hash,
    provider: row.provider,
    agentId: row.agent_id,
    endpoint: row.endpoint,
    approvedAtMs: row.approved_at.getTime(),
  }));
}

/**
 * The window slice the read-side tools show (get_ledger, detect_duplicate), without the decision
 * lock: the three sums under the policy's budget window (intent.window_sums, the statements
 * intent.preflight_window runs) and, when the policy has a duplicate window, the approved calls
 * inside it, newest first. The last approval per provider (rule 9) is left out: no tool shows it.
 */
export async function readToolWindow(
  db: Db,
  policyId: string,
  policy: PolicySnapshot | null,
  now: Date,
): Promise<LedgerWindow> {
  const sums = await db.query<{ settled: string; reserved: string; calls: string }>(
    'SELECT settled, reserved, calls::text AS calls FROM intent.window_sums($1, $2::date, $3, $4)',
    [policyId, utcDay(now), now, policy?.rules.budgetWindow ?? 'UTC_DAY'],
  );
  const windowMinutes = policy?.rules.duplicates.windowMinutes ?? 0;
  const recentApproved =
    windowMinutes > 0 ? await recentApprovals(db, policyId, now, windowMinutes) : [];
  return windowOf(sums.rows[0]!, recentApproved, {});
}

// An unnamed statement: no prepared statement outlives it, so it runs behind PgBouncer in
// transaction mode (test/architecture/sessionState.test.ts).
const PREFLIGHT_WINDOWS = {
  text: 'SELECT * FROM intent.preflight_windows($1)',
};

/** One element of intent.preflight_windows' argument; `known` is the rules this process holds. */
export function windowItem(
  policyId: string,
  intent: SpendIntent,
  now: Date,
  known: HeldRules | undefined,
): Json {
  return {
    policyId,
    intentHash: intent.intentHash,
    now: now.toISOString(),
    day: utcDay(now),
    provider: intent.provider,
    knownVersion: known?.version ?? null,
    knownHash: known?.policyHash ?? null,
  };
}

/**
 * Takes the per-policy decision lock and reads, in one call, the policy, the window at `now` and
 * an unused owner approval of this intent (a one-item `intent.preflight_windows`, what a batch
 * reads). The window is the raw sums' (subgraphs/intent/test-support.ts rawWindow); the last approved call
 * per provider is read only when rule 9 has a cooldown to check.
 */
export async function lockAndReadPreflight(
  db: Db,
  policyId: string,
  intent: SpendIntent,
  now: Date,
): Promise<PreflightReading> {
  const known = knownRules(policyId);
  const result = await db.query<PreflightWindowRow>({
    ...PREFLIGHT_WINDOWS,
    values: [JSON.stringify([windowItem(policyId, intent, now, known)])],
  });
  const row = result.rows[0]!;
  return readingOf(row, intent, policyOf(row, policyId, known));
}
