// evaluate: the one place a spend is decided. Pure (no I/O, no clock, no randomness): checks
// its inputs, runs all fourteen rules in order, and decides first BLOCK, else first ESCALATE,
// else APPROVED. Anything unexpected, including a rule throwing, is BLOCKED_FAIL_CLOSED.
import { compilePolicy, PolicyCompileError, type CompiledPolicy } from './compile';
import { approvalNote, BLOCK_CODES, ESCALATE_CODES, noteCode } from './decisionCodes';
import {
  approvalProblem,
  intentProblem,
  nowMsOf,
  snapshotProblem,
  windowProblem,
} from './input-checks';
import { ENGINE_INFO, RULE_COUNT } from './manifest';
import { policyBinding } from './rules/01-policy-binding';
import { intentDeadline } from './rules/02-intent-deadline';
import { assetAllowed } from './rules/03-asset-allowed';
import { categoryAllow } from './rules/04-category-allow';
import { recipientAllowDeny } from './rules/05-recipient-allow-deny';
import { agentAllowDeny } from './rules/06-agent-allow-deny';
import { vendorRiskFloor } from './rules/07-vendor-risk-floor';
import { duplicateWindow } from './rules/08-duplicate-window';
import { cooldownSameService } from './rules/09-cooldown-same-service';
import { rateLimit } from './rules/10-rate-limit';
import { hardCapAbsolute } from './rules/11-hard-cap-absolute';
import { perCallCap } from './rules/12-per-call-cap';
import { budgetDaily } from './rules/13-budget-daily';
import { escalateAboveThreshold } from './rules/14-escalate-above-threshold';
import {
  RULE_IDS,
  type Decision,
  type DecisionCode,
  type EngineInput,
  type RuleContext,
  type RuleId,
  type TraceEntry,
} from './types';

const BLOCK_CODE_SET: ReadonlySet<string> = new Set(BLOCK_CODES);
const ESCALATE_CODE_SET: ReadonlySet<string> = new Set(ESCALATE_CODES);
const NO_TRACE: readonly TraceEntry[] = Object.freeze([]);

export function evaluate(input: EngineInput): Decision {
  try {
    return evaluateChecked(input);
  } catch (error) {
    return failClosed(
      error instanceof PolicyCompileError ? `POLICY_MALFORMED:${error.reason}` : 'ENGINE_EXCEPTION',
    );
  }
}

function evaluateChecked(input: EngineInput): Decision {
  if (typeof input !== 'object' || input === null) return failClosed('INPUT_MALFORMED');
  const nowMs = nowMsOf(input.now);
  if (nowMs === null) return failClosed('NOW_MALFORMED');
  const { intent, policy } = input;
  const problem =
    intentProblem(intent) ?? windowProblem(input.window) ?? approvalProblem(input.approval);
  if (problem !== null) return failClosed(problem);

  let compiled: CompiledPolicy | null = null;
  if (policy !== null) {
    if (typeof policy !== 'object') return failClosed('POLICY_MALFORMED:snapshot');
    compiled = compilePolicy(policy.rules);
    const snapshotIssue = snapshotProblem(policy, compiled);
    if (snapshotIssue !== null) return failClosed(snapshotIssue);
  }

  const trace = runRules(ruleContext(input, nowMs, compiled));
  if (typeof trace === 'string') return failClosed(`RULE_EXCEPTION:${trace}`);
  return verdict(trace);
}

/** What every rule sees; the approval counts only when it names this exact intent. */
function ruleContext(
  input: EngineInput,
  nowMs: number,
  compiled: CompiledPolicy | null,
): RuleContext {
  const { intent, approval } = input;
  const approved =
    approval !== undefined &&
    approval !== null &&
    approval.intentHash.toLowerCase() === intent.intentHash.toLowerCase();
  return {
    intent,
    policy: input.policy,
    compiled,
    window: input.window,
    nowMs,
    approvalNote: approved ? approvalNote(approval.pollRef) : null,
    amountText: intent.amountAtomic.toString(),
  };
}

