// The read-side agent tools: detect_duplicate (the duplicate rule's view of the window), get_ledger
// (a policy's window slice; admin, its owner or its consumer session only) and the receipt anchor
// status of a receipt (anchoring/reads.ts). All read the same tables and running totals the preflight reads.
import { AppError } from '../../../core/errors';
import { parseDisplayAmount } from '../../../core/money/amount';
import type { SubgraphContext } from '../../kit';
import { utcDay } from '../day';
import { requirePolicyId, resolveIntent, validIntent } from '../preflight/input';
import { currentPolicy } from '../preflight/policy';
import { readToolWindow } from '../preflight/window';
import type { Json } from '../views';

export async function detectDuplicate(
  ctx: SubgraphContext,
  policyIdRaw: unknown,
  raw: unknown,
  intentHashRaw: unknown,
): Promise<Json> {
  const now = ctx.now();
  const given = raw !== undefined && raw !== null ? validIntent(raw, now) : null;
  const policyId = requirePolicyId(policyIdRaw);
  const intent = given ?? (await resolveIntent(ctx, null, intentHashRaw));
  const none = {
    duplicate: false,
    priorIntentHash: null,
    windowRemainingSec: null,
    matchedOn: [] as string[],
  };
  const policy = await currentPolicy(ctx.db, policyId);
  if (policy === null || policy.rules.duplicates.windowMinutes === 0) return none;
  const window = await readToolWindow(ctx.db, policyId, policy, now);
  const keys = [...policy.rules.duplicates.keys].sort();
  const windowMs = policy.rules.duplicates.windowMinutes * 60_000;
  const same = (prior: (typeof window.recentApproved)[number]): boolean =>
    keys.every((key) => {
      switch (key) {
        case 'amount':
          return prior.amountAtomic === intent.amountAtomic;
        case 'recipient':
          return prior.recipient.toLowerCase() === intent.recipient;
        case 'itemHash':
          return prior.itemHash.toLowerCase() === intent.itemHash;
        default:
          return prior[key] === intent[key];
      }
    });
  // recentApproved is newest first: the newest match leaves the longest window.
  const prior = window.recentApproved.find(
    (candidate) => candidate.approvedAtMs > now.getTime() - windowMs && same(candidate),
  );
  if (prior === undefined) return none;
  return {
    duplicate: true,
    priorIntentHash: prior.intentHash,
    windowRemainingSec: Math.max(
      0,
      Math.ceil((prior.approvedAtMs + windowMs - now.getTime()) / 1000),
    ),
    matchedOn: keys,
  };
}

/** Admin, the policy's owner (policy.policy_owner), or a consumer session bound to it. */
async function requireLedgerReader(ctx: SubgraphContext, policyId: string): Promise<void> {
  const actor = ctx.actor;
  if (actor.kind === 'admin') return;
  if (actor.kind === 'anonymous') throw new AppError('AUTH_REQUIRED');
  if (actor.kind === 'consumer' && actor.policyId === policyId) return;
  if (actor.kind === 'owner') {
    const result = await ctx.db.query<{ owner: string | null }>(
      'SELECT policy.policy_owner($1) AS owner',
      [policyId],
    );
    if (result.rows[0]?.owner?.toLowerCase() === actor.address.toLowerCase()) return;
  }
  throw new AppError('FORBIDDEN', 'This credential may not read this policy’s ledger.');
}

export async function getLedger(ctx: SubgraphContext, policyIdRaw: unknown): Promise<Json> {
  const policyId = requirePolicyId(policyIdRaw);
  await requireLedgerReader(ctx, policyId);
  const now = ctx.now();
  const policy = await currentPolicy(ctx.db, policyId);
  if (policy === null) throw new AppError('POLICY_NOT_FOUND', undefined, { policyId });
  const window = await readToolWindow(ctx.db, policyId, policy, now);
  const budget = parseDisplayAmount(policy.rules.dailyBudget, policy.rules.asset.decimals);
  const used = window.settledTodayAtomic + window.reservedTodayAtomic;
  const remaining = budget > used ? budget - used : 0n;
  return {
    policyId,
    policyVersion: policy.version,
    asOf: now.toISOString(),
    day: utcDay(now),
    asset: {
      network: policy.rules.asset.network,
      token: policy.rules.asset.token,
      symbol: policy.rules.asset.symbol,
      decimals: policy.rules.asset.decimals,
    },
    dailyBudgetAtomic: budget.toString(),
    // What the two sums below cover: the UTC day `day`, or the 24 hours before asOf (docs/engine.md).
    budgetWindow: policy.rules.budgetWindow ?? 'UTC_DAY',
    settledTodayAtomic: window.settledTodayAtomic.toString(),
    reservedTodayAtomic: window.reservedTodayAtomic.toString(),
    effectiveUsageAtomic: used.toString(),
    remainingBudgetAtomic: remaining.toString(),
    callsLastHour: window.approvedCallsLastHour,
    recentIntents: window.recentApproved.map((entry) => ({
      intentHash: entry.intentHash,
      provider: entry.provider,
      capability: entry.capability,
      agentId: entry.agentId,
      amountAtomic: entry.amountAtomic.toString(),
      approvedAt: new Date(entry.approvedAtMs).toISOString(),
    })),
  };
}

export { receiptAnchor } from '../anchoring/reads';
