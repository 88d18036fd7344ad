// What a decision reads: the policy (its rules held per version, so the engine's compiled-policy
// cache keeps hitting), the LedgerWindow under the policy's budget window, an owner approval of the
// intent, and the earlier decision a repeated preflight is answered with — one row of
// `intent.preflight_window` (migration 0011), read under the per-policy decision lock. The
// read-side tools read the same sums without the lock (`intent.window_sums`).
import type { PoolClient } from 'pg';
import type {
  LedgerWindow,
  OwnerApproval,
  PolicySnapshot,
  RecentApproval,
} from '../../core/engine';
import { AppError } from '../../core/errors';
import type { SpendIntent } from '../../core/validation/intent';
import type { NormalisedPolicyRules } from '../../core/validation/policy';

export type Db = Pick<PoolClient, 'query'>;
export type Json = Record<string, unknown>;

interface CurrentPolicyRow {
  id: string;
  version: number;
  owner: string;
  status: string;
  policy_hash: string;
  rules: NormalisedPolicyRules;
  expires_at: Date | null;
}

/**
 * A policy version's rules never change (a change is a new version), so the rules object of each
 * policy's latest version seen is kept and reused while the version and hash still match: the
 * engine compiles and integrity-checks a rules object once (milliseconds) and caches the result by
 * object identity, and the preflight does not fetch rules it already holds. Bounded; oldest out first.
 */
export const RULES_CACHE_MAX_ENTRIES = 10_000;
export interface HeldRules {
  readonly version: number;
  readonly policyHash: string;
  readonly rules: NormalisedPolicyRules;
}
const rulesByPolicy = new Map<string, HeldRules>();

/** The rules this process holds for the policy's latest version it has seen, if any. */
export function knownRules(policyId: string): HeldRules | undefined {
  return rulesByPolicy.get(policyId);
}

function heldRules(policyId: string, version: number, policyHash: string): HeldRules | undefined {
  const held = rulesByPolicy.get(policyId);
  return held !== undefined && held.version === version && held.policyHash === policyHash
    ? held
    : undefined;
}

function holdRules(
  policyId: string,
  version: number,
  policyHash: string,
  rules: NormalisedPolicyRules,
): NormalisedPolicyRules {
  const held = heldRules(policyId, version, policyHash);
  if (held !== undefined) return held.rules;
  rulesByPolicy.delete(policyId);
  if (rulesByPolicy.size >= RULES_CACHE_MAX_ENTRIES)
    rulesByPolicy.delete(rulesByPolicy.keys().next().value as string);
  rulesByPolicy.set(policyId, { version, policyHash, rules });
  return rules;
}

export async function currentPolicy(db: Db, policyId: string): Promise<PolicySnapshot | null> {
  const result = await db.query<CurrentPolicyRow>('SELECT * FROM policy.current_policy($1)', [
    policyId,
  ]);
  const row = result.rows[0];
  if (row === undefined) return null;
  return {
    policyId: row.id,
    version: row.version,
    status: row.status as PolicySnapshot['status'],
    policyHash: row.policy_hash as PolicySnapshot['policyHash'],
    rules: holdRules(row.id, row.version, row.policy_hash, row.rules),
    expiresAt: row.expires_at,
  };
}

export function utcDay(now: Date): string {
  return now.toISOString().slice(0, 10);
}

/** The engine's window from the budget window's sums and the approvals a rule may look at. */
function windowOf(
  sums: { settled: string; reserved: string; calls: string },
  recentApproved: RecentApproval[],
  lastApprovedAtMsByProvider: Record<string, number>,
): LedgerWindow {
  return {
    settledTodayAtomic: BigInt(sums.settled),
    reservedTodayAtomic: BigInt(sums.reserved),
    approvedCallsLastHour: Number(sums.calls),
    recentApproved,
    lastApprovedAtMsByProvider,
    // No vendor-score source yet: the policy's vendorRisk.onUnavailable decides.
    vendorScore: null,
  };
}

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

