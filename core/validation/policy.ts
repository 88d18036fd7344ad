// validatePolicy: a spend policy as people write it (DECISIONS "Spend policy (wire)") checked and
// normalised: defaults filled in, case-insensitive lists lowercased, deduplicated and sorted,
// amounts in one spelling. Two spellings of one policy give identical rules, hence one policyHash.
import type { Address } from 'viem';
import type { FieldError } from '../errors';
import {
  AmountFormatError,
  formatAmount,
  MAX_ASSET_DECIMALS,
  parseDisplayAmount,
} from '../money/amount';
import {
  ADDRESS_PATTERN,
  AGENT_ID_PATTERN,
  CATEGORY_PATTERN,
  fieldPath,
  integerInRange,
  isPlainObject,
  NETWORK_PATTERN,
  rejectUnknownKeys,
  ROOT_FIELD,
  type FieldErrors,
} from './fields';
import { formatIsoSeconds, parseIsoTimestamp } from './timestamp';

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
 * on other fields (see PolicyReader.read).
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

export type PolicyValidation =
  { ok: true; rules: NormalisedPolicyRules } | { ok: false; errors: FieldError[] };

const TOP_FIELDS = new Set([
  'owner',
  'name',
  'asset',
  'dailyBudget',
  'perCallCap',
  'onPerCallCapExceeded',
  'hardCap',
  'escalateAbove',
  'categories',
  'recipients',
  'agents',
  'vendorRisk',
  'duplicates',
  'cooldowns',
  'rateLimit',
  'escalation',
  'budgetWindow',
  'maxDeadlineMinutes',
  'expiresAt',
]);
const ASSET_FIELDS = new Set(['network', 'token', 'symbol', 'decimals']);
const ALLOW_DENY_FIELDS = new Set(['allow', 'deny']);
const VENDOR_RISK_FIELDS = new Set(['minScore', 'onBelow', 'onUnavailable']);
const DUPLICATES_FIELDS = new Set(['windowMinutes', 'keys']);
const COOLDOWNS_FIELDS = new Set(['sameServiceMinutes']);
const RATE_LIMIT_FIELDS = new Set(['callsPerHour']);
const ESCALATION_FIELDS = new Set(['timeoutMinutes', 'channels']);

// Symbols are shown to people ("USD₮0"), so any visible characters, but no spaces or controls.
const SYMBOL_PATTERN = /^[^\s\p{C}]{1,16}$/u;
const NAME_FORBIDDEN = /\p{C}/u;

/** Checks a policy document and returns its normalised rules, or every field error found. */
export function validatePolicy(raw: unknown): PolicyValidation {
  if (!isPlainObject(raw))
    return { ok: false, errors: [{ field: ROOT_FIELD, reason: 'must be a JSON object' }] };
  const errors: FieldErrors = [];
  const reader = new PolicyReader(raw, errors);
  const rules = reader.read();
  if (errors.length > 0 || rules === undefined) return { ok: false, errors };
  return { ok: true, rules };
}

/** Reads one document; every method records its own errors and returns undefined on failure. */
class PolicyReader {
  constructor(
    private readonly raw: Record<string, unknown>,
    private readonly errors: FieldErrors,
  ) {}

