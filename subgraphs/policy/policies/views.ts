// How stored rows read in GraphQL: a version's limits out of its rules, the state that applies now
// (EXPIRED derived from expiresAt, never stored), a version view and a registration view.
import type { NormalisedPolicyRules } from '../../../core/validation/policy';
import { caip2Of } from '../../../platform/chain/clients';
import type { PolicyLimits, PolicyRegistration, PolicyStateValue, PolicyVersion } from './schema';
import type { PolicyRow, RegistrationRow } from './reads';

export function limitsOf(rules: Record<string, unknown>): PolicyLimits {
  const normalised = rules as unknown as NormalisedPolicyRules;
  return {
    asset: { ...normalised.asset },
    dailyBudget: normalised.dailyBudget,
    perCallCap: normalised.perCallCap,
    onPerCallCapExceeded: normalised.onPerCallCapExceeded,
    hardCap: normalised.hardCap,
    escalateAbove: normalised.escalateAbove,
    // The normal form leaves the default out (so older policies kept their hash): shown here.
    budgetWindow: normalised.budgetWindow ?? 'UTC_DAY',
    maxDeadlineMinutes: normalised.maxDeadlineMinutes,
  };
}

export function stateOf(policy: PolicyRow, now: Date): PolicyStateValue {
  if (policy.expiresAt !== null && now.getTime() >= policy.expiresAt.getTime()) return 'EXPIRED';
  return policy.status;
}

export function versionView(row: PolicyRow): PolicyVersion {
  return {
    policyId: row.id,
    version: row.version,
    policyHash: row.policyHash,
    rules: row.rules,
    limits: limitsOf(row.rules),
    expiresAt: row.expiresAt,
    createdAt: row.versionCreatedAt,
  };
}

export function registrationView(
  row: RegistrationRow,
  currentPolicyHash: string,
): PolicyRegistration {
  return {
    chainId: row.chainId,
    network: caip2Of(row.chainId),
    registry: row.registry,
    txHash: row.txHash,
    blockNumber: row.blockNumber,
    event: row.event,
    policyHash: row.policyHash,
    version: row.version,
    upToDate: row.policyHash === currentPolicyHash,
    recordedAt: row.recordedAt,
  };
}
