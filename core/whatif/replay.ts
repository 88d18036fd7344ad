// The what-if replay: a draft policy judged against a policy's past intents, in decision order,
// by the engine itself. The window each decision saw is carried forward from the draft's own
// simulated approvals: the stored figures (inputs.ts) adjusted by every approval the draft adds
// (it reserves, then settles as that intent's real reservation did, or in full at once when it
// never had one) and every approval it takes away (its real reservation and settlement no longer
// count). Owner approvals given in history count for the intents they were bound to. Pure.
import { compilePolicy } from '../engine/compile';
import { evaluate } from '../engine/evaluate';
import type { Outcome, PolicySnapshot, TraceEntry } from '../engine/types';
import type { NormalisedPolicyRules } from '../validation/policy';
import { dayIndex, SimulatedWindow } from './window';
import {
  type PastDecision,
  type PriorApproval,
  rebuildInputs,
  type ReservationFate,
} from './history';

const MS_PER_DAY = 86_400_000;

export interface ReplayedDecision {
  readonly intentHash: string;
  readonly decidedAtMs: number;
  readonly before: { readonly decision: string; readonly outcome: Outcome };
  readonly after: {
    readonly decision: string;
    readonly outcome: Outcome;
    readonly decidingRule: string | null;
    readonly ruleTrace: readonly TraceEntry[];
  };
  /** The inputs were rebuilt from the stored trace (decided before inputs were kept). */
  readonly rebuilt: boolean;
  /** Under the draft this intent still held its earlier approval: answered by it, nothing new. */
  readonly repeat: boolean;
}

export interface OutcomeCounts {
  approved: number;
  escalated: number;
  blocked: number;
  /** What the approvals authorised, atomic. */
  spendAtomic: bigint;
}

export interface DaySpend {
  readonly day: string;
  spendBeforeAtomic: bigint;
  spendAfterAtomic: bigint;
}

export interface WhatIfResult {
  readonly before: OutcomeCounts;
  readonly after: OutcomeCounts;
  readonly byDay: readonly DaySpend[];
  /** The decisions the draft decides otherwise (every one with `everyDecision`), in decision order. */
  readonly decisions: readonly ReplayedDecision[];
  /** Distinct intent hashes whose decisions were replayed with rebuilt inputs. */
  readonly rebuiltInputs: readonly string[];
}

export interface WhatIfInput {
  readonly policyId: string;
  /** The draft's normalised rules (validatePolicy's answer). */
  readonly draft: NormalisedPolicyRules;
  /** The policy's decisions to replay, in decision order. */
  readonly history: readonly PastDecision[];
  /** Approvals just before the first replayed decision (duplicate and cooldown look-back). */
  readonly prior?: readonly PriorApproval[];
  /** Answer every replayed decision, not only the changed ones (tests). */
  readonly everyDecision?: boolean;
}

/** Index of each past approval's decision by intent hash, for borrowing its reservation's fate. */
function approvalsByIntent(history: readonly PastDecision[]): Map<string, number[]> {
  const byIntent = new Map<string, number[]>();
  history.forEach((past, index) => {
    if (past.reservation === null) return;
    const list = byIntent.get(past.intent.intentHash);
    if (list === undefined) byIntent.set(past.intent.intentHash, [index]);
    else list.push(index);
  });
  return byIntent;
}

/** The fate of a reservation the draft adds: the one this intent really had later, or settled in full at once. */
function addedFate(
  history: readonly PastDecision[],
  byIntent: Map<string, number[]>,
  index: number,
  atMs: number,
): ReservationFate {
  const intent = history[index]!.intent;
  const later = byIntent.get(intent.intentHash)?.find((other) => other > index);
  const expiresAtMs = intent.deadlineUnixSeconds * 1000;
  if (later !== undefined) return { ...history[later]!.reservation!, expiresAtMs };
  return {
    amountAtomic: intent.amountAtomic,
    expiresAtMs,
    settledAtomic: intent.amountAtomic,
    settledAtMs: atMs,
    releasedAtMs: null,
  };
}

function dayText(index: number): string {
  return new Date(index * MS_PER_DAY).toISOString().slice(0, 10);
}

function emptyCounts(): OutcomeCounts {
  return { approved: 0, escalated: 0, blocked: 0, spendAtomic: 0n };
}

function tally(counts: OutcomeCounts, outcome: Outcome, spendAtomic: bigint): void {
  if (outcome === 'APPROVED') counts.approved += 1;
  else if (outcome === 'ESCALATED') counts.escalated += 1;
  else counts.blocked += 1;
  counts.spendAtomic += spendAtomic;
}

/** The draft as the snapshot the engine takes, its status as the policy's was at that decision. */
export function snapshotsOf(policyId: string, rules: NormalisedPolicyRules) {
  const { policyHash } = compilePolicy(rules);
  const expiresAt = rules.expiresAt === null ? null : Date.parse(rules.expiresAt);
  const make = (status: 'ACTIVE' | 'PAUSED'): PolicySnapshot => ({
    policyId,
    version: 1,
    status,
    policyHash,
    rules,
    expiresAt,
  });
  return { policyHash, active: make('ACTIVE'), paused: make('PAUSED') };
}