  read(): NormalisedPolicyRules | undefined {
    const raw = this.raw;
    rejectUnknownKeys(raw, TOP_FIELDS, '', this.errors);
    const owner = this.address(raw.owner, 'owner', true);
    const name = this.name(raw.name);
    const asset = this.asset(raw.asset);
    // With unknown decimals, amounts are still checked for shape so all mistakes show at once.
    const decimals = asset?.decimals ?? MAX_ASSET_DECIMALS;
    const dailyBudget = this.amount(raw.dailyBudget, 'dailyBudget', decimals, true);
    const perCallCap = this.amount(raw.perCallCap, 'perCallCap', decimals, true);
    const escalateAbove = this.amount(raw.escalateAbove, 'escalateAbove', decimals, true);
    const explicitHardCap =
      raw.hardCap === null ? undefined : this.amount(raw.hardCap, 'hardCap', decimals, false);
    const onPerCallCapExceeded = this.choice(
      raw.onPerCallCapExceeded,
      'onPerCallCapExceeded',
      ['BLOCK', 'ESCALATE'] as const,
      POLICY_DEFAULTS.onPerCallCapExceeded,
    );
    const categories = this.categories(raw.categories);
    const recipients = this.allowDeny(
      raw.recipients,
      'recipients',
      POLICY_BOUNDS.recipientsMaxItems,
      (v, f) => this.address(v, f, true),
    );
    const agents = this.allowDeny(raw.agents, 'agents', POLICY_BOUNDS.agentsMaxItems, (v, f) =>
      this.agentId(v, f),
    );
    const vendorRisk = this.vendorRisk(raw.vendorRisk);
    const duplicates = this.duplicates(raw.duplicates);
    const cooldowns = this.cooldowns(raw.cooldowns);
    const rateLimit = this.rateLimit(raw.rateLimit);
    const escalation = this.escalation(raw.escalation);
    const budgetWindow = this.choice(
      raw.budgetWindow,
      'budgetWindow',
      BUDGET_WINDOWS,
      POLICY_DEFAULTS.budgetWindow,
    );
    const maxDeadlineMinutes = this.integer(
      raw.maxDeadlineMinutes,
      'maxDeadlineMinutes',
      POLICY_BOUNDS.maxDeadlineMinutes,
      POLICY_DEFAULTS.maxDeadlineMinutes,
    );
    const expiresAt = this.expiresAt(raw.expiresAt);

    if (dailyBudget !== undefined && perCallCap !== undefined && perCallCap > dailyBudget) {
      this.errors.push({ field: 'perCallCap', reason: 'must not exceed dailyBudget' });
    }
    // Absent hardCap: under BLOCK it equals perCallCap (nothing larger could pass anyway); under
    // ESCALATE it is dailyBudget, so an escalation above perCallCap can still be approved.
    const hardCap =
      explicitHardCap ?? (onPerCallCapExceeded === 'ESCALATE' ? dailyBudget : perCallCap);
    if (escalateAbove !== undefined && hardCap !== undefined && escalateAbove > hardCap) {
      const why =
        explicitHardCap === undefined
          ? ` (hardCap defaults to ${onPerCallCapExceeded === 'ESCALATE' ? 'dailyBudget' : 'perCallCap'})`
          : '';
      this.errors.push({ field: 'escalateAbove', reason: `must not exceed hardCap${why}` });
    }

    if (this.errors.length > 0) return undefined;
    const money = (atomic: bigint | undefined): string => formatAmount(atomic!, asset!.decimals);
    return {
      owner: owner!,
      name: name!,
      asset: asset!,
      dailyBudget: money(dailyBudget),
      perCallCap: money(perCallCap),
      onPerCallCapExceeded: onPerCallCapExceeded!,
      hardCap: money(hardCap),
      escalateAbove: money(escalateAbove),
      categories: categories!,
      recipients: recipients!,
      agents: agents!,
      vendorRisk: vendorRisk!,
      duplicates: duplicates!,
      cooldowns: cooldowns!,
      rateLimit: rateLimit!,
      escalation: escalation!,
      ...(budgetWindow === 'ROLLING_24H' ? { budgetWindow } : {}),
      maxDeadlineMinutes: maxDeadlineMinutes!,
      expiresAt: expiresAt!,
    };
  }

  private fail(field: string, reason: string): undefined {
    this.errors.push({ field, reason });
    return undefined;
  }

  private address(value: unknown, field: string, required: boolean): Address | undefined {
    if (value === undefined) return required ? this.fail(field, 'is required') : undefined;
    if (typeof value !== 'string' || !ADDRESS_PATTERN.test(value))
      return this.fail(field, 'must be 0x followed by 40 hex characters');
    return value.toLowerCase() as Address;
  }

  private name(value: unknown): string | undefined {
    if (value === undefined) return POLICY_DEFAULTS.name;
    if (
      typeof value !== 'string' ||
      value.length > POLICY_BOUNDS.nameMaxChars ||
      NAME_FORBIDDEN.test(value)
    ) {
      return this.fail(
        'name',
        `must be a string of at most ${POLICY_BOUNDS.nameMaxChars} characters without control characters`,
      );
    }
    return value;
  }

  private asset(value: unknown): NormalisedPolicyRules['asset'] | undefined {
    if (value === undefined) return this.fail('asset', 'is required');
    if (!isPlainObject(value)) return this.fail('asset', 'must be an object');
    const before = this.errors.length;
    rejectUnknownKeys(value, ASSET_FIELDS, 'asset', this.errors);
    const network = value.network;
    if (typeof network !== 'string' || !NETWORK_PATTERN.test(network))
      this.fail('asset.network', 'must be a CAIP-2 network like eip155:196');
    const token = this.address(value.token, 'asset.token', true);
    const symbol = value.symbol;
    if (typeof symbol !== 'string' || !SYMBOL_PATTERN.test(symbol)) {
      this.fail('asset.symbol', `must be 1–${POLICY_BOUNDS.symbolMaxChars} visible characters`);
    }
    const decimals = value.decimals;
    if (!integerInRange(decimals, 0, MAX_ASSET_DECIMALS))
      this.fail('asset.decimals', `must be an integer 0–${MAX_ASSET_DECIMALS}`);
    if (this.errors.length > before) return undefined;
    return {
      network: network as string,
      token: token!,
      symbol: symbol as string,
      decimals: decimals as number,
    };
  }

