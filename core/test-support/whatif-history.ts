// A policy's history made the way the service makes it, for the what-if tests and bench: intents
// arrive over days, each decided by the engine with the window the intent subgraph would read
// (reservations by approval day or rolling 24 h, approved calls, recent approvals, the
// provider's last call), escalations granted by the owner and re-preflighted, reservations that
// settle in full or in part, are released or expire. Deterministic for a seed. Test support only.
import { evaluate } from '../engine/evaluate';
import type { LedgerWindow, PolicySnapshot, RecentApproval } from '../engine/types';
import type { DecisionInputs, PastDecision, ReservationFate } from '../whatif/history';
import type { SpendIntent } from '../validation/intent';
import { policyDocument, recentApprovalOf, rulesOf, snapshotOf } from './spend-fixtures';

/** The policy the what-if tests replay histories under: every rule that can refuse is in play. */
export function whatIfPolicy(overrides: Record<string, unknown> = {}): PolicySnapshot {
  return snapshotOf(
    rulesOf(
      policyDocument({
        dailyBudget: '12.00',
        perCallCap: '2.00',
        onPerCallCapExceeded: 'ESCALATE',
        hardCap: '3.00',
        escalateAbove: '1.00',
        categories: { allow: ['market-data', 'research'], deny: [] },
        vendorRisk: { minScore: 50, onBelow: 'ESCALATE', onUnavailable: 'ALLOW' },
        duplicates: { windowMinutes: 30, keys: ['itemHash', 'amount'] },
        cooldowns: { sameServiceMinutes: 2 },
        rateLimit: { callsPerHour: 20 },
        maxDeadlineMinutes: 180,
        expiresAt: '2027-12-31T00:00:00Z',
        ...overrides,
      }),
    ),
  );
}

const MS_PER_HOUR = 3_600_000;
const MS_PER_DAY = 86_400_000;

export interface HistoryOptions {
  readonly seed: number;
  readonly decisions: number;
  readonly startMs: number;
  /** Mean seconds between two preflights. */
  readonly meanGapSeconds: number;
  readonly categories: readonly string[];
  readonly amounts: readonly bigint[];
  /** Share (0–1) of decisions stored without inputs (made before inputs were kept). */
  readonly withoutInputs: number;
}

/** mulberry32: a small seeded generator, so a failing seed replays exactly. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Reservation extends ReservationFate {
  readonly intentHash: string;
  readonly approvedAtMs: number;
}

const hex64 = (n: number, salt: number) =>
  `0x${salt.toString(16).padStart(8, '0')}${n.toString(16).padStart(56, '0')}`;

/** The window the intent subgraph reads at `nowMs` (docs/engine.md "The budget window"). */
function windowAt(
  policy: PolicySnapshot,
  reservations: readonly Reservation[],
  approvals: readonly RecentApproval[],
  intent: SpendIntent,
  nowMs: number,
  vendorScore: number | null,
): LedgerWindow {
  const rolling = policy.rules.budgetWindow === 'ROLLING_24H';
  const day = Math.floor(nowMs / MS_PER_DAY);
  let settled = 0n;
  let reserved = 0n;
  for (const r of reservations) {
    const sameDay = Math.floor(r.approvedAtMs / MS_PER_DAY) === day;
    const settledNow = r.settledAtMs !== null && r.settledAtMs <= nowMs;
    if (settledNow && (rolling ? r.settledAtMs! > nowMs - MS_PER_DAY : sameDay))
      settled += r.settledAtomic!;
    const active =
      !settledNow &&
      (r.releasedAtMs === null || r.releasedAtMs > nowMs) &&
      r.expiresAtMs > nowMs &&
      (rolling || sameDay);
    if (active) reserved += r.amountAtomic;
  }
  const windowMs = policy.rules.duplicates.windowMinutes * 60_000;
  const recent: RecentApproval[] = [];
  let calls = 0;
  const last: Record<string, number> = {};
  for (let i = approvals.length - 1; i >= 0; i -= 1) {
    const a = approvals[i]!;
    if (a.approvedAtMs > nowMs - MS_PER_HOUR) calls += 1;
    if (windowMs > 0 && a.approvedAtMs > nowMs - windowMs) recent.push(a);
    if (a.provider === intent.provider && !(a.provider in last)) last[a.provider] = a.approvedAtMs;
  }
  return {
    settledTodayAtomic: settled,
    reservedTodayAtomic: reserved,
    approvedCallsLastHour: calls,
    recentApproved: recent,
    lastApprovedAtMsByProvider: policy.rules.cooldowns.sameServiceMinutes > 0 ? last : {},
    vendorScore,
  };
}

