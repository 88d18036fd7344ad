// Shape checks on everything the engine is handed, before any rule runs. The engine trusts no
// caller: a negative total, a NaN clock or a missing list would let a limit compare as "fine",
// so any doubt becomes a stable reason code and the decision BLOCKED_FAIL_CLOSED.
import { isEscalationPollRef } from '../canon/id-shapes';
import type { LedgerWindow, OwnerApproval, PolicySnapshot } from './types';
import type { SpendIntent } from '../validation/intent';
import type { CompiledPolicy } from './compile';

/** More recent approvals than this in one window means the caller did not filter: refuse. */
export const MAX_RECENT_APPROVED = 100_000;

// Type and length only: scanning hex digits of every recent approval on every call cost more
// than all fourteen rules together. Case is not checked either; the duplicate rule compares these
// fields case-insensitively instead, so mixed case cannot make a duplicate slip through.
function isHexShaped(value: unknown, hexChars: number): boolean {
  return typeof value === 'string' && value.length === hexChars + 2;
}

/** Unix ms from a Date or a number, or null when it is not a finite instant. */
export function nowMsOf(now: unknown): number | null {
  const ms = now instanceof Date ? now.getTime() : now;
  return typeof ms === 'number' && Number.isFinite(ms) && ms >= 0 ? ms : null;
}

const isCount = (value: unknown): boolean =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
const isInstantMs = (value: unknown): boolean =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0;
const isNonNegativeAtomic = (value: unknown): boolean => typeof value === 'bigint' && value >= 0n;

/** Null when the window is well formed, else `WINDOW_MALFORMED:<field>`. */
export function windowProblem(window: LedgerWindow): string | null {
  if (typeof window !== 'object' || window === null) return 'WINDOW_MALFORMED:window';
  if (!isNonNegativeAtomic(window.settledTodayAtomic)) return 'WINDOW_MALFORMED:settledTodayAtomic';
  if (!isNonNegativeAtomic(window.reservedTodayAtomic))
    return 'WINDOW_MALFORMED:reservedTodayAtomic';
  if (!isCount(window.approvedCallsLastHour)) return 'WINDOW_MALFORMED:approvedCallsLastHour';
  const score = window.vendorScore;
  if (score !== null && !(typeof score === 'number' && score >= 0 && score <= 100))
    return 'WINDOW_MALFORMED:vendorScore';
  const recent = window.recentApproved;
  if (!Array.isArray(recent) || recent.length > MAX_RECENT_APPROVED)
    return 'WINDOW_MALFORMED:recentApproved';
  for (let i = 0; i < recent.length; i += 1) {
    if (!isRecentApproval(recent[i])) return `WINDOW_MALFORMED:recentApproved[${i}]`;
  }
  const byProvider = window.lastApprovedAtMsByProvider;
  if (typeof byProvider !== 'object' || byProvider === null || Array.isArray(byProvider)) {
    return 'WINDOW_MALFORMED:lastApprovedAtMsByProvider';
  }
  // Inherited keys are checked too: harmless, and cheaper than an own-property test per key.
  for (const provider in byProvider) {
    if (!isInstantMs(byProvider[provider])) return 'WINDOW_MALFORMED:lastApprovedAtMsByProvider';
  }
  return null;
}

function isRecentApproval(entry: unknown): boolean {
  if (typeof entry !== 'object' || entry === null) return false;
  const e = entry as Record<string, unknown>;
  return (
    isHexShaped(e.intentHash, 64) &&
    typeof e.capability === 'string' &&
    isHexShaped(e.recipient, 40) &&
    typeof e.amountAtomic === 'bigint' &&
    e.amountAtomic > 0n &&
    isHexShaped(e.itemHash, 64) &&
    typeof e.provider === 'string' &&
    typeof e.agentId === 'string' &&
    typeof e.endpoint === 'string' &&
    isInstantMs(e.approvedAtMs)
  );
}

/**
 * The intent should come from validateSpendIntent; this re-checks only what a rule would
 * silently misjudge (types of compared fields), cheaply, on every call.
 */
export function intentProblem(intent: SpendIntent): string | null {
  if (typeof intent !== 'object' || intent === null) return 'INTENT_MALFORMED:intent';
  if (typeof intent.amountAtomic !== 'bigint' || intent.amountAtomic <= 0n)
    return 'INTENT_MALFORMED:amountAtomic';
  if (!Number.isSafeInteger(intent.deadlineUnixSeconds))
    return 'INTENT_MALFORMED:deadlineUnixSeconds';
  if (
    typeof intent.policyId !== 'string' ||
    typeof intent.policyHash !== 'string' ||
    typeof intent.agentId !== 'string' ||
    typeof intent.category !== 'string' ||
    typeof intent.provider !== 'string' ||
    typeof intent.capability !== 'string' ||
    typeof intent.itemHash !== 'string' ||
    typeof intent.recipient !== 'string' ||
    typeof intent.network !== 'string' ||
    typeof intent.token !== 'string' ||
    typeof intent.endpoint !== 'string' ||
    typeof intent.intentHash !== 'string'
  ) {
    return 'INTENT_MALFORMED:fields';
  }
  return null;
}

/** Null when the approval is absent or well formed. */
export function approvalProblem(approval: OwnerApproval | null | undefined): string | null {
  if (approval === undefined || approval === null) return null;
  if (typeof approval !== 'object') return 'APPROVAL_MALFORMED';
  if (!isEscalationPollRef(approval.pollRef)) return 'APPROVAL_MALFORMED:pollRef';
  if (typeof approval.intentHash !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(approval.intentHash)) {
    return 'APPROVAL_MALFORMED:intentHash';
  }
  return null;
}

/** The snapshot must agree with its own rules: same hash, same expiry, a known status. */
export function snapshotProblem(policy: PolicySnapshot, compiled: CompiledPolicy): string | null {
  if (typeof policy.policyId !== 'string') return 'POLICY_MALFORMED:policyId';
  if (!Number.isSafeInteger(policy.version) || policy.version < 1)
    return 'POLICY_MALFORMED:version';
  if (policy.status !== 'ACTIVE' && policy.status !== 'PAUSED') return 'POLICY_MALFORMED:status';
  if (
    policy.policyHash !== compiled.policyHash &&
    String(policy.policyHash).toLowerCase() !== compiled.policyHash
  ) {
    return 'POLICY_MALFORMED:POLICY_HASH_DOES_NOT_MATCH_RULES';
  }
  const expiresAt = policy.expiresAt;
  const expiresAtMs =
    expiresAt === null ? null : expiresAt instanceof Date ? expiresAt.getTime() : expiresAt;
  if (expiresAtMs !== compiled.expiresAtMs)
    return 'POLICY_MALFORMED:EXPIRES_AT_DOES_NOT_MATCH_RULES';
  return null;
}
