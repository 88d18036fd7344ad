// The window a what-if carries forward: the stored figures of each past decision, plus what the
// draft approved that history did not, minus what history approved that the draft did not, as
// timed changes (a reservation counts until its deadline, settlement or release; a settlement
// by approval day, or for 24 hours; an approved call for an hour); and the draft's own approvals
// for the duplicate and cooldown rules. Pure.
import type { LedgerWindow, RecentApproval } from '../engine/types';
import type { SpendIntent } from '../validation/intent';
import type { DecisionInputs, ReservationFate } from './history';

const MS_PER_HOUR = 3_600_000;
const MS_PER_DAY = 86_400_000;
const ROLLING_KEY = -1;
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

export function dayIndex(ms: number): number {
  return Math.floor(ms / MS_PER_DAY);
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
export class SimulatedWindow {
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
  recordApproval(intent: SpendIntent, atMs: number, fate: ReservationFate | null): void {
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
