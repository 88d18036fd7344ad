// The vocabulary of a spend policy: its verdicts, windows, duplicate keys and channels, every bound
// and default, and the normalised rules that policyHash covers. Data and types only; the checks are
// in policySchema.ts and policy.ts.
import type { Address } from 'viem';

export type CapVerdict = 'BLOCK' | 'ESCALATE';
export type UnavailableVerdict = 'ALLOW' | 'BLOCK' | 'ESCALATE';

/**
 * What the daily budget is measured over (docs/engine.md, rule 13): the UTC day a reservation was
 * approved in, or the 24 hours before the decision.
 */
export const BUDGET_WINDOWS = ['UTC_DAY', 'ROLLING_24H'] as const;
export type BudgetWindow = (typeof BUDGET_WINDOWS)[number];

/** The intent fields a duplicate check may compare, in normalised (sorted) order. */
export const DUPLICATE_KEYS = [
  'agentId',
  'amount',
  'capability',
  'endpoint',
  'itemHash',
  'provider',
  'recipient',
] as const;
export type DuplicateKey = (typeof DUPLICATE_KEYS)[number];

export const ESCALATION_CHANNELS = ['dashboard', 'email', 'slack', 'telegram', 'webhook'] as const;
export type EscalationChannel = (typeof ESCALATION_CHANNELS)[number];

/** Every bound on a policy document, named so that docs and errors quote the same numbers. */
export const POLICY_BOUNDS = {
  nameMaxChars: 128,
  symbolMaxChars: 16,
  categoriesMaxItems: 256,
  recipientsMaxItems: 1000,
  agentsMaxItems: 1000,
  minScore: { min: 0, max: 100 },
  duplicateWindowMinutes: { min: 0, max: 10_080 },
  // Input lists may repeat an entry (it is deduplicated); these bound the raw list length.
  duplicateKeysMaxItems: 16,
  escalationChannelsMaxItems: 16,
  sameServiceMinutes: { min: 0, max: 10_080 },
  callsPerHour: { min: 1, max: 1_000_000 },
  escalationTimeoutMinutes: { min: 1, max: 1440 },
  maxDeadlineMinutes: { min: 1, max: 43_200 },
} as const;

/** The rules after normalisation: every field present, one spelling, ready to hash. */
export interface NormalisedPolicyRules {
  readonly owner: Address;
  readonly name: string;
  readonly asset: {
    readonly network: string;
    readonly token: Address;
    readonly symbol: string;
    readonly decimals: number;
  };
  /** Display amounts in the asset, in formatAmount's one spelling ("25.00"). */
  readonly dailyBudget: string;
  readonly perCallCap: string;
  readonly onPerCallCapExceeded: CapVerdict;
  readonly hardCap: string;
  readonly escalateAbove: string;
  readonly categories: { readonly allow: readonly string[]; readonly deny: readonly string[] };
  readonly recipients: { readonly allow: readonly Address[]; readonly deny: readonly Address[] };
  readonly agents: { readonly allow: readonly string[]; readonly deny: readonly string[] };
  readonly vendorRisk: {
    readonly minScore: number;
    readonly onBelow: CapVerdict;
    readonly onUnavailable: UnavailableVerdict;
  };
  readonly duplicates: { readonly windowMinutes: number; readonly keys: readonly DuplicateKey[] };
  readonly cooldowns: { readonly sameServiceMinutes: number };
  readonly rateLimit: { readonly callsPerHour: number };
  readonly escalation: {
    readonly timeoutMinutes: number;
    readonly channels: readonly EscalationChannel[];
  };
  /**
   * Present only as ROLLING_24H: the default UTC_DAY is left out of the normal form, so every
   * policy written before this option existed keeps its rules and its policyHash.
   */
  readonly budgetWindow?: 'ROLLING_24H';
  readonly maxDeadlineMinutes: number;
  /** ISO-8601 UTC, whole seconds; null means the policy never expires. */
  readonly expiresAt: string | null;
}

/**
 * Defaults for the optional fields. Absent allow/deny lists are empty; hardCap's default depends
 * on other fields (see policy.ts).
 */
export const POLICY_DEFAULTS = {
  name: '',
  onPerCallCapExceeded: 'BLOCK' as CapVerdict,
  vendorRisk: {
    minScore: 50,
    onBelow: 'ESCALATE' as CapVerdict,
    onUnavailable: 'ALLOW' as UnavailableVerdict,
  },
  duplicates: {
    windowMinutes: 60,
    keys: ['amount', 'capability', 'itemHash', 'recipient'] as DuplicateKey[],
  },
  cooldowns: { sameServiceMinutes: 0 },
  rateLimit: { callsPerHour: 60 },
  escalation: { timeoutMinutes: 30, channels: ['webhook'] as EscalationChannel[] },
  budgetWindow: 'UTC_DAY' as BudgetWindow,
  maxDeadlineMinutes: 1440,
  expiresAt: null as string | null,
} as const;
