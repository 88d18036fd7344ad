// create_spend_intent and preflight_payment. A preflight is one transaction under a per-policy
// advisory lock: read the policy (policy.current_policy), build the LedgerWindow from this
// subgraph's tables, run the pure engine with the injected clock, and write decision, trace and
// receipt, plus a reservation and an approved-call record on APPROVED. Concurrent preflights of one
// policy are serialised by the lock, so they can never approve more than the budget.
import type { PoolClient } from 'pg';
import { newReceiptId, newReservationId } from '../../core/canon/ids';
import { evaluate, type LedgerWindow, type PolicySnapshot, type RecentApproval } from '../../core/engine';
import { AppError } from '../../core/errors';
import { spendIntentToWire, validateSpendIntent, type SpendIntent } from '../../core/validation/intent';
import type { NormalisedPolicyRules } from '../../core/validation/policy';
import { withTransaction } from '../../platform/db/transaction';
import { approvalWasUsed, openEscalation, ownerApprovalFor, type PreflightEscalation, useOwnerApproval } from './escalation';
import type { SubgraphContext } from '../kit';
import { INTENT_HASH } from './store';

type Db = Pick<PoolClient, 'query'>;
export type Json = Record<string, unknown>;

/** Advisory lock class of intent decisions (the policy subgraph's write lock uses its own). */
export const INTENT_DECISION_LOCK_CLASS = 0x1a7e;
const POLICY_ID = /^[0-9]{1,78}$/;

export function requirePolicyId(policyId: unknown): string {
  if (policyId === undefined || policyId === null || policyId === '') throw new AppError('POLICY_ID_REQUIRED');
  if (typeof policyId !== 'string' || !POLICY_ID.test(policyId)) {
    throw new AppError('REQUEST_INVALID', 'policyId must be a uint256 decimal string.', [{ field: 'policyId', reason: 'must be a uint256 decimal string' }]);
  }
  return policyId;
}

export function validIntent(raw: unknown, now: Date): SpendIntent {
  const result = validateSpendIntent(raw, now);
  if (!result.ok) throw new AppError('INTENT_MALFORMED', undefined, result.errors);
  return result.intent;
}

export async function lockPolicyDecisions(client: Db, policyId: string): Promise<void> {
  await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [INTENT_DECISION_LOCK_CLASS, policyId]);
}

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
 * A policy version's rules never change (a change is a new version), so one rules object per
 * (policy, version, hash) is kept and reused: the engine compiles and integrity-checks a rules
 * object once (milliseconds) and caches the result by object identity. Bounded; oldest out first.
 */
export const RULES_CACHE_MAX_ENTRIES = 10_000;
const rulesByVersion = new Map<string, NormalisedPolicyRules>();

function sharedRules(row: CurrentPolicyRow): NormalisedPolicyRules {
  const key = `${row.id}:${row.version}:${row.policy_hash}`;
  const cached = rulesByVersion.get(key);
  if (cached !== undefined) return cached;
  if (rulesByVersion.size >= RULES_CACHE_MAX_ENTRIES) rulesByVersion.delete(rulesByVersion.keys().next().value as string);
  rulesByVersion.set(key, row.rules);
  return row.rules;
}

export async function currentPolicy(db: Db, policyId: string): Promise<PolicySnapshot | null> {
  const result = await db.query<CurrentPolicyRow>('SELECT * FROM policy.current_policy($1)', [policyId]);
  const row = result.rows[0];
  if (row === undefined) return null;
  return {
    policyId: row.id,
    version: row.version,
    status: row.status as PolicySnapshot['status'],
    policyHash: row.policy_hash as PolicySnapshot['policyHash'],
    rules: sharedRules(row),
    expiresAt: row.expires_at,
  };
}

export function utcDay(now: Date): string {
  return now.toISOString().slice(0, 10);
}