/**
 * The fourteen trace lines in manifest order, or the id of the rule that threw. Direct calls in
 * manifest order rather than a loop over RULES: each call site then sees one rule and the JIT
 * inlines it, which a loop calling fourteen targets through one site prevents (a quarter of the
 * cost of a decision). verdict() ties this sequence to RULE_IDS.
 */
function runRules(ctx: RuleContext): TraceEntry[] | RuleId {
  const trace: TraceEntry[] = new Array(RULE_COUNT);
  let at = 0;
  try {
    trace[0] = policyBinding.evaluate(ctx);
    at = 1;
    trace[1] = intentDeadline.evaluate(ctx);
    at = 2;
    trace[2] = assetAllowed.evaluate(ctx);
    at = 3;
    trace[3] = categoryAllow.evaluate(ctx);
    at = 4;
    trace[4] = recipientAllowDeny.evaluate(ctx);
    at = 5;
    trace[5] = agentAllowDeny.evaluate(ctx);
    at = 6;
    trace[6] = vendorRiskFloor.evaluate(ctx);
    at = 7;
    trace[7] = duplicateWindow.evaluate(ctx);
    at = 8;
    trace[8] = cooldownSameService.evaluate(ctx);
    at = 9;
    trace[9] = rateLimit.evaluate(ctx);
    at = 10;
    trace[10] = hardCapAbsolute.evaluate(ctx);
    at = 11;
    trace[11] = perCallCap.evaluate(ctx);
    at = 12;
    trace[12] = budgetDaily.evaluate(ctx);
    at = 13;
    trace[13] = escalateAboveThreshold.evaluate(ctx);
  } catch {
    return RULE_IDS[at]!;
  }
  return trace;
}

/** First BLOCK, else first ESCALATE, else APPROVED; a line out of manifest order or with an unknown result fails closed. */
function verdict(trace: TraceEntry[]): Decision {
  let firstBlock = -1;
  let firstEscalate = -1;
  for (let i = 0; i < RULE_COUNT; i += 1) {
    const entry = trace[i]!;
    if (entry.rule !== RULE_IDS[i]) return failClosed(`RULE_EXCEPTION:${RULE_IDS[i]}`);
    if (entry.result === 'BLOCK') {
      if (firstBlock < 0) firstBlock = i;
    } else if (entry.result === 'ESCALATE') {
      if (firstEscalate < 0) firstEscalate = i;
    } else if (entry.result !== 'PASS') {
      return failClosed(`RULE_EXCEPTION:${RULE_IDS[i]}`);
    }
  }

  if (firstBlock >= 0) return decided(trace, firstBlock, BLOCK_CODE_SET, 'BLOCKED');
  if (firstEscalate >= 0) return decided(trace, firstEscalate, ESCALATE_CODE_SET, 'ESCALATED');
  return {
    decision: 'APPROVED',
    outcome: 'APPROVED',
    decidingRule: null,
    ruleTrace: trace,
    engine: ENGINE_INFO,
    failClosedReason: null,
  };
}

/** The deciding entry's note starts with its decision code; an unknown code is a bug: fail closed. */
function decided(
  trace: TraceEntry[],
  index: number,
  allowed: ReadonlySet<string>,
  outcome: 'BLOCKED' | 'ESCALATED',
): Decision {
  const entry = trace[index]!;
  const code = noteCode(entry.note ?? '');
  if (!allowed.has(code)) return failClosed(`RULE_EXCEPTION:${entry.rule}`);
  return {
    decision: code as DecisionCode,
    outcome,
    decidingRule: entry.rule as RuleId,
    ruleTrace: trace,
    engine: ENGINE_INFO,
    failClosedReason: null,
  };
}

function failClosed(reason: string): Decision {
  return {
    decision: 'BLOCKED_FAIL_CLOSED',
    outcome: 'BLOCKED',
    decidingRule: null,
    ruleTrace: NO_TRACE,
    engine: ENGINE_INFO,
    failClosedReason: reason,
  };
}
