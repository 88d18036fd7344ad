// The rules this process holds per policy: a policy version's rules never change (a change is a
// new version), so the rules object of each policy's latest version seen is kept and reused while
// the version and hash still match. Bounded by RULES_CACHE_MAX_ENTRIES, oldest out first.
import type { NormalisedPolicyRules } from '../../../core/validation/policy';

/**
 * The engine compiles and integrity-checks a rules object once (milliseconds) and caches the
 * result by object identity, and the preflight does not fetch rules it already holds.
 */
export const RULES_CACHE_MAX_ENTRIES = 10_000;

export interface HeldRules {
  readonly version: number;
  readonly policyHash: string;
  readonly rules: NormalisedPolicyRules;
}

const rulesByPolicy = new Map<string, HeldRules>();

/** The rules this process holds for the policy's latest version it has seen, if any. */
export function knownRules(policyId: string): HeldRules | undefined {
  return rulesByPolicy.get(policyId);
}

function heldRules(policyId: string, version: number, policyHash: string): HeldRules | undefined {
  const held = rulesByPolicy.get(policyId);
  return held !== undefined && held.version === version && held.policyHash === policyHash
    ? held
    : undefined;
}

/** The held rules object when it is this version's, else `rules`, now held in its place. */
export function holdRules(
  policyId: string,
  version: number,
  policyHash: string,
  rules: NormalisedPolicyRules,
): NormalisedPolicyRules {
  const held = heldRules(policyId, version, policyHash);
  if (held !== undefined) return held.rules;
  rulesByPolicy.delete(policyId);
  if (rulesByPolicy.size >= RULES_CACHE_MAX_ENTRIES)
    rulesByPolicy.delete(rulesByPolicy.keys().next().value as string);
  rulesByPolicy.set(policyId, { version, policyHash, rules });
  return rules;
}