interface Run {
  readonly window: SimulatedWindow;
  readonly snapshots: ReturnType<typeof snapshotsOf>;
  readonly history: readonly PastDecision[];
  readonly byIntent: Map<string, number[]>;
  readonly rebuilt: Set<string>;
}

/** One past decision under the draft, the simulated window moved by its outcome. */
function replayOne(run: Run, past: PastDecision, index: number): ReplayedDecision {
  const { window, snapshots, history, byIntent, rebuilt } = run;
  const nowMs = past.decidedAtMs;
  const base = {
    intentHash: past.intent.intentHash,
    decidedAtMs: nowMs,
    before: { decision: past.decision, outcome: past.outcome },
  };
  if (past.ruleTrace.length === 0) {
    // Failed closed before any rule: nothing the engine compared to replay against.
    const after = { ...base.before, decidingRule: null, ruleTrace: past.ruleTrace };
    return { ...base, after, rebuilt: false, repeat: false };
  }
  const historyApproved = past.outcome === 'APPROVED' && past.reservation !== null;
  if (window.holds(past.intent.intentHash, nowMs)) {
    // The draft approved this intent earlier and its reservation still holds: the service
    // answers a repeat with that approval and writes nothing.
    if (historyApproved) window.count(past.reservation!, nowMs, -1n);
    const after = {
      decision: 'APPROVED',
      outcome: 'APPROVED' as const,
      decidingRule: null,
      ruleTrace: past.ruleTrace,
    };
    return { ...base, after, rebuilt: past.inputs === null, repeat: true };
  }
  const inputs = past.inputs ?? rebuildInputs(past);
  if (past.inputs === null) rebuilt.add(past.intent.intentHash);
  const intent =
    past.boundToPolicy && past.intent.policyHash !== snapshots.policyHash
      ? { ...past.intent, policyHash: snapshots.policyHash }
      : past.intent;
  const decision = evaluate({
    intent,
    policy: inputs.policyStatus === 'PAUSED' ? snapshots.paused : snapshots.active,
    window: window.windowAt(intent, nowMs, inputs),
    now: nowMs,
    approval:
      inputs.approval === null ? null : { pollRef: inputs.approval, intentHash: intent.intentHash },
  });
  const draftApproved = decision.outcome === 'APPROVED';
  if (draftApproved && !historyApproved) {
    const fate = addedFate(history, byIntent, index, nowMs);
    window.count(fate, nowMs, 1n);
    window.recordApproval(past.intent, nowMs, fate);
  } else if (draftApproved) {
    window.recordApproval(past.intent, nowMs, past.reservation);
  } else if (historyApproved) {
    window.count(past.reservation!, nowMs, -1n);
  }
  const after = {
    decision: decision.decision,
    outcome: decision.outcome,
    decidingRule: decision.decidingRule,
    ruleTrace: decision.ruleTrace,
  };
  return { ...base, after, rebuilt: past.inputs === null, repeat: false };
}

export function replayPolicy(input: WhatIfInput): WhatIfResult {
  const { history, draft } = input;
  const compiled = compilePolicy(draft);
  const snapshots = snapshotsOf(input.policyId, draft);
  const prior = input.prior ?? [];
  const readStartMs = Math.min(
    prior[0]?.approvedAtMs ?? Number.POSITIVE_INFINITY,
    history[0]?.decidedAtMs ?? Number.POSITIVE_INFINITY,
  );
  const window = new SimulatedWindow(
    compiled.budgetWindow === 'ROLLING_24H',
    compiled.duplicateWindowMs,
    readStartMs,
  );
  for (const approval of prior) window.recordApproval(approval.intent, approval.approvedAtMs, null);
  const byIntent = approvalsByIntent(history);
  const rebuilt = new Set<string>();
  const run: Run = { window, snapshots, history, byIntent, rebuilt };
  const before = emptyCounts();
  const after = emptyCounts();
  const days = new Map<number, DaySpend>();
  const decisions: ReplayedDecision[] = [];

  history.forEach((past, index) => {
    const nowMs = past.decidedAtMs;
    window.advance(nowMs);
    const replayed = replayOne(run, past, index);
    if (input.everyDecision === true || replayed.after.decision !== past.decision)
      decisions.push(replayed);
    const spendBefore = past.outcome === 'APPROVED' ? past.intent.amountAtomic : 0n;
    const spendAfter =
      replayed.after.outcome === 'APPROVED' && !replayed.repeat ? past.intent.amountAtomic : 0n;
    tally(before, past.outcome, spendBefore);
    tally(after, replayed.after.outcome, spendAfter);
    const key = dayIndex(nowMs);
    let day = days.get(key);
    if (day === undefined) {
      day = { day: dayText(key), spendBeforeAtomic: 0n, spendAfterAtomic: 0n };
      days.set(key, day);
    }
    day.spendBeforeAtomic += spendBefore;
    day.spendAfterAtomic += spendAfter;
  });

  return {
    before,
    after,
    byDay: [...days.entries()].sort(([a], [b]) => a - b).map(([, day]) => day),
    decisions,
    rebuiltInputs: [...rebuilt],
  };
}
