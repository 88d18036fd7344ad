// The fourteen rules in their fixed order, and the engine's identity: its version and the hash
// of the rule ids in order. A decision names both, so an auditor can tell which rule set judged it.
import { keccak256, stringToBytes, type Hex } from 'viem';
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
import { RULE_IDS, type EngineInfo, type Rule } from './types';

export const ENGINE_VERSION = '1.0.0';

export const RULES: readonly Rule[] = Object.freeze([
  policyBinding,
  intentDeadline,
  assetAllowed,
  categoryAllow,
  recipientAllowDeny,
  agentAllowDeny,
  vendorRiskFloor,
  duplicateWindow,
  cooldownSameService,
  rateLimit,
  hardCapAbsolute,
  perCallCap,
  budgetDaily,
  escalateAboveThreshold,
]);

// The order is the contract (DECISIONS table); a reordering here must not go unnoticed.
RULES.forEach((rule, index) => {
  if (rule.id !== RULE_IDS[index])
    throw new Error(`rule ${index + 1} is ${rule.id}, expected ${RULE_IDS[index]}`);
});

export const RULE_COUNT = 14;

/** keccak256(utf8(rule ids joined by "\n")). */
export const RULE_MANIFEST_HASH: Hex = keccak256(
  stringToBytes(RULES.map((rule) => rule.id).join('\n')),
);

export const ENGINE_INFO: EngineInfo = Object.freeze({
  version: ENGINE_VERSION,
  ruleManifestHash: RULE_MANIFEST_HASH,
  ruleCount: RULE_COUNT,
});
