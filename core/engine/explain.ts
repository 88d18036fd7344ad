// Plain-English reasons for a decision, one line per rule that did not pass (plus one per
// owner approval that cleared an escalation), in rule order. Deterministic: the same decision
// and asset give the same lines, so they can be stored, shown to owners and compared in tests.
import { formatAmount } from '../money/amount';
import { formatIsoSeconds } from '../validation/timestamp';
import { parseApprovalNote } from './decisionCodes';
import { NOT_EVALUATED_NO_POLICY } from './trace';
import type { Decision, TraceEntry } from './types';

/** The policy's asset, for writing amounts as people read them; null shows atomic units. */
export interface ExplainAsset {
  readonly symbol: string;
  readonly decimals: number;
}

const RULE_NAMES: Record<string, string> = {
  'vendor.riskFloor': 'vendor risk',
  'perCall.cap': 'per-call cap',
  'escalate.aboveThreshold': 'approval threshold',
};

export function explainDecision(decision: Decision, asset: ExplainAsset | null): string[] {
  if (decision.decision === 'BLOCKED_FAIL_CLOSED') {
    return [
      `The engine could not evaluate this spend safely (${decision.failClosedReason ?? 'unknown reason'}), so it is blocked.`,
    ];
  }
  const lines: string[] = [];
  let notEvaluated = 0;
  for (const entry of decision.ruleTrace) {
    if (entry.note === NOT_EVALUATED_NO_POLICY) {
      notEvaluated += 1;
      continue;
    }
    const line = explainEntry(entry, asset);
    if (line !== null) lines.push(line);
  }
  if (notEvaluated > 0)
    lines.push(`The other ${notEvaluated} rules could not be checked without a policy.`);
  return lines;
}

function explainEntry(entry: TraceEntry, asset: ExplainAsset | null): string | null {
  const note = entry.note ?? '';
  if (entry.result === 'PASS') {
    const pollRef = parseApprovalNote(note);
    if (pollRef === null) return null;
    return `The owner approved this exact intent (${pollRef}), which cleared the ${RULE_NAMES[entry.rule] ?? entry.rule} check.`;
  }
  const observed = entry.observed ?? '';
  const limit = entry.limit ?? '';
  const money = (atomicText: string): string => formatMoney(atomicText, asset);
  const askOwner = entry.result === 'ESCALATE' ? ', so the owner must approve it' : '';
  if (note.startsWith('BLOCKED_BUDGET:UTC_DAY:')) {
    const day = note.slice('BLOCKED_BUDGET:UTC_DAY:'.length);
    return `Spends approved on ${day} (UTC), settled or still reserved, plus this amount come to ${money(observed)}, above the daily budget of ${money(limit)}.`;
  }
  switch (note) {
    case 'BLOCKED_POLICY_INACTIVE:NOT_FOUND':
      return 'No policy with this policyId exists, so nothing can be approved.';
    case 'BLOCKED_POLICY_INACTIVE:PAUSED':
      return `The policy is ${observed.toLowerCase()}; its owner must make it active before any spend.`;
    case 'BLOCKED_POLICY_INACTIVE:EXPIRED':
      return `The policy expired at ${time(limit)}.`;
    case 'BLOCKED_POLICY_MISMATCH:POLICY_ID':
      return `The intent names policy ${observed}, not policy ${limit}.`;
    case 'BLOCKED_POLICY_MISMATCH:POLICY_HASH':
      return `The intent was written against policy hash ${observed}, but the policy's current hash is ${limit}; create the intent again.`;
    case 'BLOCKED_DEADLINE:PASSED':
      return `The deadline ${time(observed)} has already passed.`;
    case 'BLOCKED_DEADLINE:TOO_FAR':
      return `The deadline ${time(observed)} is later than the policy allows (latest ${time(limit)}).`;
    case 'BLOCKED_ASSET':
      return `The intent pays in ${observed}, but the policy's asset is ${limit}.`;
    case 'BLOCKED_CATEGORY:DENIED':
      return `The category "${observed}" is on the policy's deny list.`;
    case 'BLOCKED_CATEGORY:NOT_ALLOWED':
      return `The category "${observed}" is not on the policy's allow list.`;
    case 'BLOCKED_RECIPIENT:DENIED':
      return `The recipient ${observed} is on the policy's deny list.`;
    case 'BLOCKED_RECIPIENT:NOT_ALLOWED':
      return `The recipient ${observed} is not on the policy's allow list.`;
    case 'BLOCKED_AGENT:DENIED':
      return `The agent "${observed}" is on the policy's deny list.`;
    case 'BLOCKED_AGENT:NOT_ALLOWED':
      return `The agent "${observed}" is not on the policy's allow list.`;
    case 'BLOCKED_VENDOR_RISK:BELOW_FLOOR':
    case 'ESCALATED_VENDOR_RISK:BELOW_FLOOR':
      return `The provider's vendor score ${observed} is below the policy's minimum of ${limit}${askOwner}.`;
    case 'BLOCKED_VENDOR_RISK:SCORE_UNAVAILABLE':
      return 'No vendor score is available for the provider, and the policy blocks spends in that case.';
    case 'ESCALATED_VENDOR_RISK:SCORE_UNAVAILABLE':
      return 'No vendor score is available for the provider, so the owner must approve it.';
    case 'BLOCKED_DUPLICATE':
      return `The same spend (intent ${observed}) was already approved within the last ${minutes(limit)} minutes.`;
    case 'BLOCKED_COOLDOWN':
      return `The last approved call to this provider was ${observed} seconds ago; the policy requires ${limit} seconds between calls.`;
    case 'BLOCKED_RATE':
      return `This would be call ${observed} in the last hour; the policy allows ${limit}.`;
    case 'BLOCKED_HARD_CAP':
      return `The amount ${money(observed)} is above the hard cap of ${money(limit)}, which no approval can lift.`;
    case 'BLOCKED_PER_CALL_CAP':
    case 'ESCALATED_PER_CALL_CAP':
      return `The amount ${money(observed)} is above the per-call cap of ${money(limit)}${askOwner}.`;
    case 'BLOCKED_BUDGET:ROLLING_24H':
      return `Spends settled in the last 24 hours and reservations still active, plus this amount, come to ${money(observed)}, above the budget of ${money(limit)} per 24 hours.`;
    case 'ESCALATED_THRESHOLD':
      return `The amount ${money(observed)} is above the approval threshold of ${money(limit)}${askOwner}.`;
    default:
      return `Rule ${entry.rule} returned ${entry.result} (${note}).`;
  }
}

function formatMoney(atomicText: string, asset: ExplainAsset | null): string {
  if (!/^[0-9]+$/.test(atomicText)) return atomicText;
  if (asset === null) return `${atomicText} atomic units`;
  return `${formatAmount(BigInt(atomicText), asset.decimals)} ${asset.symbol}`;
}

function time(unixSecondsText: string): string {
  const seconds = Number(unixSecondsText);
  return Number.isSafeInteger(seconds) ? formatIsoSeconds(seconds) : unixSecondsText;
}

function minutes(secondsText: string): string {
  const seconds = Number(secondsText);
  return Number.isSafeInteger(seconds) ? String(seconds / 60) : secondsText;
}
