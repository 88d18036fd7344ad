// Explain a block: for one blocked or escalated past decision, the smallest change to each
// numeric setting (daily budget, per-call cap, escalation threshold) and to the category lists
// that would have approved it, each computed by the engine on the decision's own inputs (stored,
// or rebuilt from its trace) with only that setting changed: a binary search over atomic amounts
// for the numbers, one evaluation for the categories. A setting no value of which approves the
// intent says so (null). Pure.
import { compilePolicy, PolicyCompileError } from '../engine/compile';
import { evaluate } from '../engine/evaluate';
import type { Decision, LedgerWindow } from '../engine/types';
import { formatAmount, parseDisplayAmount, UINT256_MAX } from '../money/amount';
import type { NormalisedPolicyRules } from '../validation/policy';
import { rebuildInputs, type PastDecision, type PriorApproval } from './history';
import { snapshotsOf } from './replay';
import { SimulatedWindow } from './window';

export type AmountSetting = 'dailyBudget' | 'perCallCap' | 'escalateAbove';
export const AMOUNT_SETTINGS: readonly AmountSetting[] = [
  'dailyBudget',
  'perCallCap',
  'escalateAbove',
];

export interface AmountFix {
  readonly setting: AmountSetting;
  /** The policy's value, atomic. */
  readonly currentAtomic: bigint;
  /** The smallest value that approves the intent, atomic; null when no value does. */
  readonly approvingAtomic: bigint | null;
}

export interface CategoryFix {
  readonly category: string;
  /** Allowing the category (added to allow, removed from deny) approves the intent. */
  readonly approves: boolean;
  readonly addToAllow: boolean;
  readonly removeFromDeny: boolean;
}

export interface Explanation {
  readonly intentHash: string;
  readonly decidedAtMs: number;
  /** The stored decision code. */
  readonly decision: string;
  /** The decision the policy's current rules make on the same inputs. */
  readonly current: Decision;
  readonly amounts: readonly AmountFix[];
  readonly categories: CategoryFix;
  /** The inputs were rebuilt from the stored trace (decided before inputs were kept). */
  readonly rebuiltInputs: boolean;
}

export interface ExplainInput {
  readonly policyId: string;
  /** The policy's current normalised rules: the settings the explanation changes. */
  readonly rules: NormalisedPolicyRules;
  readonly past: PastDecision;
  /** Approvals just before the decision (duplicate and cooldown look-back). */
  readonly prior?: readonly PriorApproval[];
}

/** The largest amount a setting can take. */
const MAX_ATOMIC = UINT256_MAX;

/** The engine's decision on the past decision's inputs under some rules. */
export type Judge = (rules: NormalisedPolicyRules) => Decision;

export function decisionJudge(input: ExplainInput): { judge: Judge; rebuilt: boolean } {
  const { past, rules } = input;
  const inputs = past.inputs ?? rebuildInputs(past);
  const compiled = compilePolicy(rules);
  const prior = input.prior ?? [];
  const window = new SimulatedWindow(
    compiled.budgetWindow === 'ROLLING_24H',
    compiled.duplicateWindowMs,
    Math.min(prior[0]?.approvedAtMs ?? past.decidedAtMs, past.decidedAtMs),
  );
  for (const approval of prior) window.recordApproval(approval.intent, approval.approvedAtMs, null);
  const ledger: LedgerWindow = window.windowAt(past.intent, past.decidedAtMs, inputs);
  const judge: Judge = (candidate) => {
    const snapshots = snapshotsOf(input.policyId, candidate);
    const intent = past.boundToPolicy
      ? { ...past.intent, policyHash: snapshots.policyHash }
      : past.intent;
    return evaluate({
      intent,
      policy: inputs.policyStatus === 'PAUSED' ? snapshots.paused : snapshots.active,
      window: ledger,
      now: past.decidedAtMs,
      approval:
        inputs.approval === null
          ? null
          : { pollRef: inputs.approval, intentHash: intent.intentHash },
    });
  };
  return { judge, rebuilt: past.inputs === null };
}

export function withAmount(
  rules: NormalisedPolicyRules,
  setting: AmountSetting,
  atomic: bigint,
): NormalisedPolicyRules {
  return { ...rules, [setting]: formatAmount(atomic, rules.asset.decimals) };
}

/**
 * The values a setting can take with the rest of the policy unchanged (policy validation):
 * perCallCap at most dailyBudget, escalateAbove at most hardCap.
 */
export function settingRange(
  rules: NormalisedPolicyRules,
  setting: AmountSetting,
): { low: bigint; high: bigint } {
  const value = (text: string) => parseDisplayAmount(text, rules.asset.decimals);
  switch (setting) {
    case 'dailyBudget':
      return { low: value(rules.perCallCap), high: MAX_ATOMIC };
    case 'perCallCap':
      return { low: 0n, high: value(rules.dailyBudget) };
    case 'escalateAbove':
      return { low: 0n, high: value(rules.hardCap) };
  }
}

/** The engine approves under these rules; rules it cannot compile approve nothing. */
export function approvesUnder(judge: Judge, rules: NormalisedPolicyRules): boolean {
  try {
    return judge(rules).outcome === 'APPROVED';
  } catch (error) {
    if (error instanceof PolicyCompileError) return false;
    throw error;
  }
}

/** The smallest value of `setting` in its range that approves, or null when none does. */
export function smallestApproving(
  judge: Judge,
  rules: NormalisedPolicyRules,
  setting: AmountSetting,
): bigint | null {
  const approves = (atomic: bigint) => approvesUnder(judge, withAmount(rules, setting, atomic));
  let { low, high } = settingRange(rules, setting);
  if (!approves(high)) return null;
  while (low < high) {
    const middle = (low + high) / 2n;
    if (approves(middle)) high = middle;
    else low = middle + 1n;
  }
  return low;
}

function categoryFix(judge: Judge, rules: NormalisedPolicyRules, category: string): CategoryFix {
  const addToAllow = !rules.categories.allow.includes(category);
  const removeFromDeny = rules.categories.deny.includes(category);
  const allow = addToAllow ? [...rules.categories.allow, category].sort() : rules.categories.allow;
  const deny = rules.categories.deny.filter((entry) => entry !== category);
  const approves = approvesUnder(judge, { ...rules, categories: { allow, deny } });
  return { category, approves, addToAllow, removeFromDeny };
}

export function explainDecision(input: ExplainInput): Explanation {
  const { past, rules } = input;
  const { judge, rebuilt } = decisionJudge(input);
  const amounts = AMOUNT_SETTINGS.map((setting) => ({
    setting,
    currentAtomic: parseDisplayAmount(rules[setting], rules.asset.decimals),
    approvingAtomic: smallestApproving(judge, rules, setting),
  }));
  return {
    intentHash: past.intent.intentHash,
    decidedAtMs: past.decidedAtMs,
    decision: past.decision,
    current: judge(rules),
    amounts,
    categories: categoryFix(judge, rules, past.intent.category),
    rebuiltInputs: rebuilt,
  };
}
