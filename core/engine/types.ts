// The engine's vocabulary: what it is given (intent, policy snapshot, ledger window, approval,
// now) and what it answers (a decision with a full rule trace). Money is bigint on the way in
// and atomic decimal strings on the way out, so a decision serialises to JSON unchanged.
import type { Hex } from 'viem';
import type { SpendIntent } from '../validation/intent';
import type { NormalisedPolicyRules } from '../validation/policy';
import type { CompiledPolicy } from './compile';
import type { ApprovalNote, DecisionCode, Outcome } from './decisionCodes';

export type {
  ApprovalNote,
  BlockCode,
  DecisionCode,
  DecisionNote,
  EscalateCode,
  Outcome,
} from './decisionCodes';

export type PolicyStatus = 'ACTIVE' | 'PAUSED';

/** One stored version of a policy, as the policy subgraph hands it over. */
export interface PolicySnapshot {
  readonly policyId: string;
  readonly version: number;
  readonly status: PolicyStatus;
  /** Must equal hashJson(rules); the engine checks and fails closed otherwise. */
  readonly policyHash: Hex;
  readonly rules: NormalisedPolicyRules;
  /** The stored copy of rules.expiresAt (Date or unix ms); must agree with it. */
  readonly expiresAt: Date | number | null;
}

/** An approved intent still inside the duplicate window, with every duplicate-key field. */
export interface RecentApproval {
  readonly intentHash: string;
  readonly capability: string;
  readonly recipient: string;
  readonly amountAtomic: bigint;
  readonly itemHash: string;
  readonly provider: string;
  readonly agentId: string;
  readonly endpoint: string;
  readonly approvedAtMs: number;
}

/**
 * The spend already on the books, read under the per-policy lock. "Today" is the UTC day of
 * `now`; reservations are the active ones only. The caller filters; the engine only checks shape.
 */
export interface LedgerWindow {
  readonly settledTodayAtomic: bigint;
  readonly reservedTodayAtomic: bigint;
  readonly approvedCallsLastHour: number;
  readonly recentApproved: readonly RecentApproval[];
  /** Unix ms of the last approved call per provider. */
  readonly lastApprovedAtMsByProvider: Readonly<Record<string, number>>;
  /** The service's own 0–100 score of this provider; null when it could not be obtained. */
  readonly vendorScore: number | null;
}

/** An owner's approval, as recorded for one escalation. */
export interface OwnerApproval {
  readonly pollRef: string;
  readonly intentHash: string;
}

export interface EngineInput {
  readonly intent: SpendIntent;
  readonly policy: PolicySnapshot | null;
  readonly window: LedgerWindow;
  /** The caller's clock reading; the engine has no clock of its own. */
  readonly now: Date | number;
  readonly approval?: OwnerApproval | null;
}

export type RuleResult = 'PASS' | 'BLOCK' | 'ESCALATE';

export const RULE_IDS = [
  'policy.binding',
  'intent.deadline',
  'asset.allowed',
  'category.allow',
  'recipient.allowDeny',
  'agent.allowDeny',
  'vendor.riskFloor',
  'duplicate.window',
  'cooldown.sameService',
  'rate.limit',
  'hardCap.absolute',
  'perCall.cap',
  'budget.daily',
  'escalate.aboveThreshold',
] as const;

export type RuleId = (typeof RULE_IDS)[number];

/**
 * One line of the trace. `observed` and `limit` are strings (money atomic, times unix seconds,
 * durations seconds) or null; on a BLOCK or ESCALATE `note` is a DecisionNote (decisionCodes.ts),
 * whose CODE is the decision that entry stands for.
 */
export interface TraceEntry {
  readonly rule: RuleId;
  readonly result: RuleResult;
  readonly observed: string | null;
  readonly limit: string | null;
  readonly note: string | null;
}

export interface EngineInfo {
  readonly version: string;
  readonly ruleManifestHash: Hex;
  readonly ruleCount: 14;
}

export interface Decision {
  readonly decision: DecisionCode;
  readonly outcome: Outcome;
  /** The rule whose entry set the decision; null for APPROVED and BLOCKED_FAIL_CLOSED. */
  readonly decidingRule: RuleId | null;
  /** All fourteen entries in rule order; empty when the engine failed closed before the rules. */
  readonly ruleTrace: readonly TraceEntry[];
  readonly engine: EngineInfo;
  /** Why the engine refused to evaluate (stable code), or null. */
  readonly failClosedReason: string | null;
}

/** What every rule sees. `compiled` is null exactly when there is no policy. */
export interface RuleContext {
  readonly intent: SpendIntent;
  readonly policy: PolicySnapshot | null;
  readonly compiled: CompiledPolicy | null;
  readonly window: LedgerWindow;
  readonly nowMs: number;
  /** approvalNote(pollRef) when an approval for this exact intentHash was given, else null. */
  readonly approvalNote: ApprovalNote | null;
  /** intent.amountAtomic as a decimal string, made once and shared by the money rules. */
  readonly amountText: string;
}

export interface Rule {
  readonly id: RuleId;
  evaluate(ctx: RuleContext): TraceEntry;
}