  private amount(
    value: unknown,
    field: string,
    decimals: number,
    required: boolean,
  ): bigint | undefined {
    if (value === undefined) return required ? this.fail(field, 'is required') : undefined;
    if (typeof value !== 'string')
      return this.fail(field, 'must be a decimal string like "25.00", not a number');
    try {
      return parseDisplayAmount(value, decimals);
    } catch (error) {
      if (!(error instanceof AmountFormatError)) throw error;
      const reason =
        error.reason === 'TOO_MANY_DECIMALS'
          ? `has more fractional digits than the asset's ${decimals} decimals`
          : error.message;
      return this.fail(field, reason);
    }
  }

  private choice<T extends string>(
    value: unknown,
    field: string,
    options: readonly T[],
    fallback: T,
  ): T | undefined {
    if (value === undefined) return fallback;
    return this.member(value, field, options);
  }

  private member<T extends string>(
    value: unknown,
    field: string,
    options: readonly T[],
  ): T | undefined {
    if (typeof value !== 'string' || !options.includes(value as T))
      return this.fail(field, `must be one of ${options.join(', ')}`);
    return value as T;
  }

  private integer(
    value: unknown,
    field: string,
    bounds: { min: number; max: number },
    fallback: number,
  ): number | undefined {
    if (value === undefined) return fallback;
    if (!integerInRange(value, bounds.min, bounds.max))
      return this.fail(field, `must be an integer ${bounds.min}–${bounds.max}`);
    return value;
  }

  private section(
    value: unknown,
    field: string,
    known: ReadonlySet<string>,
  ): Record<string, unknown> | undefined {
    if (value === undefined) return {};
    if (!isPlainObject(value)) return this.fail(field, 'must be an object');
    rejectUnknownKeys(value, known, field, this.errors);
    return value;
  }

  /** Sets, not sequences: lowercased where case carries no meaning, deduplicated and sorted. */
  private list<T extends string>(
    value: unknown,
    field: string,
    maxItems: number,
    readItem: (item: unknown, itemField: string) => T | undefined,
  ): T[] | undefined {
    if (value === undefined) return [];
    if (!Array.isArray(value)) return this.fail(field, 'must be an array');
    if (value.length > maxItems) return this.fail(field, `must have at most ${maxItems} items`);
    const items: T[] = [];
    let valid = true;
    value.forEach((item, index) => {
      const read = readItem(item, fieldPath(field, index));
      if (read === undefined) valid = false;
      else items.push(read);
    });
    if (!valid) return undefined;
    return [...new Set(items)].sort();
  }

  private category(value: unknown, field: string): string | undefined {
    const lowered = typeof value === 'string' ? value.toLowerCase() : undefined;
    if (lowered === undefined || !CATEGORY_PATTERN.test(lowered))
      return this.fail(field, 'must be 1–64 characters of a–z 0–9 . -');
    return lowered;
  }

  private agentId(value: unknown, field: string): string | undefined {
    // Agent ids are case-sensitive: "Bot" and "bot" may be different agents.
    if (typeof value !== 'string' || !AGENT_ID_PATTERN.test(value))
      return this.fail(field, 'must be 1–128 characters of A–Z a–z 0–9 . _ : -');
    return value;
  }

  private categories(value: unknown): NormalisedPolicyRules['categories'] | undefined {
    if (value === undefined) return this.fail('categories', 'is required');
    const section = this.section(value, 'categories', ALLOW_DENY_FIELDS);
    if (section === undefined) return undefined;
    if (section.allow === undefined) return this.fail('categories.allow', 'is required');
    const allow = this.list(
      section.allow,
      'categories.allow',
      POLICY_BOUNDS.categoriesMaxItems,
      (v, f) => this.category(v, f),
    );
    const deny = this.list(
      section.deny,
      'categories.deny',
      POLICY_BOUNDS.categoriesMaxItems,
      (v, f) => this.category(v, f),
    );
    if (allow !== undefined && allow.length === 0)
      return this.fail('categories.allow', 'must list at least one category');
    if (allow === undefined || deny === undefined) return undefined;
    return { allow, deny };
  }

  private allowDeny<T extends string>(
    value: unknown,
    field: string,
    maxItems: number,
    readItem: (item: unknown, itemField: string) => T | undefined,
  ): { allow: T[]; deny: T[] } | undefined {
    const section = this.section(value, field, ALLOW_DENY_FIELDS);
    if (section === undefined) return undefined;
    const allow = this.list(section.allow, fieldPath(field, 'allow'), maxItems, readItem);
    const deny = this.list(section.deny, fieldPath(field, 'deny'), maxItems, readItem);
    if (allow === undefined || deny === undefined) return undefined;
    return { allow, deny };
  }

