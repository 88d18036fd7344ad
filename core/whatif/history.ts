// What a what-if replays: one past decision of a policy as stored (the intent it judged, its
// outcome and trace, its reservation's fate) and the inputs the engine saw beyond the intent and
// the policy. Inputs are stored with every decision since migration 0023; for older decisions
// they are rebuilt from the stored trace, which records each figure a rule compared. Pure.
import { parseApprovalNote } from '../engine/decisionCodes';
import type { Outcome, PolicyStatus, TraceEntry } from '../engine/types';
import type { SpendIntent } from '../validation/intent';

/** What the engine saw beyond the intent and the policy (intent.decisions.inputs). */
export interface DecisionInputs {
  readonly settledAtomic: bigint;
  readonly reservedAtomic: bigint;
  readonly approvedCallsLastHour: number;
  /** Rule 7's score of the provider, null when none could be obtained. */
  readonly vendorScore: number | null;
  /** The last approved call to the intent's provider (read only while a cooldown is set). */
  readonly providerLastAtMs: number | null;
  /** The unused owner approval the engine was handed, by pollRef. */
  readonly approval: string | null;
  readonly policyStatus: PolicyStatus;
}

/** What became of an approval's reservation: held, then consumed, released or lapsed. */
export interface ReservationFate {
  readonly amountAtomic: bigint;
  readonly expiresAtMs: number;
  /** What the settlement moved and when; null when never consumed. */
  readonly settledAtomic: bigint | null;
  readonly settledAtMs: number | null;
  /** When it was released (left ACTIVE without a settlement); null otherwise. */
  readonly releasedAtMs: number | null;
}

export interface PastDecision {
  readonly intent: SpendIntent;
  readonly decidedAtMs: number;
  /** The intent named the policy and the hash that was current then (rule 1 bound it). */
  readonly boundToPolicy: boolean;
  readonly decision: string;
  readonly outcome: Outcome;
  readonly ruleTrace: readonly TraceEntry[];
  /** Stored with the decision; null for decisions made before inputs were kept. */
  readonly inputs: DecisionInputs | null;
  /** The reservation an APPROVED decision made; null otherwise. */
  readonly reservation: ReservationFate | null;
}

/** An approval before the replayed range, seen only by the duplicate and cooldown rules. */
export interface PriorApproval {
  readonly intent: SpendIntent;
  readonly approvedAtMs: number;
}

const RULE_VENDOR = 6;
const RULE_COOLDOWN = 8;
const RULE_RATE = 9;
const RULE_BUDGET = 12;
const APPROVAL_RULES = [6, 11, 13] as const;

function wholeNumber(text: string | null | undefined): bigint | null {
  return typeof text === 'string' && /^[0-9]+$/.test(text) ? BigInt(text) : null;
}

/**
 * The inputs of a decision made before they were stored, from its own trace: rule 13 observed
 * settled + reserved + amount, rule 10 the calls including this one, rule 7 the score, rule 9 the
 * seconds since the provider's last approved call, rules 7/12/14 the owner approval they used,
 * rule 1 a paused policy. Exact for every figure a rule compared.
 */
export function rebuildInputs(past: PastDecision): DecisionInputs {
  const trace = past.ruleTrace;
  const budget = wholeNumber(trace[RULE_BUDGET]?.observed);
  const calls = wholeNumber(trace[RULE_RATE]?.observed);
  const score = wholeNumber(trace[RULE_VENDOR]?.observed);
  const sinceLast = wholeNumber(trace[RULE_COOLDOWN]?.observed);
  let approval: string | null = null;
  for (const index of APPROVAL_RULES) approval ??= parseApprovalNote(trace[index]?.note ?? null);
  return {
    settledAtomic:
      budget !== null && budget >= past.intent.amountAtomic
        ? budget - past.intent.amountAtomic
        : 0n,
    reservedAtomic: 0n,
    approvedCallsLastHour: calls !== null && calls > 0n ? Number(calls - 1n) : 0,
    vendorScore: score === null ? null : Number(score),
    providerLastAtMs: sinceLast === null ? null : past.decidedAtMs - Number(sinceLast) * 1000,
    approval,
    policyStatus: trace[0]?.note === 'BLOCKED_POLICY_INACTIVE:PAUSED' ? 'PAUSED' : 'ACTIVE',
  };
}

/** The stored form of inputs (JSON: money as decimal strings). */
export function inputsToJson(inputs: DecisionInputs): Record<string, unknown> {
  return {
    settled: inputs.settledAtomic.toString(),
    reserved: inputs.reservedAtomic.toString(),
    calls: inputs.approvedCallsLastHour,
    vendorScore: inputs.vendorScore,
    providerLastAtMs: inputs.providerLastAtMs,
    approval: inputs.approval,
    policyStatus: inputs.policyStatus,
  };
}

/** Stored inputs back, or null when the value is not a stored inputs object. */
export function inputsFromJson(raw: unknown): DecisionInputs | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const value = raw as Record<string, unknown>;
  const settled = wholeNumber(value.settled as string);
  const reserved = wholeNumber(value.reserved as string);
  if (settled === null || reserved === null || typeof value.calls !== 'number') return null;
  return {
    settledAtomic: settled,
    reservedAtomic: reserved,
    approvedCallsLastHour: value.calls,
    vendorScore: typeof value.vendorScore === 'number' ? value.vendorScore : null,
    providerLastAtMs: typeof value.providerLastAtMs === 'number' ? value.providerLastAtMs : null,
    approval: typeof value.approval === 'string' ? value.approval : null,
    policyStatus: value.policyStatus === 'PAUSED' ? 'PAUSED' : 'ACTIVE',
  };
}