/** A generated history of `policy`, every decision made by the engine as the service makes it. */
export function generateHistory(
  policy: PolicySnapshot,
  template: SpendIntent,
  options: HistoryOptions,
): PastDecision[] {
  const next = random(options.seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const providers = ['a.example', 'b.example', 'c.example', 'd.example'];
  const scores: Record<string, number | null> = {
    'a.example': 90,
    'b.example': 40,
    'c.example': null,
    'd.example': 75,
  };
  const history: PastDecision[] = [];
  const reservations: Reservation[] = [];
  const approvals: RecentApproval[] = [];
  const grants = new Map<string, string>();
  const waiting: SpendIntent[] = [];
  let nowMs = options.startMs;
  let made = 0;
  let grantNo = 0;
  while (history.length < options.decisions) {
    nowMs += Math.floor(next() * 2 * options.meanGapSeconds * 1000);
    let intent: SpendIntent;
    const retry = waiting.length > 0 && next() < 0.5 ? waiting.shift()! : null;
    if (retry !== null && retry.deadlineUnixSeconds * 1000 > nowMs) intent = retry;
    else {
      made += 1;
      intent = {
        ...template,
        category: pick(options.categories),
        provider: pick(providers),
        amountAtomic: pick(options.amounts),
        itemHash: hex64(Math.floor(next() * 40), 1) as `0x${string}`,
        deadlineUnixSeconds: Math.floor(nowMs / 1000) + 60 + Math.floor(next() * 7200),
        intentHash: hex64(made, options.seed & 0xffff) as `0x${string}`,
      };
    }
    // A repeat of an intent whose approval still holds its reservation writes no decision.
    const holding = reservations.some(
      (r) =>
        r.intentHash === intent.intentHash &&
        r.expiresAtMs > nowMs &&
        (r.settledAtMs === null || r.settledAtMs > nowMs) &&
        (r.releasedAtMs === null || r.releasedAtMs > nowMs),
    );
    if (holding) continue;
    const window = windowAt(
      policy,
      reservations,
      approvals,
      intent,
      nowMs,
      scores[intent.provider]!,
    );
    const grant = grants.get(intent.intentHash) ?? null;
    const approval = grant === null ? null : { pollRef: grant, intentHash: intent.intentHash };
    const decision = evaluate({ intent, policy, window, now: nowMs, approval });
    let reservation: Reservation | null = null;
    if (decision.outcome === 'APPROVED') {
      if (grant !== null) grants.delete(intent.intentHash);
      const expiresAtMs = intent.deadlineUnixSeconds * 1000;
      const afterMs = nowMs + 1000 + Math.floor(next() * (expiresAtMs - nowMs - 1000));
      const fate = next();
      const settles = fate < 0.6 && afterMs < expiresAtMs;
      reservation = {
        intentHash: intent.intentHash,
        approvedAtMs: nowMs,
        amountAtomic: intent.amountAtomic,
        expiresAtMs,
        settledAtomic: settles
          ? fate < 0.4
            ? intent.amountAtomic
            : intent.amountAtomic - intent.amountAtomic / 3n
          : null,
        settledAtMs: settles ? afterMs : null,
        releasedAtMs: fate >= 0.6 && fate < 0.8 ? afterMs : null,
      };
      reservations.push(reservation);
      approvals.push(recentApprovalOf(intent, nowMs));
    } else if (decision.outcome === 'ESCALATED' && next() < 0.7) {
      grantNo += 1;
      grants.set(intent.intentHash, `esc_${grantNo.toString(16).padStart(24, '0')}`);
      waiting.push(intent);
    }
    const inputs: DecisionInputs = {
      settledAtomic: window.settledTodayAtomic,
      reservedAtomic: window.reservedTodayAtomic,
      approvedCallsLastHour: window.approvedCallsLastHour,
      vendorScore: window.vendorScore,
      providerLastAtMs: window.lastApprovedAtMsByProvider[intent.provider] ?? null,
      approval: approval?.pollRef ?? null,
      policyStatus: policy.status,
    };
    history.push({
      intent,
      decidedAtMs: nowMs,
      boundToPolicy: true,
      decision: decision.decision,
      outcome: decision.outcome,
      ruleTrace: decision.ruleTrace,
      inputs: next() < options.withoutInputs ? null : inputs,
      reservation,
    });
  }
  return history;
}
