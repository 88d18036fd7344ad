// The what-if replay: a draft policy judged against a policy's past intents, in decision order,
// by the engine itself. The window each decision saw is carried forward from the draft's own
// simulated approvals: the stored figures (inputs.ts) adjusted by every approval the draft adds
// (it reserves, then settles as that intent's real reservation did, or in full at once when it
// never had one) and every approval it takes away (its real reservation and settlement no longer
// count). Owner approvals given in history count for the intents they were bound to. Pure.
import { compilePolicy } from '../engine/compile';
import { evaluate } from '../engine/evaluate';
import type {
  LedgerWindow,
  Outcome,
  PolicySnapshot,
  RecentApproval,
  TraceEntry,
} from '../engine/types';
import type { NormalisedPolicyRules } from '../validation/policy';
import type { SpendIntent } from '../validation/intent';
import {
  type DecisionInputs,
  type PastDecision,
  type PriorApproval,
  rebuildInputs,
  type ReservationFate,
} from './history';

const MS_PER_HOUR = 3_600_000;
const MS_PER_DAY = 86_400_000;
const ROLLING_KEY = -1;

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

const NO_RECENT: readonly RecentApproval[] = Object.freeze([]);
const NO_PROVIDER: Readonly<Record<string, number>> = Object.freeze({});

/** One change to the simulated window at an instant: budget sums by approval day, and calls. */
interface WindowEvent {
  readonly atMs: number;
  readonly dayKey: number;
  readonly budget: bigint;
  readonly calls: number;
}

/** A binary min-heap of window events by instant. */
class EventQueue {
  private readonly items: WindowEvent[] = [];

  push(event: WindowEvent): void {
    const items = this.items;
    items.push(event);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (items[parent]!.atMs <= event.atMs) break;
      items[i] = items[parent]!;
      i = parent;
    }
    items[i] = event;
  }

  /** Removes and returns the earliest event at or before `atMs`. */
  popDue(atMs: number): WindowEvent | null {
    const items = this.items;
    if (items.length === 0 || items[0]!.atMs > atMs) return null;
    const top = items[0]!;
    const last = items.pop()!;
    if (items.length > 0) {
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= items.length) break;
        const right = left + 1;
        const child = right < items.length && items[right]!.atMs < items[left]!.atMs ? right : left;
        if (items[child]!.atMs >= last.atMs) break;
        items[i] = items[child]!;
        i = child;
      }
      items[i] = last;
    }
    return top;
  }
}

function dayIndex(ms: number): number {
  return Math.floor(ms / MS_PER_DAY);
}

function dayText(index: number): string {
  return new Date(index * MS_PER_DAY).toISOString().slice(0, 10);
}

function recentOf(intent: SpendIntent, approvedAtMs: number): RecentApproval {
  return {
    intentHash: intent.intentHash,
    capability: intent.capability,
    recipient: intent.recipient,
    amountAtomic: intent.amountAtomic,
    itemHash: intent.itemHash,
    provider: intent.provider,
    agentId: intent.agentId,
    endpoint: intent.endpoint,
    approvedAtMs,
  };
}

/** When a reservation stops counting as reserved: its deadline, settlement or release. */
function activeEndMs(fate: ReservationFate): number {
  return Math.min(
    fate.expiresAtMs,
    fate.settledAtMs ?? Number.POSITIVE_INFINITY,
    fate.releasedAtMs ?? Number.POSITIVE_INFINITY,
  );
}

/** The simulated window: stored figures plus what the draft added minus what it took away. */
class SimulatedWindow {
  private readonly queue = new EventQueue();
  private readonly budgetDelta = new Map<number, bigint>();
  private callsDelta = 0;
  private readonly approvals: RecentApproval[] = [];
  private readonly lastByProvider = new Map<string, number>();
  private readonly activeUntil = new Map<string, number>();

  constructor(
    private readonly rolling: boolean,
    private readonly duplicateWindowMs: number,
    private readonly readStartMs: number,
  ) {}

  /** Applies every change due by `nowMs`. */
  advance(nowMs: number): void {
    for (let event = this.queue.popDue(nowMs); event !== null; event = this.queue.popDue(nowMs))
      this.apply(event);
  }

  private apply(event: WindowEvent): void {
    if (event.budget !== 0n)
      this.budgetDelta.set(event.dayKey, (this.budgetDelta.get(event.dayKey) ?? 0n) + event.budget);
    this.callsDelta += event.calls;
  }

