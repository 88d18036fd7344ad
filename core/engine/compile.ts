// compilePolicy: turns normalised rules into the limits the rules compare against (bigint
// amounts, sets, milliseconds, ready-made trace strings), once per rules object, cached in a
// WeakMap so the hot path only looks them up. Refuses rules that are not in normal form.
import { keccak256, stringToBytes, type Hex } from 'viem';
import { canonicalJson } from '../canon/jcs';
import { parseDisplayAmount } from '../money/amount';
import {
  validatePolicy,
  type BudgetWindow,
  type CapVerdict,
  type NormalisedPolicyRules,
  type UnavailableVerdict,
} from '../validation/policy';
import { parseIsoTimestamp } from '../validation/timestamp';

const MS_PER_MINUTE = 60_000;

export interface CompiledPolicy {
  /** hashJson(rules), recomputed here so a snapshot cannot claim a hash its rules do not have. */
  readonly policyHash: Hex;
  readonly network: string;
  readonly token: string;
  /** CAIP-19 asset id, as shown in the trace. */
  readonly assetText: string;
  readonly dailyBudgetAtomic: bigint;
  readonly dailyBudgetText: string;
  /** What rule 13 sums over; the trace note names it. */
  readonly budgetWindow: BudgetWindow;
  readonly perCallCapAtomic: bigint;
  readonly perCallCapText: string;
  readonly perCallCapVerdict: CapVerdict;
  readonly hardCapAtomic: bigint;
  readonly hardCapText: string;
  readonly escalateAboveAtomic: bigint;
  readonly escalateAboveText: string;
  readonly categoriesAllow: ReadonlySet<string>;
  readonly categoriesDeny: ReadonlySet<string>;
  readonly recipientsAllow: ReadonlySet<string>;
  readonly recipientsDeny: ReadonlySet<string>;
  readonly agentsAllow: ReadonlySet<string>;
  readonly agentsDeny: ReadonlySet<string>;
  readonly minScore: number;
  readonly minScoreText: string;
  readonly onBelowMinScore: CapVerdict;
  readonly onScoreUnavailable: UnavailableVerdict;
  readonly duplicateWindowMs: number;
  readonly duplicateWindowText: string;
  readonly duplicateKeys: DuplicateKeyFlags;
  readonly cooldownMs: number;
  readonly cooldownText: string;
  readonly callsPerHour: number;
  readonly callsPerHourText: string;
  readonly maxDeadlineMs: number;
  readonly expiresAtMs: number | null;
  readonly expiresAtText: string | null;
}

/** One boolean per possible key, so the duplicate rule compares without iterating key names. */
export interface DuplicateKeyFlags {
  readonly agentId: boolean;
  readonly amount: boolean;
  readonly capability: boolean;
  readonly endpoint: boolean;
  readonly itemHash: boolean;
  readonly provider: boolean;
  readonly recipient: boolean;
}

export class PolicyCompileError extends Error {
  readonly reason: string;

  constructor(reason: string) {
    super(`policy rules cannot be compiled: ${reason}`);
    this.name = 'PolicyCompileError';
    this.reason = reason;
  }
}

// Failures are cached too: a broken snapshot handed over repeatedly costs one validation.
const cache = new WeakMap<object, CompiledPolicy | PolicyCompileError>();

export function compilePolicy(rules: NormalisedPolicyRules): CompiledPolicy {
  if (typeof rules !== 'object' || rules === null)
    throw new PolicyCompileError('RULES_NOT_AN_OBJECT');
  let compiled = cache.get(rules);
  if (compiled === undefined) {
    compiled = compileUncached(rules);
    cache.set(rules, compiled);
  }
  if (compiled instanceof PolicyCompileError) throw compiled;
  return compiled;
}

function compileUncached(rules: NormalisedPolicyRules): CompiledPolicy | PolicyCompileError {
  const validated = validatePolicy(rules);
  if (!validated.ok) return new PolicyCompileError(`RULES_INVALID:${validated.errors[0]!.field}`);
  let canonical: string;
  try {
    canonical = canonicalJson(rules);
  } catch {
    return new PolicyCompileError('RULES_NOT_JSON');
  }
  // Rules equal to their own normal form are what policyHash was computed over; anything else
  // (a raw document, a hand-edited row) would make the trace cite a hash it was not judged by.
  if (canonicalJson(validated.rules) !== canonical)
    return new PolicyCompileError('RULES_NOT_NORMALISED');
  return build(validated.rules, keccak256(stringToBytes(canonical)));
}

function build(rules: NormalisedPolicyRules, policyHash: Hex): CompiledPolicy {
  const { decimals } = rules.asset;
  const atomic = (display: string): bigint => parseDisplayAmount(display, decimals);
  const dailyBudgetAtomic = atomic(rules.dailyBudget);
  const perCallCapAtomic = atomic(rules.perCallCap);
  const hardCapAtomic = atomic(rules.hardCap);
  const escalateAboveAtomic = atomic(rules.escalateAbove);
  const keys = new Set(rules.duplicates.keys);
  const expiresAtMs = rules.expiresAt === null ? null : expiresAtMsOf(rules.expiresAt);
  return {
    policyHash,
    network: rules.asset.network,
    token: rules.asset.token,
    assetText: `${rules.asset.network}/erc20:${rules.asset.token}`,
    dailyBudgetAtomic,
    dailyBudgetText: dailyBudgetAtomic.toString(),
    budgetWindow: rules.budgetWindow ?? 'UTC_DAY',
    perCallCapAtomic,
    perCallCapText: perCallCapAtomic.toString(),
    perCallCapVerdict: rules.onPerCallCapExceeded,
    hardCapAtomic,
    hardCapText: hardCapAtomic.toString(),
    escalateAboveAtomic,
    escalateAboveText: escalateAboveAtomic.toString(),
    categoriesAllow: new Set(rules.categories.allow),
    categoriesDeny: new Set(rules.categories.deny),
    recipientsAllow: new Set(rules.recipients.allow),
    recipientsDeny: new Set(rules.recipients.deny),
    agentsAllow: new Set(rules.agents.allow),
    agentsDeny: new Set(rules.agents.deny),
    minScore: rules.vendorRisk.minScore,
    minScoreText: String(rules.vendorRisk.minScore),
    onBelowMinScore: rules.vendorRisk.onBelow,
    onScoreUnavailable: rules.vendorRisk.onUnavailable,
    duplicateWindowMs: rules.duplicates.windowMinutes * MS_PER_MINUTE,
    duplicateWindowText: String(rules.duplicates.windowMinutes * 60),
    duplicateKeys: {
      agentId: keys.has('agentId'),
      amount: keys.has('amount'),
      capability: keys.has('capability'),
      endpoint: keys.has('endpoint'),
      itemHash: keys.has('itemHash'),
      provider: keys.has('provider'),
      recipient: keys.has('recipient'),
    },
    cooldownMs: rules.cooldowns.sameServiceMinutes * MS_PER_MINUTE,
    cooldownText: String(rules.cooldowns.sameServiceMinutes * 60),
    callsPerHour: rules.rateLimit.callsPerHour,
    callsPerHourText: String(rules.rateLimit.callsPerHour),
    maxDeadlineMs: rules.maxDeadlineMinutes * MS_PER_MINUTE,
    expiresAtMs,
    expiresAtText: expiresAtMs === null ? null : String(expiresAtMs / 1000),
  };
}

function expiresAtMsOf(expiresAt: string): number {
  const parsed = parseIsoTimestamp(expiresAt);
  if (!parsed.ok) throw new PolicyCompileError('EXPIRES_AT_INVALID');
  return parsed.unixSeconds * 1000;
}