/** The decision, receipt and ACTIVE reservation of an earlier approval of the same intent. */
export interface ReplayRow {
  decision: string;
  policyHash: string | null;
  policyVersion: number | null;
  evaluatedAtMs: number;
  engine: Json;
  ruleTrace: unknown[];
  receiptId: string;
  reservationId: string;
  amount: string;
  asset: string;
  day: string;
  expiresAtMs: number;
}

export interface PreflightWindowRow {
  policy_found: boolean;
  version: number | null;
  status: string | null;
  policy_hash: string | null;
  /** Null when the caller passed the version and hash of the rules it already holds. */
  rules: NormalisedPolicyRules | null;
  expires_at: Date | null;
  settled: string;
  reserved: string;
  calls: string;
  provider_last_at: Date | null;
  /** [intentHash, capability, recipient, amount, itemHash, provider, agentId, endpoint, approvedAtMs] */
  recent: Array<[string, string, string, string, string, string, string, string, number]> | null;
  approval: string | null;
  /** While the lock is held, nothing in this row changes before this instant (migration 0011). */
  valid_until: Date;
  /** Set when this intent's approval still holds an ACTIVE reservation: the answer to a repeat. */
  replay: ReplayRow | null;
}

// A named statement: parsed and planned once per connection.
const PREFLIGHT_WINDOWS = {
  name: 'intent_preflight_windows_v2',
  text: 'SELECT * FROM intent.preflight_windows($1)',
};

export interface PreflightReading {
  policy: PolicySnapshot | null;
  window: LedgerWindow;
  approval: OwnerApproval | null;
}

function policyOf(
  row: PreflightWindowRow,
  policyId: string,
  known: HeldRules | undefined,
): PolicySnapshot | null {
  if (!row.policy_found) return null;
  const version = row.version!;
  const policyHash = row.policy_hash!;
  let rules: NormalisedPolicyRules;
  if (row.rules !== null) {
    rules = holdRules(policyId, version, policyHash, row.rules);
  } else {
    // Withheld only when it matched what we passed; `known` is the object we passed.
    if (known === undefined || known.version !== version || known.policyHash !== policyHash) {
      throw new AppError(
        'INTERNAL_ERROR',
        'Policy rules were withheld for a version this process does not hold.',
      );
    }
    rules = known.rules;
  }
  return {
    policyId,
    version,
    status: row.status as PolicySnapshot['status'],
    policyHash: policyHash as PolicySnapshot['policyHash'],
    rules,
    expiresAt: row.expires_at,
  };
}

/**
 * The engine's inputs from one preflight_window row. `known` is what this process held of the
 * policy's rules when it asked (the row leaves the rules out when they matched).
 */
export function readingOf(
  row: PreflightWindowRow,
  policyId: string,
  intent: SpendIntent,
  known: HeldRules | undefined,
): PreflightReading {
  const recentApproved: RecentApproval[] = (row.recent ?? []).map((entry) => ({
    intentHash: entry[0],
    capability: entry[1],
    recipient: entry[2],
    amountAtomic: BigInt(entry[3]),
    itemHash: entry[4],
    provider: entry[5],
    agentId: entry[6],
    endpoint: entry[7],
    approvedAtMs: entry[8],
  }));
  const lastApprovedAtMsByProvider: Record<string, number> = {};
  if (row.provider_last_at !== null)
    lastApprovedAtMsByProvider[intent.provider] = row.provider_last_at.getTime();
  const window = windowOf(row, recentApproved, lastApprovedAtMsByProvider);
  const approval =
    row.approval === null ? null : { pollRef: row.approval, intentHash: intent.intentHash };
  return { policy: policyOf(row, policyId, known), window, approval };
}

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
 * reads). The window is the raw sums' (intent/test-support.ts rawWindow); the last approved call
 * per provider is read only when rule 9 has a cooldown to check.
 */
export async function lockAndReadPreflight(
  db: Db,
  policyId: string,
  intent: SpendIntent,
  now: Date,
): Promise<PreflightReading> {
  const known = rulesByPolicy.get(policyId);
  const result = await db.query<PreflightWindowRow>({
    ...PREFLIGHT_WINDOWS,
    values: [JSON.stringify([windowItem(policyId, intent, now, known)])],
  });
  return readingOf(result.rows[0]!, policyId, intent, known);
}