/** The window slice of a policy at `now` (read under the lock when it feeds a decision). */
export async function readWindow(db: Db, policyId: string, policy: PolicySnapshot | null, now: Date, provider: string | null): Promise<LedgerWindow> {
  const day = utcDay(now);
  const sums = await db.query<{ settled: string; reserved: string; calls: string }>(
    `SELECT
       (SELECT coalesce(sum(amount), 0)::text FROM intent.reservations
         WHERE policy_id = $1 AND day = $2::date AND state = 'CONSUMED') AS settled,
       (SELECT coalesce(sum(amount), 0)::text FROM intent.reservations
         WHERE policy_id = $1 AND day = $2::date AND state = 'ACTIVE' AND expires_at > $3) AS reserved,
       (SELECT count(*)::text FROM intent.approved_calls
         WHERE policy_id = $1 AND approved_at > $3::timestamptz - interval '1 hour') AS calls`,
    [policyId, day, now],
  );
  const windowMinutes = policy?.rules.duplicates.windowMinutes ?? 0;
  let recentApproved: RecentApproval[] = [];
  if (windowMinutes > 0) {
    const recent = await db.query<{
      intent_hash: string; capability: string; recipient: string; amount: string; item_hash: string;
      provider: string; agent_id: string; endpoint: string; approved_at: Date;
    }>(
      `SELECT intent_hash, capability, recipient, amount::text AS amount, item_hash, provider, agent_id, endpoint, approved_at
         FROM intent.approved_calls
        WHERE policy_id = $1 AND approved_at > $2::timestamptz - make_interval(mins => $3)
        ORDER BY approved_at DESC, decision_id DESC
        LIMIT 100000`,
      [policyId, now, windowMinutes],
    );
    recentApproved = recent.rows.map((row) => ({
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
  const lastApprovedAtMsByProvider: Record<string, number> = {};
  const last = await db.query<{ provider: string; at: Date }>(
    `SELECT provider, max(approved_at) AS at FROM intent.approved_calls
      WHERE policy_id = $1 AND ($2::text IS NULL OR provider = $2) GROUP BY provider`,
    [policyId, provider],
  );
  for (const row of last.rows) lastApprovedAtMsByProvider[row.provider] = row.at.getTime();
  const row = sums.rows[0]!;
  return {
    settledTodayAtomic: BigInt(row.settled),
    reservedTodayAtomic: BigInt(row.reserved),
    approvedCallsLastHour: Number(row.calls),
    recentApproved,
    lastApprovedAtMsByProvider,
    // No vendor-score source yet: the policy's vendorRisk.onUnavailable decides.
    vendorScore: null,
  };
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

async function storeIntent(db: Db, intent: SpendIntent, policyId: string, policyVersion: number, now: Date): Promise<StoredIntent> {
  await db.query(
    `INSERT INTO intent.spend_intents (intent_hash, policy_id, policy_version, agent_id, amount, canonical, created_at)
     VALUES ($1, $2::numeric, $3, $4, $5::numeric, $6, $7)
     ON CONFLICT (intent_hash) DO NOTHING`,
    [intent.intentHash, policyId, policyVersion, intent.agentId, intent.amountAtomic.toString(), JSON.stringify(spendIntentToWire(intent)), now],
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

export async function createSpendIntent(ctx: SubgraphContext, policyIdRaw: unknown, raw: unknown): Promise<Json> {
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
export async function resolveIntent(ctx: SubgraphContext, raw: unknown, intentHashRaw: unknown): Promise<SpendIntent> {
  if (raw !== undefined && raw !== null) return validIntent(raw, ctx.now());
  if (typeof intentHashRaw !== 'string' || intentHashRaw === '') {
    throw new AppError('REQUEST_INVALID', 'Give an intent or an intentHash.', [{ field: 'intent', reason: 'required (or intentHash)' }]);
  }
  const hash = intentHashRaw.toLowerCase();
  const stored = INTENT_HASH.test(hash) ? await readStoredIntent(ctx.db, hash) : null;
  if (stored === null) throw new AppError('INTENT_NOT_FOUND', undefined, { intentHash: intentHashRaw });
  // Re-validated at the instant it was stored, so a deadline that has passed since is the engine's
  // BLOCKED_DEADLINE, not a malformed intent.
  const result = validateSpendIntent(stored.canonical, stored.created_at);
  if (!result.ok) throw new AppError('INTERNAL_ERROR', 'A stored intent no longer validates.');
  return result.intent;
}

// ---------------------------------------------------------------------------------------------
// preflight_payment

export async function preflightPayment(ctx: SubgraphContext, policyIdRaw: unknown, raw: unknown, intentHashRaw: unknown): Promise<Json> {
  const now = ctx.now();
  // Validation first (INTENT_MALFORMED before anything else), then the policyId, then the lookup.
  const given = raw !== undefined && raw !== null ? validIntent(raw, now) : null;
  const policyId = requirePolicyId(policyIdRaw);
  const intent = given ?? (await resolveIntent(ctx, null, intentHashRaw));
  return withTransaction(ctx.db, async (client) => {
    await lockPolicyDecisions(client, policyId);
    const policy = await currentPolicy(client, policyId);
    const window = await readWindow(client, policyId, policy, now, intent.provider);
    const approval = policy === null ? null : await ownerApprovalFor(client, intent.intentHash);
    const decision = evaluate({ intent, policy, window, now, approval });
    // An intent preflighted directly is bound as create_spend_intent would bind it (when its policy exists).
    if (given !== null && policy !== null) await storeIntent(client, intent, policy.policyId, policy.version, now);
    const inserted = await client.query<{ decision_id: string }>(
      `INSERT INTO intent.decisions (intent_hash, policy_id, policy_version, policy_hash, decision, outcome, deciding_rule,
                                     rule_trace, engine, fail_closed_reason, evaluated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING decision_id::text`,
      [
        intent.intentHash, policyId, policy?.version ?? null, policy?.policyHash ?? null, decision.decision, decision.outcome,
        decision.decidingRule, JSON.stringify(decision.ruleTrace), JSON.stringify(decision.engine), decision.failClosedReason, now,
      ],
    );
    const decisionId = inserted.rows[0]!.decision_id;
    const receiptId = newReceiptId();
    await client.query(
      `INSERT INTO intent.decision_receipts (receipt_id, decision_id, intent_hash, state, created_at) VALUES ($1, $2, $3, 'PENDING', $4)`,
      [receiptId, decisionId, intent.intentHash, now],
    );
    if (approvalWasUsed(decision, approval)) await useOwnerApproval(client, approval, now);
    let escalation: PreflightEscalation | null = null;
    if (decision.outcome === 'ESCALATED' && policy !== null) {
      if (ctx.sealingKey === undefined) throw new AppError('INTERNAL_ERROR', 'No sealing key for escalation codes.');
      escalation = await openEscalation(client, { intent, policy, decision, sealingKey: ctx.sealingKey, now });
    }
    let reservation: Json | null = null;
    if (decision.outcome === 'APPROVED' && policy !== null) {
      const reservationId = newReservationId();
      const expiresAt = new Date(intent.deadlineUnixSeconds * 1000);
      const asset = `${policy.rules.asset.network}/erc20:${policy.rules.asset.token}`;
      await client.query(
        `INSERT INTO intent.reservations (reservation_id, decision_id, intent_hash, policy_id, amount, asset, day, state, expires_at, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5::numeric, $6, $7::date, 'ACTIVE', $8, $9, $9)`,
        [reservationId, decisionId, intent.intentHash, policyId, intent.amountAtomic.toString(), asset, utcDay(now), expiresAt, now],
      );
      await client.query(
        `INSERT INTO intent.approved_calls (decision_id, policy_id, intent_hash, provider, agent_id, capability, recipient, amount, item_hash, endpoint, approved_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8::numeric, $9, $10, $11)`,
        [decisionId, policyId, intent.intentHash, intent.provider, intent.agentId, intent.capability, intent.recipient,
          intent.amountAtomic.toString(), intent.itemHash, intent.endpoint, now],
      );
      reservation = {
        reservationId,
        state: 'ACTIVE',
        amountAtomic: intent.amountAtomic.toString(),
        asset,
        day: utcDay(now),
        expiresAt: expiresAt.toISOString(),
      };
    }
    return {
      decision: decision.decision,
      intentHash: intent.intentHash,
      policyId,
      policyHash: policy?.policyHash ?? null,
      policyVersion: policy?.version ?? null,
      evaluatedAt: now.toISOString(),
      engine: decision.engine,
      ruleTrace: decision.ruleTrace,
      reservation,
      escalation,
      receiptId,
    };
  });
}