  private vendorRisk(value: unknown): NormalisedPolicyRules['vendorRisk'] | undefined {
    const section = this.section(value, 'vendorRisk', VENDOR_RISK_FIELDS);
    if (section === undefined) return undefined;
    const defaults = POLICY_DEFAULTS.vendorRisk;
    const minScore = this.integer(
      section.minScore,
      'vendorRisk.minScore',
      POLICY_BOUNDS.minScore,
      defaults.minScore,
    );
    const onBelow = this.choice(
      section.onBelow,
      'vendorRisk.onBelow',
      ['BLOCK', 'ESCALATE'] as const,
      defaults.onBelow,
    );
    const onUnavailable = this.choice(
      section.onUnavailable,
      'vendorRisk.onUnavailable',
      ['ALLOW', 'BLOCK', 'ESCALATE'] as const,
      defaults.onUnavailable,
    );
    if (minScore === undefined || onBelow === undefined || onUnavailable === undefined)
      return undefined;
    return { minScore, onBelow, onUnavailable };
  }

  private duplicates(value: unknown): NormalisedPolicyRules['duplicates'] | undefined {
    const section = this.section(value, 'duplicates', DUPLICATES_FIELDS);
    if (section === undefined) return undefined;
    const defaults = POLICY_DEFAULTS.duplicates;
    const windowMinutes = this.integer(
      section.windowMinutes,
      'duplicates.windowMinutes',
      POLICY_BOUNDS.duplicateWindowMinutes,
      defaults.windowMinutes,
    );
    const keys =
      section.keys === undefined
        ? [...defaults.keys]
        : this.list(section.keys, 'duplicates.keys', POLICY_BOUNDS.duplicateKeysMaxItems, (v, f) =>
            this.member(v, f, DUPLICATE_KEYS),
          );
    // An empty key tuple would make every recent approval a "duplicate" of every intent.
    if (keys !== undefined && keys.length === 0)
      return this.fail(
        'duplicates.keys',
        'must list at least one key (set windowMinutes to 0 to disable)',
      );
    if (windowMinutes === undefined || keys === undefined) return undefined;
    return { windowMinutes, keys };
  }

  private cooldowns(value: unknown): NormalisedPolicyRules['cooldowns'] | undefined {
    const section = this.section(value, 'cooldowns', COOLDOWNS_FIELDS);
    if (section === undefined) return undefined;
    const sameServiceMinutes = this.integer(
      section.sameServiceMinutes,
      'cooldowns.sameServiceMinutes',
      POLICY_BOUNDS.sameServiceMinutes,
      POLICY_DEFAULTS.cooldowns.sameServiceMinutes,
    );
    return sameServiceMinutes === undefined ? undefined : { sameServiceMinutes };
  }

  private rateLimit(value: unknown): NormalisedPolicyRules['rateLimit'] | undefined {
    const section = this.section(value, 'rateLimit', RATE_LIMIT_FIELDS);
    if (section === undefined) return undefined;
    const callsPerHour = this.integer(
      section.callsPerHour,
      'rateLimit.callsPerHour',
      POLICY_BOUNDS.callsPerHour,
      POLICY_DEFAULTS.rateLimit.callsPerHour,
    );
    return callsPerHour === undefined ? undefined : { callsPerHour };
  }

  private escalation(value: unknown): NormalisedPolicyRules['escalation'] | undefined {
    const section = this.section(value, 'escalation', ESCALATION_FIELDS);
    if (section === undefined) return undefined;
    const defaults = POLICY_DEFAULTS.escalation;
    const timeoutMinutes = this.integer(
      section.timeoutMinutes,
      'escalation.timeoutMinutes',
      POLICY_BOUNDS.escalationTimeoutMinutes,
      defaults.timeoutMinutes,
    );
    const channels =
      section.channels === undefined
        ? [...defaults.channels]
        : this.list(
            section.channels,
            'escalation.channels',
            POLICY_BOUNDS.escalationChannelsMaxItems,
            (v, f) => this.member(v, f, ESCALATION_CHANNELS),
          );
    // With no channel an escalation could reach nobody and would only ever time out.
    if (channels !== undefined && channels.length === 0)
      return this.fail('escalation.channels', 'must list at least one channel');
    if (timeoutMinutes === undefined || channels === undefined) return undefined;
    return { timeoutMinutes, channels };
  }

  private expiresAt(value: unknown): string | null | undefined {
    if (value === undefined || value === null) return POLICY_DEFAULTS.expiresAt;
    const parsed = parseIsoTimestamp(value);
    if (!parsed.ok) return this.fail('expiresAt', parsed.reason);
    return formatIsoSeconds(parsed.unixSeconds);
  }
}