  /** A reservation (and its approved call) counted with `sign` from `atMs` on. */
  count(fate: ReservationFate, atMs: number, sign: 1n | -1n): void {
    const dayKey = this.rolling ? ROLLING_KEY : dayIndex(atMs);
    const calls = sign === 1n ? 1 : -1;
    this.apply({ atMs, dayKey, budget: sign * fate.amountAtomic, calls });
    this.queue.push({ atMs: atMs + MS_PER_HOUR, dayKey, budget: 0n, calls: -calls });
    this.queue.push({
      atMs: Math.max(activeEndMs(fate), atMs),
      dayKey,
      budget: -sign * fate.amountAtomic,
      calls: 0,
    });
    if (fate.settledAtomic !== null && fate.settledAtMs !== null) {
      const settledAt = Math.max(fate.settledAtMs, atMs);
      this.queue.push({ atMs: settledAt, dayKey, budget: sign * fate.settledAtomic, calls: 0 });
      if (this.rolling)
        this.queue.push({
          atMs: settledAt + MS_PER_DAY,
          dayKey,
          budget: -sign * fate.settledAtomic,
          calls: 0,
        });
    }
  }

  /** An approval under the draft, seen from now on by the duplicate and cooldown rules. */
  approve(intent: SpendIntent, atMs: number, fate: ReservationFate | null): void {
    this.approvals.push(recentOf(intent, atMs));
    const last = this.lastByProvider.get(intent.provider);
    if (last === undefined || atMs > last) this.lastByProvider.set(intent.provider, atMs);
    if (fate !== null) this.activeUntil.set(intent.intentHash, activeEndMs(fate));
  }

  /** The draft's approval of this intent still holds its reservation at `nowMs`. */
  holds(intentHash: string, nowMs: number): boolean {
    const until = this.activeUntil.get(intentHash);
    return until !== undefined && until > nowMs;
  }

  windowAt(intent: SpendIntent, nowMs: number, inputs: DecisionInputs): LedgerWindow {
    const key = this.rolling ? ROLLING_KEY : dayIndex(nowMs);
    let last = this.lastByProvider.get(intent.provider);
    if (last === undefined && inputs.providerLastAtMs !== null)
      last = inputs.providerLastAtMs < this.readStartMs ? inputs.providerLastAtMs : undefined;
    const lastByProvider = last === undefined ? NO_PROVIDER : { [intent.provider]: last };
    const budget = inputs.settledAtomic + inputs.reservedAtomic + (this.budgetDelta.get(key) ?? 0n);
    const calls = inputs.approvedCallsLastHour + this.callsDelta;
    return {
      settledTodayAtomic: budget > 0n ? budget : 0n,
      reservedTodayAtomic: 0n,
      approvedCallsLastHour: calls > 0 ? calls : 0,
      recentApproved: this.recent(nowMs),
      lastApprovedAtMsByProvider: lastByProvider,
      vendorScore: inputs.vendorScore,
    };
  }

  /** Approvals inside the draft's duplicate window, newest first (the window read's order). */
  private recent(nowMs: number): readonly RecentApproval[] {
    if (this.duplicateWindowMs === 0) return NO_RECENT;
    const startMs = nowMs - this.duplicateWindowMs;
    let recent: RecentApproval[] | null = null;
    for (let i = this.approvals.length - 1; i >= 0; i -= 1) {
      const approval = this.approvals[i]!;
      if (approval.approvedAtMs <= startMs) break;
      (recent ??= []).push(approval);
    }
    return recent ?? NO_RECENT;
  }
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
function snapshotsOf(policyId: string, rules: NormalisedPolicyRules) {
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
  for (const approval of prior) window.approve(approval.intent, approval.approvedAtMs, null);
  const byIntent = approvalsByIntent(history);
  const before = emptyCounts();
  const after = emptyCounts();
  const days = new Map<number, DaySpend>();
  const decisions: ReplayedDecision[] = [];
  const rebuilt = new Set<string>();

  history.forEach((past, index) => {
    const nowMs = past.decidedAtMs;
    window.advance(nowMs);
    const replayed = replayOne(past, index);
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

  function replayOne(past: PastDecision, index: number): ReplayedDecision {
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
        inputs.approval === null
          ? null
          : { pollRef: inputs.approval, intentHash: intent.intentHash },
    });
    const draftApproved = decision.outcome === 'APPROVED';
    if (draftApproved && !historyApproved) {
      const fate = addedFate(history, byIntent, index, nowMs);
      window.count(fate, nowMs, 1n);
      window.approve(past.intent, nowMs, fate);
    } else if (draftApproved) {
      window.approve(past.intent, nowMs, past.reservation);
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

  return {
    before,
    after,
    byDay: [...days.entries()].sort(([a], [b]) => a - b).map(([, day]) => day),
    decisions,
    rebuiltInputs: [...rebuilt],
  };
}
